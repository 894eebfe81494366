"""One way to load a game on either engine: ``load_machine(path, engine=...)``.

``engine="prolog"`` is the reasoner (``gdl2pl.bridge.StateMachine``), the definition of
every game's meaning; ``"compiled"`` the network grounded from it (``CompiledMachine``),
raising ``CompileRefusedError`` (or its ``GroundingBudgetError``) when the game cannot
be compiled; ``"auto"`` the compiled engine when grounding fits its budget, else the
Prolog engine, logging which and why. Either machine has ``engine_choice``, an
``EngineChoice`` saying which engine answers and why.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import GameMachine
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.syntax import Description

from .errors import CompileRefusedError
from .ground import GroundingBudget
from .machine import CompiledMachine

Engine = Literal["auto", "prolog", "compiled"]
ENGINES: tuple[str, ...] = ("auto", "prolog", "compiled")

log = logging.getLogger("gdl2pl.compiled")


@dataclass(frozen=True)
class EngineChoice:
    """Which engine answers for a game, and why (a sentence)."""

    engine: str
    reason: str

    def __str__(self) -> str:
        return f"{self.engine} engine: {self.reason}"


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
    return on_engine(prolog, d, engine, case_sensitive=case_sensitive, budget=budget)


def on_engine(
    prolog: StateMachine,
    d: Description,
    engine: Engine = "auto",
    *,
    case_sensitive: bool = False,
    budget: GroundingBudget | None = None,
) -> GameMachine:
    """The game ``prolog`` loaded (from ``d``) on ``engine``: ``prolog`` itself, or the
    compiled engine grounded from it (which closes ``prolog`` when it is closed). With
    "compiled", ``CompileRefusedError`` (``prolog`` closed) when it cannot be compiled;
    with "auto", ``prolog`` then, logging why."""
    if engine not in ENGINES:
        prolog.close()
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "prolog":
        prolog.engine_choice = EngineChoice("prolog", "asked for")  # type: ignore[attr-defined]
        return prolog
    try:
        compiled = CompiledMachine(prolog, d, case_sensitive, budget)
    except CompileRefusedError as e:
        if engine == "compiled":
            prolog.close()
            raise type(e)(
                f"{e}; engine='compiled' has no other engine to fall back on "
                "(engine='auto' plays it on the reasoner)"
            ) from None
        choice = EngineChoice("prolog", str(e))
        prolog.engine_choice = choice  # type: ignore[attr-defined]
        log.warning("%s: the Prolog engine plays it: %s", prolog.name, e)
        return prolog
    except BaseException:
        prolog.close()
        raise
    net = compiled.network
    reason = (
        f"grounded in {compiled.ground.seconds:.2f} s: {net.n_rules:,} ground rules, "
        f"{net.n_atoms:,} atoms ({net.n_fluents:,} fluents, {net.n_moves:,} moves)"
    )
    compiled.engine_choice = EngineChoice("compiled", reason)  # type: ignore[assignment]
    log.info("%s: the compiled engine plays it (%s)", prolog.name, reason)
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
