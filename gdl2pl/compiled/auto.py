"""``engine="auto"``: a game answered by the reasoner at once, and by its network as soon
as a worker process has grounded it (``AutoMachine``).

Loading never waits for grounding: the machine answers on the Prolog engine from the
start while ``NetworkBuild`` grounds the game in the background, within its budget (by
default ``AUTO_SECONDS``, a start clock's, longer than a waiting caller's);
when the network is in (built and tuned, still within the budget) the machine checks
it and switches to the compiled engine by itself, between two calls. States pass freely
between the engines (a ``MachineState`` is its set of fluents, whichever engine made
it), so a caller in the middle of a search sees nothing but the speed change. If the
game cannot be compiled, for any reason at all, the reasoner goes on answering and the
log says why; ``engine_choice`` always says which engine answers now and why.

The check before the switch (``gdl2pl.compiled.agreement``): the last ``RECENT`` states
the reasoner answered, then a few short random plays, are asked of both engines, for at
most ``CHECK_SECONDS`` (in the background too: the reasoner answers meanwhile). At the
first difference the reasoner stays, for good, and the log and ``engine_choice`` say
what differed, in the game's words.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from fractions import Fraction

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import DEFAULT_MAX_DEPTH
from gdl2pl.contract import ConsistentStream
from gdl2pl.contract import EngineChoice
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.contract import Step
from gdl2pl.contract import SymbolStep
from gdl2pl.contract.game_machine import TermText
from gdl2pl.contract.state import shown
from gdl2pl.syntax import Term

from .agreement import agreement
from .build import NetworkBuild
from .ground import GroundingBudget
from .machine import CompiledMachine
from .reasoner_part import ReasonerPart

log = logging.getLogger("gdl2pl.compiled")

#: The seconds auto's background grounding may take when no budget is given: a GGP
#: start clock's (60 s is a common one). Nobody waits for it, the reasoner answering
#: meanwhile; so it may take longer than the 30 s of ``GroundingBudget``, which bound
#: ``engine="compiled"``, where the caller does wait.
AUTO_SECONDS = 60.0

#: How many of the states the reasoner answered last are checked on the network.
RECENT = 32
#: The most seconds the check before the switch may take (it stops there, checked or not).
CHECK_SECONDS = 3.0
#: How wide a game's name and a reason are quoted in the log.
LOG_WIDTH = 400


def compiled_reason(m: CompiledMachine, seconds: float) -> str:
    """Why the compiled engine answers: what was built, in how long."""
    net = m.network
    return (
        f"grounded in {seconds:.2f} s: {net.n_rules:,} ground rules, {net.n_atoms:,} atoms "
        f"({net.n_fluents:,} fluents, {net.n_moves:,} moves)"
    )


class AutoMachine(ReasonerPart, GameMachine):
    """The game ``prolog`` loaded, on the reasoner now and on its network once built
    (see the module's docstring), grounded within ``budget`` from the flat rules
    ``prolog`` was translated from. ``close()`` stops the build and closes the engines."""

    engine = "auto"

    def __init__(
        self,
        prolog: StateMachine,
        budget: GroundingBudget | None = None,
    ) -> None:
        self.prolog = prolog
        self.name = prolog.name
        self.translation = prolog.translation
        self._engine: GameMachine = prolog
        self._choice = EngineChoice("prolog", "the network is being grounded in the background")
        self._lock = threading.Lock()
        self._closed = False
        self._seed: int | None = None
        self._done = threading.Event()
        # symbol ids (step_symbols): each engine's id -> this machine's, and the terms
        self._symbol_maps: dict[int, list[int]] = {}
        self._symbol_ids: dict[Term, int] = {}
        self._symbols: list[Term] = []
        # the states the reasoner answered last, until the network is checked (None after)
        self._answered: deque[MachineState] | None = deque(maxlen=RECENT)
        self._build = NetworkBuild(  # the reasoner's flat rules: the game flattened once
            prolog.flat_rules, prolog.name, prolog.raw_roles,
            budget=budget or GroundingBudget(seconds=AUTO_SECONDS),
        ).start()
        self._thread = threading.Thread(
            target=self._switch, name=f"gdl2pl-ground {self.name}", daemon=True
        )
        self._thread.start()

    def _switch(self) -> None:
        """The background thread: wait for the network, check it, then answer with it."""
        name = shown(self.name, LOG_WIDTH)
        try:
            network = self._build.wait()
            compiled = CompiledMachine(self.prolog, network, deadline=self._build.deadline)
            seconds = time.monotonic() - self._build.started
            with self._lock:
                answered = list(self._answered or ())
                self._answered = None
            check = agreement(compiled, self.prolog, reversed(answered),
                              deadline=time.monotonic() + CHECK_SECONDS,
                              stop=lambda: self._closed)
            with self._lock:
                if self._closed:
                    return
                if check.difference:
                    self._choice = EngineChoice(
                        "prolog", f"the network answers otherwise than the reasoner: "
                        f"{check.difference}")
                else:
                    reason = compiled_reason(compiled, seconds)
                    cut = "" if check.complete else f" in {CHECK_SECONDS:g} s"
                    reason += f"; answers as the reasoner in {check.states} states checked{cut}"
                    choice = EngineChoice("compiled", reason)
                    compiled.engine_choice = choice
                    if self._seed is not None:
                        compiled.evaluator.seed(self._seed)
                    self._engine, self._choice = compiled, choice
            if check.difference:
                log.warning("%s: the reasoner plays it: the network answers otherwise: %s",
                            name, check.difference)
            else:
                log.info("%s: the compiled engine plays it (%s)", name, self._choice.reason)
        except Exception as e:  # whatever failed, the reasoner goes on playing
            with self._lock:
                self._answered = None
                if not self._closed:
                    self._choice = EngineChoice("prolog", str(e))
            if not self._closed:
                log.warning("%s: the reasoner plays it: %s", name, shown(str(e), LOG_WIDTH))
        finally:
            self._done.set()

    def _on(self, state: MachineState) -> GameMachine:
        """The engine of the moment, for a question about ``state`` (kept for the check
        while the reasoner answers)."""
        engine = self._engine
        if engine is self.prolog:
            with self._lock:
                if self._answered is not None:
                    self._answered.append(state)
        return engine

    @property
    def engine_choice(self) -> EngineChoice:
        """Which engine answers now, and why."""
        return self._choice

    @engine_choice.setter
    def engine_choice(self, choice: EngineChoice) -> None:
        raise AttributeError("an auto machine's engine is chosen by its build")

    def wait_for_engine(self, timeout: float | None = None) -> EngineChoice:
        """Wait (at most ``timeout`` seconds) until the background build is over: the
        engine that answers from then on."""
        self._done.wait(timeout)
        return self._choice

    @property
    def engine_now(self) -> GameMachine:
        """The machine answering now (the Prolog or the compiled engine)."""
        return self._engine

    def close(self) -> None:
        """Stop the build (its worker is killed) and close the engines (idempotent)."""
        with self._lock:
            self._closed = True
            engine = self._engine
            if engine is self.prolog and not self._done.is_set():
                self._choice = EngineChoice("prolog", "closed before the network came in")
        self._build.cancel()
        engine.close()
        self.prolog.close()

    def __repr__(self) -> str:
        return f"AutoMachine({self.name!r}, {self._choice})"

    # -- the contract, answered by the engine of the moment ------------------------------

    @property
    def roles(self) -> tuple[Term, ...]:
        return self.prolog.roles

    @property
    def initial_state(self) -> MachineState:
        return self._engine.initial_state

    def term(self, kif: Term | str) -> Term:
        return self.prolog.term(kif)

    def role_index(self, role: Term | str) -> int:
        return self._engine.role_index(role)

    def role_moves(self, state: MachineState, index: int) -> list[Term]:
        return self._on(state).role_moves(state, index)

    def legal_moves(self, state: MachineState, role: Term | str) -> list[Term]:
        return self._on(state).legal_moves(state, role)

    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        return self._on(state).all_legal_moves(state)

    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        return self._on(state).next_state(state, joint_move)

    def step(self, state: MachineState, joint_move: Sequence[Term | str]) -> Step:
        return self._on(state).step(state, joint_move)

    def step_symbols(self, state: MachineState, joint_move: Sequence[Term | str]) -> SymbolStep:
        """The step of the engine of the moment, in this machine's own symbol ids:
        an id stands for one fluent or move for the machine's life, whichever engine
        answered when it was handed out (each engine's ids are mapped on first sight)."""
        engine = self._on(state)
        s = engine.step_symbols(state, joint_move)
        ids = self._symbol_map(engine)
        own = self._own_id
        return SymbolStep(
            s.state,
            s.terminal,
            [[ids[i] if i < len(ids) and ids[i] >= 0 else own(engine, i) for i in ms]
             for ms in s.legal],
            s.goal_values,
            [ids[i] if i < len(ids) and ids[i] >= 0 else own(engine, i) for i in s.added],
            [ids[i] if i < len(ids) and ids[i] >= 0 else own(engine, i) for i in s.removed],
        )

    def _symbol_map(self, engine: GameMachine) -> list[int]:
        maps = self._symbol_maps
        ids = maps.get(id(engine))
        if ids is None:
            ids = maps[id(engine)] = []
        return ids

    def _own_id(self, engine: GameMachine, i: int) -> int:
        """This machine's id for ``engine``'s symbol id ``i`` (made on first sight)."""
        with self._lock:
            ids = self._symbol_map(engine)
            if i >= len(ids):
                ids.extend([-1] * (i + 1 - len(ids)))
            if ids[i] < 0:
                term = engine.symbol(i)
                own = self._symbol_ids.get(term)
                if own is None:
                    own = self._symbol_ids[term] = len(self._symbols)
                    self._symbols.append(term)
                ids[i] = own
            return ids[i]

    def symbol(self, symbol_id: int) -> Term:
        """The fluent or move this machine's symbol id stands for."""
        if symbol_id.__class__ is not int:
            raise TypeError(f"a symbol id is an int, not {symbol_id!r}")
        if not 0 <= symbol_id < len(self._symbols):
            raise ValueError(f"{self.name}: no symbol has the id {symbol_id}")
        return self._symbols[symbol_id]

    def expand(self, state: MachineState) -> list[tuple[tuple[Term, ...], Step]]:
        return self._on(state).expand(state)

    def is_terminal(self, state: MachineState) -> bool:
        return self._on(state).is_terminal(state)

    def goal_values(self, state: MachineState) -> list[list[str]]:
        return self._on(state).goal_values(state)

    def state_info(
        self, state: MachineState
    ) -> tuple[bool, list[list[Term]], list[list[int | str]]]:
        return self._on(state).state_info(state)

    def depth_charge(
        self, state: MachineState, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[MachineState, int]:
        return self._on(state).depth_charge(state, max_depth)

    def playouts(
        self, state: MachineState, n: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[list[list[tuple[int, int]]], int]:
        return self._on(state).playouts(state, n, max_depth)

    def seed(self, seed: int) -> None:
        """Seed the engine of the moment (and the network's, when it comes in)."""
        with self._lock:
            self._seed = int(seed)
            engine = self._engine
        engine.seed(seed)

    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        return self._on(state).percepts(state, joint_move, role)

    def chance_outcomes(self, state: MachineState) -> list[tuple[Term, Fraction]]:
        return self._on(state).chance_outcomes(state)

    def consistent_children(
        self,
        state: MachineState,
        role: TermText,
        move: TermText,
        percepts: Iterable[TermText],
        *,
        rng: random.Random | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> ConsistentStream:
        """The stream of the engine of the moment, which answers it to its end."""
        return self._on(state).consistent_children(state, role, move, percepts, rng=rng, stop=stop)
