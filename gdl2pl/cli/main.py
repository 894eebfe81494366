"""The ``gdl2pl`` command line. Each subcommand is a small function; errors in the game
become one-line messages and an exit status, never a traceback.

Exit status: 0 success, 1 the game has errors (or a match failed), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from collections.abc import Sequence

from gdl2pl.cli.engine_option import add_engine
from gdl2pl.cli.errors import reason
from gdl2pl.cli.errors import run_guarded
from gdl2pl.command_checks import add_accept_errors
from gdl2pl.command_checks import checked_game
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.load import SYNTAXES
from gdl2pl.shown import shown
from gdl2pl.syntax import Pos
from gdl2pl.written import ANSWER_SYNTAXES

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def _command(name: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = fn
        return fn

    return register


def _add_game_reading(s: argparse.ArgumentParser, engine: str = "prolog") -> None:
    """The options of a command that plays a game: how to read it (--syntax), the engine
    that runs it (--engine, by default ``engine``) and whether its static errors are let
    through."""
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")
    add_engine(s, default=engine)
    add_accept_errors(s)


def _add_answer_syntax(s: argparse.ArgumentParser, what: str) -> None:
    """``--answer-syntax``: the syntax the output quotes the game in (``what`` it does)."""
    s.add_argument(
        "--answer-syntax",
        choices=ANSWER_SYNTAXES,
        help=f"{what} (default: the syntax each game is written in)",
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gdl2pl", description="GDL reasoner on SWI-Prolog.")
    p.add_argument("--version", action="version", version=f"gdl2pl {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("check", help="parse a game and report static errors and warnings")
    s.add_argument("game", nargs="+", help="game file(s) (.kif or infix .gdl/.hrf)")
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")
    _add_answer_syntax(s, "quote terms and rules in this syntax")

    s = sub.add_parser("convert", help="print a game in the other syntax")
    s.add_argument("game")
    s.add_argument("--to", choices=["kif", "infix"], required=True)
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")

    s = sub.add_parser("translate", help="print the SWI-Prolog module a game translates to")
    s.add_argument("game")
    s.add_argument("--module", help="module name (default: game)")
    s.add_argument("--syntax", choices=SYNTAXES, default="auto")
    s.add_argument(
        "--standalone",
        action="store_true",
        help="a module that loads in plain SWI-Prolog (swipl FILE), with no gdl2pl runtime: "
        "true/1 and does/2 as dynamic facts, and helpers to play (see its header)",
    )
    s.add_argument("-o", "--output", metavar="OUT", help="write the module to OUT, not stdout")
    _add_answer_syntax(s, "quote each rule in the comment above its clause in this syntax")
    add_accept_errors(s)

    s = sub.add_parser("play", help="play a random match, printing every state")
    s.add_argument("game")
    s.add_argument("--seed", type=int)
    s.add_argument("--max-steps", type=_positive, default=1000)
    _add_game_reading(s)

    s = sub.add_parser("simulate", help="random playouts inside the engine; prints playouts/s")
    s.add_argument("game")
    s.add_argument("-n", type=_positive, default=1000, help="number of playouts (>= 1)")
    s.add_argument(
        "--max-depth",
        type=_positive,
        default=5000,
        help="steps after which a playout is cut short (default 5000)",
    )
    s.add_argument("--seed", type=int)
    _add_game_reading(s, engine="auto")

    s = sub.add_parser("trace", help="random matches as JSON lines (the reference format)")
    s.add_argument("game")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("-n", type=_positive, default=1, help="number of matches (>= 1)")
    s.add_argument("--max-steps", type=_positive, default=10_000)
    _add_game_reading(s)

    s = sub.add_parser("replay", help='replay matches read from stdin ({"moves": [[...]]} lines)')
    s.add_argument("game")
    _add_game_reading(s)

    for plugin in (
        "gdl2pl.cli.network",
        "gdl2pl.analysis.commands",
        "gdl2pl.verify.commands",
        "gdl2pl.studio.commands",
    ):
        for name, handler in importlib.import_module(plugin).add_subcommands(sub).items():
            _COMMANDS[name] = _guarded_plugin(handler)
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    try:
        return version("gdl2pl")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _positive(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


@_command("check")
def _check(args: argparse.Namespace) -> int:
    """Print the findings of each game, one per line; 1 if any error, 2 on I/O errors. A
    text without any role is a plain logic program: a note says so, and the findings only
    a game has (no legal, goal, terminal) are left out."""
    from gdl2pl.check import PROGRAM_NOTE
    from gdl2pl.check import as_program
    from gdl2pl.check import format_finding
    from gdl2pl.pipeline import compile_game

    status = 0
    for path in args.game:
        try:
            compiled = compile_game(
                path,
                syntax=args.syntax,
                name=path,
                check=True,
                translate=False,
                answer_syntax=args.answer_syntax,
            )
            findings = list(compiled.findings)
        except GdlSyntaxError as e:
            print(f"{shown(_at(e.pos, path), None)}: error: syntax error: "
                  f"{shown(e.message, None)}")
            status = max(status, 1)
            continue
        except (OSError, UnicodeDecodeError) as e:
            print(f"{shown(path, None)}: error: cannot read: {shown(reason(e), None)}",
                  file=sys.stderr)
            status = 2
            continue
        except Exception as e:  # a bug: say so in one line, never a traceback
            print(f"{shown(path, None)}: internal error: {type(e).__name__}: "
                  f"{shown(str(e), None)}", file=sys.stderr)
            status = 2
            continue
        program = as_program(findings)
        if program is not None:
            print(f"{path}: note: {PROGRAM_NOTE} (read as a logic program, as model reads it; "
                  "a game needs role, legal, goal and terminal)")
            findings = program
        for f in findings:
            print(shown(format_finding(f, path), None))  # the game's text, escaped
        if any(f.is_error for f in findings):
            status = max(status, 1)
    return status


def _at(pos: Pos | None, path: str) -> str:
    if pos is None:
        return path
    return str(pos if pos.file else Pos(pos.line, pos.column, path))


def _convert(args: argparse.Namespace) -> int:
    """Print the game in the syntax ``--to``, symbols spelled one way (``normalize_case``):
    0 done, 1 syntax error (``file:line:col: error: ...`` and an excerpt on stderr), 2 I/O."""
    from gdl2pl.infix import print_infix
    from gdl2pl.kif import print_kif
    from gdl2pl.pipeline import compile_game

    d = compile_game(args.game, syntax=args.syntax, translate=False).normalized
    try:
        text = print_infix(d) if args.to == "infix" else print_kif(d)
    except ValueError as e:
        print(f"{shown(args.game, None)}: error: cannot write it in {args.to}: "
              f"{shown(str(e), None)}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _guarded_plugin(handler: Command) -> Command:
    """A subcommand of another package, its errors reported as every command's are; a
    handler may set ``error_status`` for errors in its input (default 1)."""
    status = int(getattr(handler, "error_status", 1))
    return lambda args: run_guarded(handler, args, status)


def _reasoner(name: str) -> Command:
    """A subcommand that runs on SWI-Prolog (imported only when used)."""

    def run(args: argparse.Namespace) -> int:
        from gdl2pl.bridge.swipl import run_interruptibly
        from gdl2pl.cli import reasoner

        command = getattr(reasoner, f"{name}_command")

        def checked_command(args: argparse.Namespace) -> int:
            checked_game(args)
            return int(command(args))

        return run_interruptibly(lambda: run_guarded(checked_command, args))

    return run


for _name in ("translate", "play", "simulate", "trace", "replay"):
    _COMMANDS[_name] = _reasoner(_name)
_COMMANDS["convert"] = lambda args: run_guarded(_convert, args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 on --help
        return int(e.code or 0)
    try:
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("gdl2pl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
