"""One way to load a game on either engine: ``load_machine(path, engine=...)``.

``engine="prolog"`` is the reasoner (``gdl2pl.bridge.StateMachine``), the definition of
every game's meaning; ``"compiled"`` the network grounded from it (``CompiledMachine``,
grounded by a worker process within its budget before the call returns), raising
``CompileRefusedError`` (or its ``GroundingBudgetError``) when the game cannot be
compiled; ``"auto"`` the reasoner at once and the network as soon as it is built in
the background (``AutoMachine``). Every machine has ``engine_choice``, an
``EngineChoice`` saying which engine answers and why.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Literal

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import EngineChoice
from gdl2pl.contract import GameMachine
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.shown import shown
from gdl2pl.syntax import Description

from .auto import AutoMachine
from .auto import compiled_reason
from .errors import CompileRefusedError
from .ground import GroundingBudget
from .machine import CompiledMachine

Engine = Literal["auto", "prolog", "compiled"]
ENGINES: tuple[str, ...] = ("auto", "prolog", "compiled")

log = logging.getLogger("gdl2pl.compiled")

__all__ = ["ENGINES", "Engine", "EngineChoice", "load_description", "load_machine",
           "machine_from_text", "on_engine"]


def load_description(
    d: Description,
    engine: Engine = "auto",
    *,
    name: str | None = None,
    case_sensitive: bool = False,
    budget: GroundingBudget | None = None,
) -> GameMachine:
    """A machine for ``d`` on ``engine`` (see the module's docstring)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    prolog = StateMachine(d, name=name, case_sensitive=case_sensitive)
    return on_engine(prolog, engine, budget=budget)


def on_engine(
    prolog: StateMachine,
    engine: Engine = "auto",
    *,
    budget: GroundingBudget | None = None,
) -> GameMachine:
    """The game ``prolog`` loaded on ``engine``: ``prolog`` itself; the
    compiled engine grounded from it ("compiled": ``CompileRefusedError`` when it cannot
    be, ``prolog`` then closed); or ``AutoMachine``, on ``prolog`` at once and on the
    network once it is built ("auto"). The machine returned owns ``prolog``."""
    if engine not in ENGINES:
        prolog.close()
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "prolog":
        prolog.engine_choice = EngineChoice("prolog", "asked for")
        return prolog
    if engine == "auto":
        try:
            return AutoMachine(prolog, budget)
        except Exception as e:  # e.g. a refused rule, no worker process: the reasoner plays
            why = shown(str(e), 1000)  # the game's rules, from whoever wrote them
            prolog.engine_choice = EngineChoice("prolog", f"the network cannot be built: {why}")
            log.warning("%s: the reasoner plays it: %s", shown(prolog.name), why)
            return prolog
    start = time.monotonic()
    try:
        compiled = CompiledMachine.from_machine(prolog, budget)
    except CompileRefusedError as e:
        prolog.close()
        raise type(e)(
            f"{e}; engine='compiled' has no other engine to fall back on "
            "(engine='auto' plays it on the reasoner)"
        ) from None
    except BaseException:
        prolog.close()
        raise
    compiled.engine_choice = EngineChoice(
        "compiled", compiled_reason(compiled, time.monotonic() - start)
    )
    log.info("%s: the compiled engine plays it (%s)", shown(prolog.name),
             compiled.engine_choice.reason)
    return compiled


def load_machine(
    source: str | os.PathLike[str],
    engine: Engine = "auto",
    *,
    syntax: Syntax = "auto",
    case_sensitive: bool = False,
    budget: GroundingBudget | None = None,
) -> GameMachine:
    """The game in the file ``source`` on ``engine`` ("auto", "prolog" or "compiled")."""
    p = Path(source)
    d = read_game(p, syntax=syntax)
    return load_description(d, engine, name=p.name, case_sensitive=case_sensitive, budget=budget)


def machine_from_text(
    text: str,
    engine: Engine = "auto",
    *,
    syntax: Syntax = "auto",
    name: str | None = None,
    case_sensitive: bool = False,
    budget: GroundingBudget | None = None,
) -> GameMachine:
    """The game written in ``text`` on ``engine``."""
    d = parse_game(text, syntax=syntax, file=name)
    return load_description(d, engine, name=name, case_sensitive=case_sensitive, budget=budget)
