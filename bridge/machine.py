"""The GGP state machine on SWI-Prolog: the janus-backed ``GameMachine``.

>>> sm = StateMachine.from_file("ticTacToe.kif")
>>> s = sm.initial_state
>>> while not sm.is_terminal(s):
...     s = sm.next_state(s, sm.random_joint_move(s))
>>> sm.goals(s)
[100, 0]

It loads a translated game into SWI-Prolog, installs states there, asks the runtime and
decodes its answers; the contract and the behaviour every engine shares are
``gdl2pl.contract``'s. Every call goes to Prolog through a fixed predicate of
``prolog/gdl_runtime.pl`` with its data as arguments (never as query text).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from gdl2pl.contract import MachineState
from gdl2pl.contract.consistent import BatchTest
from gdl2pl.contract.consistent import JointMoves
from gdl2pl.contract.game_machine import DEFAULT_MAX_DEPTH
from gdl2pl.contract.game_machine import GameMachine
from gdl2pl.contract.game_machine import Step
from gdl2pl.contract.game_machine import SymbolStep
from gdl2pl.contract.game_machine import check_max_depth
from gdl2pl.contract.game_machine import check_playout_count
from gdl2pl.contract.game_machine import goal_value
from gdl2pl.contract.state import Form
from gdl2pl.contract.state import TermCache
from gdl2pl.contract.state import changed
from gdl2pl.contract.state import check_same_game
from gdl2pl.contract.state import freeze
from gdl2pl.contract.state import ground_term
from gdl2pl.contract.state import recalled
from gdl2pl.contract.state import remember
from gdl2pl.contract.state import shown
from gdl2pl.flatten import FlatRule
from gdl2pl.kif import kif_term
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.pipeline import compile_game
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term
from gdl2pl.translate import Translation

from .errors import GameClosedError
from .errors import GameError
from .errors import QueryInterrupted
from .errors import TransitionDefinitionError
from .errors import reasoner_error
from .pyform import goal_values
from .swipl import RUNTIME_MODULE
from .swipl import attach_thread
from .swipl import interrupt
from .swipl import prolog_thread_id
from .swipl import runtime

_CURRENT = "="  # tells the runtime: the state this thread installed last
_module_ids = itertools.count(1)


def _successor(key: frozenset[Form], added: list[Any], removed: list[Any]) -> frozenset[Form]:
    """The fluents of a state after removing and adding fluents in janus' form."""
    return changed(key, [freeze(f) for f in added], [freeze(f) for f in removed])


class _Symbols:
    """The fluents and moves the runtime names by symbol id in the answers of
    gdl_step/gdl_expand: id -> hashable janus form, id -> term (interned by
    ``TermCache``), janus form -> id. Learnt on first sight (one gdl_symbols or
    gdl_symbol_ids call); a game has a bounded number of them. Entries are only ever
    added, so threads may share it."""

    def __init__(
        self,
        terms: TermCache,
        fetch: Callable[[list[int]], list[Any]],
        name: Callable[[list[Form]], Any],
    ) -> None:
        self.raw: dict[int, Form] = {}
        self.term: dict[int, Term] = {}
        self.id_of: dict[Form, int] = {}
        self._terms = terms
        self._fetch = fetch
        self._name = name
        self._full = False

    def state(self, key: frozenset[Form]) -> Any:
        """A state as the runtime takes it: ("ids", [symbol id, ...]), or the list of
        its fluents when the game has too many symbols to name more."""
        id_of = self.id_of
        try:
            return ("ids", [id_of[r] for r in key])
        except KeyError:
            if self._full:
                return list(key)
        unknown = [r for r in key if r not in id_of]
        ids = self._name(unknown)
        if ids == "full":
            self._full = True
            return list(key)
        for r, i in zip(unknown, ids, strict=True):
            if i not in self.raw:
                self.term[i] = self._terms.term(r)
                self.raw[i] = r
            id_of[r] = i
        return ("ids", [id_of[r] for r in key])

    def learn(self, ids: Iterable[int]) -> None:
        """Make sure every id in ``ids`` is known."""
        missing = sorted({i for i in ids if i not in self.raw})
        if missing:
            for i, py in zip(missing, self._fetch(missing), strict=True):
                raw = freeze(py)
                self.term[i] = self._terms.term(raw)
                self.raw[i] = raw
                self.id_of[raw] = i

    def decode(
        self, added: list[int], removed: list[int], legal: list[list[int]]
    ) -> tuple[list[Form], list[Form], tuple[tuple[Term, ...], ...]]:
        """The fluents added and removed (janus form) and the legal moves per role
        (terms) that the ids stand for."""
        try:
            raw, term = self.raw, self.term
            return (
                [raw[i] for i in added],
                [raw[i] for i in removed],
                tuple([tuple([term[i] for i in ms]) for ms in legal]),
            )
        except KeyError:
            self.learn(itertools.chain(added, removed, *legal))
            return self.decode(added, removed, legal)


