"""The ``gdl2pl`` command line: the top layer, which may import every package below it.

``main(argv)`` runs it and returns the exit status (0 success, 1 the game or a match
failed, 2 usage, set-up or I/O error). Subcommands: ``main.py`` (parser, front-end
commands, error handling), ``reasoner.py`` (commands that run a game on SWI-Prolog),
``network.py`` (``serve``, ``match``); the analysis and verify packages add theirs.
"""

from gdl2pl.cli.main import main

__all__ = ["main"]
