"""The GGP state machine on SWI-Prolog: ggp-base's ``StateMachine`` in Python naming.

>>> sm = StateMachine.from_file("ticTacToe.kif")
>>> s = sm.initial_state
>>> while not sm.is_terminal(s):
...     s = sm.next_state(s, sm.random_joint_move(s))
>>> sm.goals(s)
[100, 0]

Roles, moves and fluents are ``gdl2pl`` terms (``Const``/``Func``): they print as KIF,
compare by value, and are spelled as in the game file. ``MachineState`` is immutable
and hashable. Every call goes to Prolog through a fixed predicate of
``prolog/gdl_runtime.pl`` with its data as arguments (never as query text).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import threading
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import nullcontext
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple

from gdl2pl.errors import GdlError
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.pipeline import compile_game
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.translate import Translation
from gdl2pl.vocabulary import RANDOM_ROLE

from .errors import GameClosedError
from .errors import GameError
from .errors import GoalDefinitionError
from .errors import IllegalMoveError
from .errors import MoveDefinitionError
from .errors import PlayoutDepthError
from .errors import QueryInterrupted
from .errors import TransitionDefinitionError
from .errors import reasoner_error
from .pyform import goal_values
from .swipl import RUNTIME_MODULE
from .swipl import attach_thread
from .swipl import interrupt
from .swipl import prolog_thread_id
from .swipl import runtime

if TYPE_CHECKING:
    from .information import Turn

Raw = Any  # str for a constant, tuple (name, *args) for a compound: janus' form
_CURRENT = "="  # tells the runtime: the state this thread installed last
_module_ids = itertools.count(1)


_set = object.__setattr__


class MachineState:
    """A game state: an immutable set of fluents."""

    __slots__ = ("_hash", "_key", "_known", "_terms")

    _key: frozenset[Raw]
    _hash: int
    _terms: _Terms | None
    #: What a machine learnt of this state in passing (``StateMachine.step``):
    #: (that machine's ``_Terms``, terminal, legal per role, raw goals per role).
    _known: tuple[_Terms, bool, tuple[tuple[Term, ...], ...], list[list[str]]] | None

    def __init__(self, raw: Iterable[Raw], terms: _Terms | None = None) -> None:
        key = raw if isinstance(raw, frozenset) else frozenset(raw)
        _set(self, "_key", key)
        _set(self, "_hash", hash(key))
        _set(self, "_terms", terms)
        _set(self, "_known", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MachineState is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("MachineState is immutable")

    @classmethod
    def from_fluents(cls, fluents: Iterable[Term | str]) -> MachineState:
        """A state made of the given fluents (terms or KIF strings)."""
        return cls([_raw_of(_as_term(f)) for f in fluents])

    @property
    def fluents(self) -> frozenset[Term]:
        convert = self._terms.term if self._terms else _term_of
        return frozenset(convert(r) for r in self._key)

    def __iter__(self) -> Iterator[Term]:
        convert = self._terms.term if self._terms else _term_of
        return (convert(r) for r in self._key)

    def __len__(self) -> int:
        return len(self._key)

    def __contains__(self, fluent: object) -> bool:
        if isinstance(fluent, str):
            fluent = parse_kif_term(fluent)
        return isinstance(fluent, Const | Func) and _raw_of(fluent) in self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MachineState) and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return "(" + " ".join(sorted(kif_term(f) for f in self)) + ")"

    def __repr__(self) -> str:
        return f"MachineState({self})"


#: Random playouts stop after this many steps unless told otherwise: enough for every
#: public game, and a bound on a game that never ends.
DEFAULT_MAX_DEPTH = 5_000


def _require_playout_count(n: object) -> None:
    """``ValueError`` unless ``n`` is a whole number of playouts >= 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of playouts must be a whole number >= 1, not {n!r}")


def _depth(max_depth: int) -> int:
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"max_depth must be a whole number >= 0, not {max_depth!r}")
    return max_depth


#: The deepest term that crosses between Python and Prolog (as the runtime's
#: max_term_depth/1): deeper ones are refused with a clear error on either side.
MAX_TERM_DEPTH = 200