class StateMachine(GameMachine):
    """A loaded game. Create with ``from_file``, ``from_text`` or ``from_description``;
    ``close()`` (or a ``with`` block) unloads it from Prolog."""

    def __init__(
        self,
        description: Description,
        name: str | None = None,
        case_sensitive: bool = False,
        inference_limit: int = 100_000_000,
        compiling: AbstractContextManager[object] | None = None,
    ) -> None:
        """Load ``description``. GDL symbols are case-insensitive (``CELL`` is ``cell``,
        reported in the file's first spelling); ``case_sensitive=True`` keeps symbols
        that differ in case apart, as ggp-base does by default. Every query may use at
        most ``inference_limit`` Prolog inferences (a playout ten times that); beyond it
        ``ReasonerError`` is raised, so no game can make a call run forever. The Python
        compilation runs inside ``compiling`` when given (a caller's way to make it
        cancellable from another thread)."""
        self._janus = runtime()
        self.name = name or "game"
        self.module = f"gdl_game_{next(_module_ids)}_{os.getpid()}"
        with compiling if compiling is not None else nullcontext():
            compiled = compile_game(
                description, name=self.name, module=self.module, case_sensitive=case_sensitive
            )
        self._terms = TermCache(compiled.symbols.term, name=self.name)
        self.translation: Translation = compiled.translation
        self._flat_rules = compiled.rules
        self._tls = threading.local()
        self._closed = False
        # queries under way, by Python thread -> (Prolog thread id, how many nested):
        # close() interrupts them and the last one to end unloads the game
        self._use = threading.Condition()
        self._running: dict[int, list[int]] = {}
        self._unloaded = False
        raw_roles = self._call("gdl_load", self.translation.text)
        self._call("gdl_set_limit", inference_limit)
        self._raw_roles = tuple(freeze(r) for r in raw_roles)
        # a game's signature (its roles and fluent stores) tells its states from another
        # game's, and lets the same game written twice (KIF and infix) share states
        self._terms.game = (self._raw_roles, frozenset(self.translation.stores), case_sensitive)
        self._roles: tuple[Term, ...] = tuple(self._terms.term(r) for r in self._raw_roles)
        self._initial = MachineState(map(freeze, self._call("gdl_initial_state")), self._terms)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], syntax: Syntax = "auto", case_sensitive: bool = False
    ) -> StateMachine:
        """Load a game file (KIF or infix, detected from its content and extension)."""
        p = Path(path)
        return cls(read_game(p, syntax=syntax), name=p.name, case_sensitive=case_sensitive)

    @classmethod
    def from_text(
        cls,
        text: str,
        syntax: Syntax = "auto",
        name: str | None = None,
        case_sensitive: bool = False,
    ) -> StateMachine:
        """Load a game from its text (``syntax``: "auto", "kif" or "infix")."""
        return cls(parse_game(text, syntax=syntax, file=name), name, case_sensitive)

    @classmethod
    def from_description(
        cls,
        d: Description,
        name: str | None = None,
        case_sensitive: bool = False,
        compiling: AbstractContextManager[object] | None = None,
    ) -> StateMachine:
        return cls(d, name, case_sensitive, compiling=compiling)

    #: How long close() waits for queries of other threads to stop once interrupted.
    CLOSE_WAIT = 5.0

    def close(self) -> None:
        """Unload the game from Prolog and return its memory. Idempotent and safe while
        other threads query this machine: their queries are interrupted (they raise
        ``GameClosedError``), the game is unloaded once the last of them has ended, and
        every later query raises ``GameClosedError``."""
        with self._use:
            if self._closed:
                return
            self._closed = True
            me = threading.get_ident()
            others = [p for t, (p, _) in self._running.items() if t != me]
        for prolog_id in others:
            with contextlib.suppress(Exception):
                interrupt(prolog_id)
        with self._use:
            self._use.wait_for(lambda: not self._running, timeout=self.CLOSE_WAIT)
            if self._running:
                return  # a query still runs: the last one to end unloads (using)
        self._unload()

    def _unload(self) -> None:
        with self._use:
            if self._unloaded:
                return
            self._unloaded = True
        with contextlib.suppress(Exception):  # best effort, e.g. at interpreter exit
            self._janus_call("gdl_unload", self.module)

    @contextlib.contextmanager
    def using(self) -> Iterator[None]:
        """Hold the game loaded while the calling thread queries it (every call of the
        state machine does; code that calls the runtime on ``self.module`` itself wraps
        its calls in this). Raises ``GameClosedError`` once ``close()`` has begun."""
        me = self._enter()
        try:
            yield
        finally:
            self._leave(me)

    def _enter(self) -> int:
        """Count a query of this thread as running (see ``using``); its thread id."""
        me = threading.get_ident()
        prolog_id = prolog_thread_id()
        with self._use:
            if self._closed:
                raise GameClosedError(f"{self.name}: the state machine has been closed")
            entry = self._running.get(me)
            if entry is None:
                self._running[me] = [prolog_id, 1]
            else:
                entry[1] += 1
        return me

    def _leave(self, me: int) -> None:
        """The query of ``_enter`` ended; the last one after ``close()`` unloads."""
        with self._use:
            entry = self._running[me]
            entry[1] -= 1
            if entry[1] == 0:
                del self._running[me]
            last = self._closed and not self._running
            if self._closed:
                self._use.notify_all()
        if last:
            self._unload()

    # -- Prolog calls -------------------------------------------------------------------

    def _call(self, predicate: str, *args: Any) -> Any:
        """Call a runtime predicate on this game; the one path by which a game talks to
        Prolog. On any failure this thread's installed state is forgotten (the runtime
        forgets it too), so Python and Prolog never disagree about it."""
        me = self._enter()  # as using(), without a generator on the hot path
        try:
            return self._janus_call(predicate, self.module, *args)
        except QueryInterrupted:
            if self._closed:
                raise GameClosedError(
                    f"{self.name}: the state machine was closed during the query"
                ) from None
            raise
        finally:
            self._leave(me)

    def _janus_call(self, predicate: str, *args: Any) -> Any:
        attach_thread()
        try:
            return self._janus.apply_once(RUNTIME_MODULE, predicate, *args)
        except self._janus.PrologError as e:
            self._tls.installed = None
            raise reasoner_error(self.name, e) from None
        except BaseException:
            self._tls.installed = None
            raise

    def _state_arg(self, state: MachineState) -> Any:
        check_same_game(state, self._terms, self.name)
        installed = getattr(self._tls, "installed", None)
        if installed is state or (installed is not None and installed == state):
            return _CURRENT
        self._tls.installed = state
        return self._symbols().state(state.forms)

    def _new_state(self, raw: Iterable[Form]) -> MachineState:
        s = MachineState(raw, self._terms)
        self._tls.installed = s
        return s

    def _role_raw(self, role: Term | str) -> Form:
        t = self._terms.form(role)
        if t not in self._raw_roles:
            raise TransitionDefinitionError(
                f"{self.name}: {kif_term(ground_term(role))} is not a role"
            )
        return t

    def role_index(self, role: Term | str) -> int:
        return self._raw_roles.index(self._role_raw(role))

    @property
    def flat_rules(self) -> tuple[FlatRule, ...]:
        """The game's flat rules (``gdl2pl.flatten.flatten_rules`` of the normalized game)
        that the translation was made from: a grounding of the game starts from them, so
        that a game is normalized and flattened once."""
        return self._flat_rules

    @property
    def raw_roles(self) -> tuple[Form, ...]:
        """The roles in their form (``gdl2pl.contract.state``), in the game's order: what
        the runtime answers roles as, and what a grounding of the game is told."""
        return self._raw_roles

    @property
    def term_cache(self) -> TermCache:
        """This machine's ``TermCache``: its terms and forms, and the game's identity that
        its states carry (an engine built on this one shares it, so that their states
        are states of one game, and their memos are told apart by it)."""
        return self._terms

    def check_open(self) -> None:
        """``GameClosedError`` once ``close()`` was called; nothing otherwise."""
        if self._closed:
            raise GameClosedError(f"{self.name}: the state machine has been closed")

    # -- the primitives of the contract, answered by the runtime -------------------------

    @property
    def roles(self) -> tuple[Term, ...]:
        return self._roles

    @property
    def initial_state(self) -> MachineState:
        return self._initial

    def term(self, kif: Term | str) -> Term:
        return self._terms.canonical(ground_term(kif))

    def role_moves(self, state: MachineState, index: int) -> list[Term]:
        known = recalled(state, self._terms)  # what this machine learnt of it (step)
        if known is not None:
            return list(known.legal[index])
        raw = self._call("gdl_legal", self._state_arg(state), self._raw_roles[index])
        return [self._terms.term(m) for m in raw]

    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        """Per role (in role order), its legal moves; empty lists are allowed here."""
        known = recalled(state, self._terms)
        if known is not None:
            return [list(ms) for ms in known.legal]
        raw = self._call("gdl_legal_all", self._state_arg(state))
        return [[self._terms.term(m) for m in ms] for ms in raw]

    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        """The state after ``joint_move`` (one move per role, in role order).

        Raises ``IllegalMoveError`` if a move is not legal, ``TransitionDefinitionError``
        if the joint move is ill-formed."""
        moves = [self._terms.form(m) for m in joint_move]
        result = self._call("gdl_next", self._state_arg(state), moves)
        if result[0] == "next":
            _, added, removed = result
            return self._new_state(_successor(state.forms, added, removed))
        raise self._refusal(state, moves, result)

    def _refusal(self, state: MachineState, moves: list[Form], result: list[Any]) -> GameError:
        """The error for gdl_next's or gdl_step's refusal of a joint move (``state``
        stays installed)."""
        self._tls.installed = state
        if result[0] == "illegal":
            i = result[1]
            return self.illegal(state, self._terms.term(moves[i]), self._roles[i])
        return self.wrong_joint_move(len(moves))

    def step(self, state: MachineState, joint_move: Sequence[Term | str]) -> Step:
        """One search step in one Prolog call: the state after ``joint_move`` (as
        ``next_state``, with the same errors), whether it is terminal, every role's
        legal moves there and, if terminal, the goals. The new state remembers these
        answers, so ``is_terminal``, ``all_legal_moves``, ``legal_moves``, ``goals``
        and ``goal`` on it ask Prolog nothing."""
        s = self.step_symbols(state, joint_move)
        per_role = self._symbols().decode([], [], s.legal)[2]
        return self._learnt(s.state, s.terminal, per_role, s.goal_values)

    def step_symbols(self, state: MachineState, joint_move: Sequence[Term | str]) -> SymbolStep:
        """``step`` answered in symbol ids (``SymbolStep``), for callers that map moves
        and fluents to their own tables: the legal moves are not turned into terms, and
        the new state remembers nothing (``step`` does). Same errors as ``step``."""
        moves = [self._terms.form(m) for m in joint_move]
        result = self._call("gdl_step", self._state_arg(state), moves)
        if result[0] != "next":
            raise self._refusal(state, moves, result)
        _, added, removed, terminal, legal, goals = result
        add, rem, _ = self._symbols().decode(added, removed, [])
        child = self._new_state(changed(state.forms, add, rem))
        return SymbolStep(child, terminal == "true", legal, goals, added, removed)

    def symbol(self, symbol_id: int) -> Term:
        """The fluent or move a symbol id of ``step_symbols`` stands for;
        ``ReasonerError`` for an id the runtime never gave, ``TypeError`` for a value
        that is not an int."""
        if symbol_id.__class__ is not int:
            raise TypeError(f"a symbol id is an int, not {shown(symbol_id)}")
        symbols = self._symbols()
        term = symbols.term.get(symbol_id)
        if term is None:
            symbols.learn([symbol_id])
            term = symbols.term[symbol_id]
        return term

    def expand(self, state: MachineState) -> list[tuple[tuple[Term, ...], Step]]:
        """Every legal joint move of ``state`` (in ``legal_joint_moves`` order) with the
        ``step`` it leads to, in one Prolog call; ``state`` and every successor
        remember what was learnt of them (see ``step``). ``MoveDefinitionError`` when
        a role has no legal move, as ``legal_joint_moves``."""
        _, terminal, legal, goals, children = self._call("gdl_expand", self._state_arg(state))
        self._tls.installed = state
        decode = self._symbols().decode
        per_role = self._learnt(state, terminal == "true", decode([], [], legal)[2], goals).legal
        self.every_role_moves(state, per_role)
        key = state.forms
        terms = self._terms
        steps = []
        for jm, (added, removed, t, lg, gs) in zip(
            itertools.product(*per_role), children, strict=True
        ):
            add, rem, legal_terms = decode(added, removed, lg)
            child = MachineState(changed(key, add, rem), terms)
            steps.append((jm, self._learnt(child, t == "true", legal_terms, gs)))
        return steps

    _symbol_ids: _Symbols  # made on first use (not by the constructor)

    def _symbols(self) -> _Symbols:
        try:
            return self._symbol_ids
        except AttributeError:
            self._symbol_ids = _Symbols(
                self._terms,
                lambda ids: self._call("gdl_symbols", ids),
                lambda raws: self._call("gdl_symbol_ids", raws),
            )
            return self._symbol_ids

    def _learnt(
        self,
        state: MachineState,
        is_terminal: bool,
        per_role: tuple[tuple[Term, ...], ...],
        goals: list[list[str]],
    ) -> Step:
        """Record on ``state`` what Prolog answered about it and return it as a
        ``Step``."""
        remember(state, self._terms, is_terminal, per_role, goals)
        values = tuple([goal_value(vs) for vs in goals]) if is_terminal else None
        return Step(state, is_terminal, per_role, values)

    def is_terminal(self, state: MachineState) -> bool:
        known = recalled(state, self._terms)
        if known is not None:
            return known.terminal
        return self._call("gdl_terminal", self._state_arg(state)) == "true"

    def goal_values(self, state: MachineState) -> list[list[str]]:
        known = recalled(state, self._terms)
        if known is not None and known.terminal:
            return [list(vs) for vs in known.goals]  # a copy: the state keeps its own
        return self._call("gdl_goals", self._state_arg(state))

    def state_info(
        self, state: MachineState
    ) -> tuple[bool, list[list[Term]], list[list[int | str]]]:
        """(terminal, legal moves per role, goal values per role) in one Prolog call."""
        _, terminal, legal, goals = self._call("gdl_state_info", self._state_arg(state))
        return (
            terminal == "true",
            [[self._terms.term(m) for m in ms] for ms in legal],
            goal_values(goals),
        )

    def depth_charge(
        self, state: MachineState, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[MachineState, int]:
        """Play random joint moves inside Prolog until a terminal state; returns the final
        state and the number of steps taken. ``PlayoutDepthError`` if no terminal state
        comes within ``max_depth`` steps (the game may not terminate)."""
        result = self._call("gdl_depth_charge", self._state_arg(state), check_max_depth(max_depth))
        if result[0] == "done":
            final = self._new_state(map(freeze, result[1]))
            if result[2] >= max_depth and not self.is_terminal(final):
                raise self.too_deep(max_depth)
            return final, result[2]
        raise self._stuck(result)

    def _stuck(self, result: list[Any]) -> GameError:
        """The error for a playout in Prolog that met a role without a legal move."""
        self._tls.installed = None
        state = MachineState(map(freeze, result[2]), self._terms)
        return self.no_move(state, self._terms.term(result[1]), " during a depth charge,")

    def playouts(
        self, state: MachineState, n: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[list[list[tuple[int, int]]], int]:
        """``n`` depth charges inside Prolog in one call. Returns, per role, the
        (goal value or -1, depth) of each playout, and the total number of steps. A
        playout stops after ``max_depth`` steps even if not terminal (its depth is then
        ``max_depth``, and goal values are those of the state reached, usually -1).
        ``ValueError`` unless ``n`` is a whole number >= 1."""
        check_playout_count(n)
        result = self._call("gdl_playouts", self._state_arg(state), n, check_max_depth(max_depth))
        self._tls.installed = None
        if result[0] == "playouts":
            return [[(v, d) for v, d in col] for col in result[1]], result[2]
        raise self._stuck(result)

    def seed(self, seed: int) -> None:
        """Seed the in-Prolog random generator of this thread (for depth charges)."""
        self._janus_call("gdl_seed", int(seed))

    @property
    def base_propositions(self) -> list[Term]:
        """The fluents the game declares with ``base`` (empty when it declares none);
        ``GameError`` for a game older than GDL 2010 that uses ``base`` otherwise."""
        self.require_gdl_2010("base", "base_propositions")
        return [self._terms.term(f) for f in self._call("gdl_base")]

    def input_moves(self, role: Term | str) -> list[Term]:
        """The moves the game declares for ``role`` with ``input`` (empty if none);
        ``GameError`` for a game older than GDL 2010 that uses ``input`` otherwise."""
        self.require_gdl_2010("input", "input_moves")
        return [self._terms.term(m) for m in self._call("gdl_input", self._role_raw(role))]

    def declared_percepts(self, role: Term | str) -> list[Term]:
        """The percepts the game declares for ``role`` with GDL-II's ``percept``, sorted
        (empty if none)."""
        return [self._terms.term(p) for p in self._call("gdl_percept", self._role_raw(role))]

    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        """What ``role`` perceives (GDL-II's ``sees``) when ``joint_move`` is played in
        ``state`` (see ``GameMachine.percepts``), in one Prolog call."""
        raw_role = self._role_raw(role)
        if self.is_random(role):
            raise GameError(f"{self.name}: the random role is chance and perceives nothing")
        moves = [self._terms.form(m) for m in joint_move]
        result = self._call("gdl_percepts", self._state_arg(state), moves, raw_role)
        if result[0] == "percepts":
            return [self._terms.term(p) for p in result[1]]
        raise self._refusal(state, moves, result)

    def consistent_batch(
        self, state: MachineState, index: int, seen: frozenset[Term], joints: JointMoves
    ) -> BatchTest:
        """Which of a batch of ``joints`` let the role at ``index`` perceive exactly
        ``seen``, with their children (see ``GameMachine.consistent_children``): one
        Prolog call a batch, each joint move's moves asserted once for its percepts and,
        if they agree, its successor."""
        raw_role = self._raw_roles[index]
        played = joints.moves[index][0]
        raw_move = self._terms.form(played)
        raw_seen = [self._terms.form(p) for p in seen]
        key = state.forms
        terms = self._terms

        def test(numbers: Sequence[int]) -> list[tuple[int, MachineState]]:
            result = self._call(
                "gdl_consistent",
                self._state_arg(state),
                raw_role,
                raw_move,
                raw_seen,
                list(numbers),
            )
            if result[0] != "children":  # legality was checked in this state: cannot be
                raise self.illegal(state, played, self.roles[index])
            return [
                (position, MachineState(_successor(key, added, removed), terms))
                for position, added, removed in result[1]
            ]

        return test