def _as_term(x: Term | str) -> Term:
    """A ground term from outside (a term, or KIF text), checked: ground, at most
    ``MAX_TERM_DEPTH`` deep, and with names that are valid text (no lone surrogates)."""
    if isinstance(x, str):
        _check_text(x)
        try:
            t = parse_kif_term(x)
        except GdlError as e:
            raise TransitionDefinitionError(f"not a GDL term: {_shown(x)}: {e}") from None
    else:
        t = x
    if not isinstance(t, Const | Func):
        raise TransitionDefinitionError(f"not a ground GDL term: {_shown(x)}")
    todo: list[tuple[Term, int]] = [(t, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, Var):
            raise TransitionDefinitionError(f"not a ground GDL term: {_shown(x)}")
        if not isinstance(node, Const | Func):
            raise TransitionDefinitionError(f"not a GDL term: {_shown(x)}")
        _check_text(node.name)
        if isinstance(node, Func):
            if depth >= MAX_TERM_DEPTH:
                raise TransitionDefinitionError(
                    f"a term nested deeper than {MAX_TERM_DEPTH} levels is not accepted"
                )
            todo.extend((a, depth + 1) for a in node.args)
    return t


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise TransitionDefinitionError(
            f"not valid text: {_shown(text)} holds the lone surrogate U+{ord(text[e.start]):04X}"
        ) from None


def _shown(x: object, width: int = 80) -> str:
    text = ascii(x) if isinstance(x, str) else repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."


def _name(x: Raw) -> str:
    return x if isinstance(x, str) else str(x).lower() if isinstance(x, bool) else str(x)


def _freeze(x: Any) -> Raw:
    """A term as janus returns it (nested lists) in the hashable form (nested tuples)."""
    if x.__class__ is str:
        return x
    return tuple([e if e.__class__ is str else _freeze(e) for e in x])


class Step(NamedTuple):
    """A state with what a search asks about it next (``StateMachine.step``)."""

    #: The state reached.
    state: MachineState
    #: Whether it is terminal.
    terminal: bool
    #: Per role (in role order), its sorted legal moves there (possibly empty).
    legal: tuple[tuple[Term, ...], ...]
    #: Per role, its goal value when the state is terminal (None for a role without
    #: exactly one numeric value: ``goals`` then says why); None when not terminal.
    goals: tuple[int | None, ...] | None


class SymbolStep(NamedTuple):
    """A step answered in symbol ids (``StateMachine.step_symbols``): numbers that
    stand for one fluent or move each, for the machine's life (``StateMachine.symbol``
    gives the term). For callers that keep their own tables of moves and fluents (the
    game-AI adapters): they look ids up instead of terms."""

    #: The state reached.
    state: MachineState
    #: Whether it is terminal.
    terminal: bool
    #: Per role (in role order), the symbol ids of its legal moves (possibly none).
    legal: list[list[int]]
    #: Per role, its goal values when the state is terminal (as ``goals`` reads them);
    #: empty when not terminal.
    goal_values: list[list[str]]
    #: The symbol ids of the fluents the step added to and removed from the state.
    added: list[int]
    removed: list[int]


class Consistent(NamedTuple):
    """A joint move a role cannot tell apart from what happened after one of its turns
    (``StateMachine.consistent_successors``)."""

    joint_move: tuple[Term, ...]
    #: The state it leads to.
    state: MachineState
    #: The chance of the other roles' moves in it when each of them (random included)
    #: chooses uniformly among its legal moves.
    weight: Fraction


def _goal_value(values: list[str]) -> int | None:
    if len(values) == 1:
        with contextlib.suppress(ValueError):
            return int(values[0])
    return None


def _changed(key: frozenset[Raw], added: list[Raw], removed: list[Raw]) -> frozenset[Raw]:
    """The fluents of a state (``key``) with ``removed`` taken out and ``added`` put in."""
    if removed:
        key = key.difference(removed)
    return key.union(added) if added else key


def _successor(key: frozenset[Raw], added: list[Any], removed: list[Any]) -> frozenset[Raw]:
    """The fluents of a state after removing and adding fluents in janus' form."""
    return _changed(key, [_freeze(f) for f in added], [_freeze(f) for f in removed])


class _Symbols:
    """The fluents and moves the runtime names by symbol id in the answers of
    gdl_step/gdl_expand: id -> hashable janus form, id -> term (interned by
    ``_Terms``), janus form -> id. Learnt on first sight (one gdl_symbols or
    gdl_symbol_ids call); a game has a bounded number of them. Entries are only ever
    added, so threads may share it."""

    def __init__(
        self,
        terms: _Terms,
        fetch: Callable[[list[int]], list[Any]],
        name: Callable[[list[Raw]], Any],
    ) -> None:
        self.raw: dict[int, Raw] = {}
        self.term: dict[int, Term] = {}
        self.id_of: dict[Raw, int] = {}
        self._terms = terms
        self._fetch = fetch
        self._name = name
        self._full = False

    def state(self, key: frozenset[Raw]) -> Any:
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
                raw = _freeze(py)
                self.term[i] = self._terms.term(raw)
                self.raw[i] = raw
                self.id_of[raw] = i

    def decode(
        self, added: list[int], removed: list[int], legal: list[list[int]]
    ) -> tuple[list[Raw], list[Raw], tuple[tuple[Term, ...], ...]]:
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


def _term_of(raw: Raw) -> Term:
    if isinstance(raw, tuple):
        return Func(_name(raw[0]), tuple(_term_of(a) for a in raw[1:]))
    return Const(_name(raw))


def _raw_of(t: Term) -> Raw:
    if isinstance(t, Func):
        return (t.name, *(_raw_of(a) for a in t.args))
    if isinstance(t, Const):
        return t.name
    raise TransitionDefinitionError(f"a variable is not a move or fluent: ?{t.name}")


class _Terms:
    """Interning cache between janus values and terms (bounded by the game's symbols)."""

    def __init__(
        self, canonical: Callable[[Term], Term], game: Hashable = None, name: str = ""
    ) -> None:
        #: What makes two machines' states interchangeable: equal for machines of one
        #: game (same roles, fluent stores and case rule), unequal otherwise.
        self.game = game
        self.name = name  # the game's name, for messages
        self._to_term: dict[Raw, Term] = {}
        self._to_raw: dict[Term | str, Raw] = {}
        self._by_id: dict[int, Raw] = {}  # terms made here (kept alive by _to_term)
        self.canonical = canonical

    def term(self, raw: Any) -> Term:
        """The term for a value from janus (a string, or a list for a compound)."""
        if raw.__class__ is list:
            raw = _freeze(raw)
        t = self._to_term.get(raw)
        if t is None:
            t = self._to_term[raw] = _term_of(raw)
            self._by_id[id(t)] = raw  # it came from Prolog: already checked and canonical
        return t

    def raw(self, x: Term | str) -> Raw:
        """The janus form of a term or KIF text from outside, checked (``_as_term``) and
        spelled as the game does. Terms this game returned cost one lookup."""
        r = self._by_id.get(id(x))
        if r is not None:
            return r
        term = None if isinstance(x, str) else _as_term(x)  # checked first: safe to hash
        key = x if term is None else term
        r = self._to_raw.get(key)
        if r is None:
            r = _raw_of(self.canonical(term if term is not None else _as_term(x)))
            if len(self._to_raw) < 100_000:
                self._to_raw[key] = r
        return r


class StateMachine:
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
        self._terms = _Terms(compiled.symbols.term, name=self.name)
        self.translation: Translation = compiled.translation
        self._tls = threading.local()
        self._closed = False
        # queries under way, by Python thread -> (Prolog thread id, how many nested):
        # close() interrupts them and the last one to end unloads the game
        self._use = threading.Condition()
        self._running: dict[int, list[int]] = {}
        self._unloaded = False
        raw_roles = self._call("gdl_load", self.translation.text)
        self._call("gdl_set_limit", inference_limit)
        self._raw_roles = tuple(_freeze(r) for r in raw_roles)
        # a game's signature (its roles and fluent stores) tells its states from another
        # game's, and lets the same game written twice (KIF and infix) share states
        self._terms.game = (self._raw_roles, frozenset(self.translation.stores), case_sensitive)
        self._roles: tuple[Term, ...] = tuple(self._terms.term(r) for r in self._raw_roles)
        self._initial = MachineState(map(_freeze, self._call("gdl_initial_state")), self._terms)

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

    def __enter__(self) -> StateMachine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        terms = state._terms
        if terms is not None and terms is not self._terms and terms.game != self._terms.game:
            raise ValueError(
                f"{self.name}: the state comes from the machine for another game "
                f"({terms.name}); a machine answers only for states of its own game (or "
                "built with MachineState.from_fluents)"
            )
        installed = getattr(self._tls, "installed", None)
        if installed is state or (installed is not None and installed == state):
            return _CURRENT
        self._tls.installed = state
        return self._symbols().state(state._key)

    def _new_state(self, raw: Iterable[Raw]) -> MachineState:
        s = MachineState(raw, self._terms)
        self._tls.installed = s
        return s

    def _role_raw(self, role: Term | str) -> Raw:
        t = self._terms.raw(role)
        if t not in self._raw_roles:
            raise TransitionDefinitionError(
                f"{self.name}: {kif_term(_as_term(role))} is not a role"
            )
        return t

    # -- the StateMachine contract ------------------------------------------------------

    @property
    def roles(self) -> tuple[Term, ...]:
        """The roles, in the order of the game description."""
        return self._roles

    @property
    def initial_state(self) -> MachineState:
        return self._initial

    def term(self, kif: Term | str) -> Term:
        """Parse a KIF term (or check a term) and spell its symbols as the game does;
        ``TransitionDefinitionError`` if it is not a ground term."""
        return self._terms.canonical(_as_term(kif))

    def legal_moves(self, state: MachineState, role: Term | str) -> list[Term]:
        """The legal moves of ``role`` in ``state``, sorted; raises
        ``MoveDefinitionError`` when there is none."""
        known = state._known
        if known is not None and known[0] is self._terms:
            moves = list(known[2][self._raw_roles.index(self._role_raw(role))])
        else:
            raw = self._call("gdl_legal", self._state_arg(state), self._role_raw(role))
            moves = [self._terms.term(m) for m in raw]
        if not moves:
            raise MoveDefinitionError(
                f"{self.name}: no legal move for role {kif_term(_as_term(role))} "
                f"in state {_short(state)}"
            )
        return moves

    def all_legal_moves(self, state: MachineState) -> list[list[Term]]:
        """Per role (in role order), its legal moves; empty lists are allowed here."""
        known = state._known
        if known is not None and known[0] is self._terms:
            return [list(ms) for ms in known[2]]
        raw = self._call("gdl_legal_all", self._state_arg(state))
        return [[self._terms.term(m) for m in ms] for ms in raw]

    def legal_joint_moves(self, state: MachineState) -> list[tuple[Term, ...]]:
        """Every combination of legal moves, one per role in role order."""
        per_role = self.all_legal_moves(state)
        for role, moves in zip(self._roles, per_role, strict=True):
            if not moves:
                raise MoveDefinitionError(
                    f"{self.name}: no legal move for role {role} in state {_short(state)}"
                )
        return list(itertools.product(*per_role))

    def next_state(self, state: MachineState, joint_move: Sequence[Term | str]) -> MachineState:
        """The state after ``joint_move`` (one move per role, in role order).

        Raises ``IllegalMoveError`` if a move is not legal, ``TransitionDefinitionError``
        if the joint move is ill-formed."""
        moves = [self._terms.raw(m) for m in joint_move]
        result = self._call("gdl_next", self._state_arg(state), moves)
        if result[0] == "next":
            _, added, removed = result
            return self._new_state(_successor(state._key, added, removed))
        raise self._refusal(state, moves, result)

    def _refusal(self, state: MachineState, moves: list[Raw], result: list[Any]) -> GameError:
        """The error for gdl_next's or gdl_step's refusal of a joint move (``state``
        stays installed)."""
        self._tls.installed = state
        if result[0] == "illegal":
            i = result[1]
            return IllegalMoveError(
                f"{self.name}: {kif_term(self._terms.term(moves[i]))} is not a legal move for "
                f"role {self._roles[i]} in state {_short(state)}"
            )
        return TransitionDefinitionError(
            f"{self.name}: a joint move needs one move per role ({len(self._roles)}), "
            f"got {len(moves)}"
        )

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
        moves = [self._terms.raw(m) for m in joint_move]
        result = self._call("gdl_step", self._state_arg(state), moves)
        if result[0] != "next":
            raise self._refusal(state, moves, result)
        _, added, removed, terminal, legal, goals = result
        add, rem, _ = self._symbols().decode(added, removed, [])
        child = self._new_state(_changed(state._key, add, rem))
        return SymbolStep(child, terminal == "true", legal, goals, added, removed)

    def symbol(self, symbol_id: int) -> Term:
        """The fluent or move a symbol id of ``step_symbols`` stands for;
        ``ReasonerError`` for an id the runtime never gave, ``TypeError`` for a value
        that is not an int."""
        if symbol_id.__class__ is not int:
            raise TypeError(f"a symbol id is an int, not {_shown(symbol_id)}")
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
        for role, moves in zip(self._roles, per_role, strict=True):
            if not moves:
                raise MoveDefinitionError(
                    f"{self.name}: no legal move for role {role} in state {_short(state)}"
                )
        key = state._key
        terms = self._terms
        steps = []
        for jm, (added, removed, t, lg, gs) in zip(
            itertools.product(*per_role), children, strict=True
        ):
            add, rem, legal_terms = decode(added, removed, lg)
            child = MachineState(_changed(key, add, rem), terms)
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
        _set(state, "_known", (self._terms, is_terminal, per_role, goals))
        values = tuple([_goal_value(vs) for vs in goals]) if is_terminal else None
        return Step(state, is_terminal, per_role, values)

    def next_states(self, state: MachineState) -> list[MachineState]:
        """The successor of every legal joint move (in ``legal_joint_moves`` order)."""
        return [step.state for _, step in self.expand(state)]

    def next_state_map(self, state: MachineState) -> dict[tuple[Term, ...], MachineState]:
        """Each legal joint move mapped to the state it leads to."""
        return {jm: step.state for jm, step in self.expand(state)}

    def is_terminal(self, state: MachineState) -> bool:
        known = state._known
        if known is not None and known[0] is self._terms:
            return known[1]
        return self._call("gdl_terminal", self._state_arg(state)) == "true"

    def _goal_values(self, state: MachineState) -> list[list[Raw]]:
        known = state._known
        if known is not None and known[0] is self._terms and known[1]:
            return known[3]
        return self._call("gdl_goals", self._state_arg(state))

    def goal(self, state: MachineState, role: Term | str) -> int:
        """The goal value of ``role`` in ``state``; ``GoalDefinitionError`` unless there
        is exactly one numeric value."""
        index = self._raw_roles.index(self._role_raw(role))
        return self._unique_goal(state, index, self._goal_values(state))

    def goals(self, state: MachineState) -> list[int]:
        """Every role's goal value, in role order (GDL-II's random role, which the game
        need not give a goal, has 0 when it has none)."""
        values = self._goal_values(state)
        return [self._unique_goal(state, i, values) for i in range(len(self._roles))]

    def _unique_goal(self, state: MachineState, index: int, values: list[list[Raw]]) -> int:
        vs = values[index]
        role = self._roles[index]
        if not vs and self.is_random(role):
            return 0
        if len(vs) != 1:
            what = (
                "no goal value" if not vs else f"{len(vs)} goal values ({', '.join(map(str, vs))})"
            )
            raise GoalDefinitionError(
                f"{self.name}: role {role} has {what} in state {_short(state)}"
            )
        try:
            return int(vs[0])
        except ValueError:
            raise GoalDefinitionError(
                f"{self.name}: role {role} has the non-numeric goal value {vs[0]} "
                f"in state {_short(state)}"
            ) from None

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

    def random_joint_move(
        self, state: MachineState, rng: random.Random | None = None
    ) -> tuple[Term, ...]:
        """A uniformly random legal move for every role."""
        choice = (rng or random).choice
        per_role = self.all_legal_moves(state)
        for role, moves in zip(self._roles, per_role, strict=True):
            if not moves:
                raise MoveDefinitionError(
                    f"{self.name}: no legal move for role {role} in state {_short(state)}"
                )
        return tuple(choice(ms) for ms in per_role)

    def random_next_state(
        self, state: MachineState, rng: random.Random | None = None
    ) -> MachineState:
        return self.next_state(state, self.random_joint_move(state, rng))

    def depth_charge(
        self, state: MachineState, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[MachineState, int]:
        """Play random joint moves inside Prolog until a terminal state; returns the final
        state and the number of steps taken. ``PlayoutDepthError`` if no terminal state
        comes within ``max_depth`` steps (the game may not terminate)."""
        result = self._call("gdl_depth_charge", self._state_arg(state), _depth(max_depth))
        if result[0] == "done":
            final = self._new_state(map(_freeze, result[1]))
            if result[2] >= max_depth and not self.is_terminal(final):
                raise PlayoutDepthError(
                    f"{self.name}: no terminal state within {max_depth:,} steps of a random "
                    "playout (the game may never end); pass a larger max_depth to go on"
                )
            return final, result[2]
        self._tls.installed = None
        raise MoveDefinitionError(
            f"{self.name}: no legal move for role {self._terms.term(result[1])} during a depth "
            f"charge, in state {_short(MachineState(map(_freeze, result[2]), self._terms))}"
        )

    def playouts(
        self, state: MachineState, n: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> tuple[list[list[tuple[int, int]]], int]:
        """``n`` depth charges inside Prolog in one call. Returns, per role, the
        (goal value or -1, depth) of each playout, and the total number of steps. A
        playout stops after ``max_depth`` steps even if not terminal (its depth is then
        ``max_depth``, and goal values are those of the state reached, usually -1).
        ``ValueError`` unless ``n`` is a whole number >= 1."""
        _require_playout_count(n)
        result = self._call("gdl_playouts", self._state_arg(state), n, _depth(max_depth))
        self._tls.installed = None
        if result[0] == "playouts":
            return [[(v, d) for v, d in col] for col in result[1]], result[2]
        raise MoveDefinitionError(
            f"{self.name}: no legal move for role {self._terms.term(result[1])} during a depth "
            f"charge, in state {_short(MachineState(map(_freeze, result[2]), self._terms))}"
        )

    def average_scores(self, state: MachineState, n: int, discount: float = 1.0) -> list[float]:
        """Per role, the mean over ``n`` random playouts of goal * discount**depth
        (a role without a unique goal value at the end scores 0). ``ValueError`` unless
        ``n`` is a whole number >= 1 (a mean over no playouts has no value)."""
        _require_playout_count(n)
        per_role, _ = self.playouts(state, n)
        return [sum(max(v, 0) * discount**d for v, d in col) / n for col in per_role]

    def seed(self, seed: int) -> None:
        """Seed the in-Prolog random generator of this thread (for depth charges)."""
        self._janus_call("gdl_seed", int(seed))

    @property
    def base_propositions(self) -> list[Term]:
        """The fluents the game declares with ``base`` (empty when it declares none);
        ``GameError`` for a game older than GDL 2010 that uses ``base`` otherwise."""
        self._require_gdl_2010("base", "base_propositions")
        return [self._terms.term(f) for f in self._call("gdl_base")]

    def input_moves(self, role: Term | str) -> list[Term]:
        """The moves the game declares for ``role`` with ``input`` (empty if none);
        ``GameError`` for a game older than GDL 2010 that uses ``input`` otherwise."""
        self._require_gdl_2010("input", "input_moves")
        return [self._terms.term(m) for m in self._call("gdl_input", self._role_raw(role))]

    def declared_percepts(self, role: Term | str) -> list[Term]:
        """The percepts the game declares for ``role`` with GDL-II's ``percept``, sorted
        (empty if none)."""
        return [self._terms.term(p) for p in self._call("gdl_percept", self._role_raw(role))]

    def _require_gdl_2010(self, keyword: str, method: str) -> None:
        if keyword in self.translation.pre_2010:
            raise GameError(
                f"{self.name}: {method} is unavailable: the game predates GDL 2010 and uses "
                f"{keyword} as an ordinary relation, not to declare its {keyword} set"
            )

    # -- GDL-II: chance and what a role perceives --------------------------------------

    @property
    def gdl_ii(self) -> bool:
        """True for a GDL-II game: it declares the role ``random`` or uses ``sees`` or
        ``percept`` (``Translation.gdl_ii``)."""
        return self.translation.gdl_ii

    @property
    def random_role(self) -> Term | None:
        """GDL-II's role of chance, ``random``, if the game declares it."""
        for role in self._roles:
            if isinstance(role, Const) and role.name.casefold() == RANDOM_ROLE:
                return role
        return None

    def is_random(self, role: Term | str) -> bool:
        """True if ``role`` (a role of the game) is the role of chance, ``random``."""
        raw = self._role_raw(role)
        return isinstance(raw, str) and raw.casefold() == RANDOM_ROLE

    @property
    def players(self) -> tuple[Term, ...]:
        """The roles that choose their moves: every role but ``random``, in role order."""
        return tuple(r for r in self._roles if not self.is_random(r))

    def percepts(
        self, state: MachineState, joint_move: Sequence[Term | str], role: Term | str
    ) -> list[Term]:
        """What ``role`` perceives (GDL-II's ``sees``) when ``joint_move`` is played in
        ``state``: its percepts, sorted in Prolog's standard order; empty in a game
        without ``sees`` rules. ``GameError`` for the random role (chance perceives
        nothing); the joint move is checked as ``next_state`` checks it."""
        raw_role = self._role_raw(role)
        if self.is_random(role):
            raise GameError(f"{self.name}: the random role is chance and perceives nothing")
        moves = [self._terms.raw(m) for m in joint_move]
        result = self._call("gdl_percepts", self._state_arg(state), moves, raw_role)
        if result[0] == "percepts":
            return [self._terms.term(p) for p in result[1]]
        raise self._refusal(state, moves, result)

    def chance_outcomes(self, state: MachineState) -> list[tuple[Term, Fraction]]:
        """The random role's legal moves in ``state``, each with its probability: GDL-II's
        chance chooses uniformly, so each of n moves has ``Fraction(1, n)``. Empty in a
        terminal state; ``MoveDefinitionError`` if chance has no legal move in a state
        that is not terminal; ``GameError`` if the game has no random role."""
        chance = self.random_role
        if chance is None:
            raise GameError(f"{self.name}: the game has no random role (no chance)")
        if self.is_terminal(state):
            return []
        moves = self.legal_moves(state, chance)
        return [(m, Fraction(1, len(moves))) for m in moves]

    def consistent_successors(
        self,
        state: MachineState,
        role: Term | str,
        move: Term | str,
        percepts: Iterable[Term | str],
    ) -> list[Consistent]:
        """Every legal joint move of ``state`` in which ``role`` plays ``move`` and then
        perceives exactly the set ``percepts``, with the state it leads to and its
        weight (the first role's move varying slowest): what ``role`` cannot tell apart
        after that turn. ``IllegalMoveError`` if ``move`` is not legal for ``role`` in
        ``state``."""
        raw_role = self._role_raw(role)
        raw_move = self._terms.raw(move)
        seen = [self._terms.raw(p) for p in percepts]
        result = self._call("gdl_consistent", self._state_arg(state), raw_role, raw_move, seen)
        if result[0] == "illegal":
            self._tls.installed = state
            raise IllegalMoveError(
                f"{self.name}: {kif_term(self._terms.term(raw_move))} is not a legal move for "
                f"role {self._terms.term(raw_role)} in state {_short(state)}"
            )
        self._tls.installed = state
        index = self._raw_roles.index(raw_role)
        weight = Fraction(1)
        for i, count in enumerate(result[2]):
            if i != index and count:
                weight /= count
        key = state._key
        out = []
        for joint, added, removed in result[1]:
            child = MachineState(_successor(key, added, removed), self._terms)
            out.append(Consistent(tuple(self._terms.term(m) for m in joint), child, weight))
        return out

    def belief(
        self,
        history: Sequence[Turn | tuple[Term | str, Iterable[Term | str]]],
        role: Term | str,
        *,
        budget: int = 10_000,
        deadline: float | None = None,
    ) -> dict[MachineState, Fraction]:
        """The probability of each state ``role`` cannot tell apart after ``history``
        (its own move and percepts of each turn so far), chance and the other players
        choosing uniformly, computed exactly with at most ``budget`` states expanded,
        none after ``deadline`` (``time.monotonic()``) if given (see
        ``gdl2pl.bridge.information``). ``NoConsistentStateError`` when the history is
        impossible or the budget runs out (its ``exhausted`` says which)."""
        from .information import belief

        return belief(self, history, role, budget=budget, deadline=deadline)

    def sample_states(
        self,
        history: Sequence[Turn | tuple[Term | str, Iterable[Term | str]]],
        role: Term | str,
        n: int = 1,
        *,
        budget: int = 10_000,
        rng: random.Random | None = None,
        deadline: float | None = None,
    ) -> list[MachineState]:
        """``n`` states consistent with what ``role`` knows (``history``: its own move
        and percepts of each turn so far), for determinized search: drawn from the exact
        ``belief`` when that needs at most ``budget`` states expanded, else found by
        randomized depth-first search over the game tree with as many again; nothing is
        expanded after ``deadline`` (``time.monotonic()``), if given (see
        ``gdl2pl.bridge.information``). ``NoConsistentStateError`` if none is found."""
        from .information import sample_states

        return sample_states(self, history, role, n, budget=budget, rng=rng, deadline=deadline)

    def __repr__(self) -> str:
        return f"StateMachine({self.name!r}, roles={[str(r) for r in self._roles]})"


def _short(state: MachineState, width: int = 300) -> str:
    text = str(state)
    return text if len(text) <= width else text[: width - 3] + "..."
