"""A game state as every engine returns it, and the form its fluents are kept in.

``MachineState`` is an immutable, hashable set of fluents, equal (and hashing equal) for
equal fluents whichever engine made it. Its fluents are kept in their *form*: a string
for a constant, a tuple ``(name, *args)`` for a compound (what janus gives back, frozen),
so states hash and compare without building terms; ``TermCache`` turns forms into terms
and back for one game, checking what comes from outside (``ground_term``).

What is immutable, and what is filled in later: a ``MachineState``'s fluents never change,
and no attribute can be assigned from outside (``__setattr__`` refuses). Its slots are
written through ``object.__setattr__`` (``_fill``) when it is made, and two of them after,
neither changing what the state equals or hashes to:

- ``_known``, a memo: what a machine learnt of the state in passing (terminal, legal
  moves, goals; ``remember``, read back with ``recalled``), so that asking again costs
  nothing. The last machine to learn of the state holds it; only that machine (the
  owner of the memo's ``TermCache``) reads it back.
- ``_key`` (with ``_hash``), in a subclass that holds its fluents another way (the
  compiled engine's bits) and makes their set the first time equality or hashing need it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any
from typing import NamedTuple

from gdl2pl.errors import GdlError
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var

from .errors import TransitionDefinitionError

Form = Any  # str for a constant, tuple (name, *args) for a compound

#: The deepest term that crosses between Python and an engine (as the Prolog runtime's
#: max_term_depth/1): deeper ones are refused with a clear error on either side.
MAX_TERM_DEPTH = 200

#: Writes a slot of a ``MachineState`` past its refusing ``__setattr__``: only for the
#: slots filled after construction (see the module doc).
_fill = object.__setattr__


class Known(NamedTuple):
    """What a machine learnt of a state in passing (``GameMachine.step``)."""

    #: The ``TermCache`` of the machine that learnt it: only that machine reads it back.
    terms: TermCache
    terminal: bool
    #: Per role, its legal moves.
    legal: tuple[tuple[Term, ...], ...]
    #: Per role, its goal values (as text).
    goals: list[list[str]]


class MachineState:
    """A game state: an immutable set of fluents (equal, and hashing equal, for equal
    fluents), with a memo of what its machine learnt of it (see the module doc)."""

    __slots__ = ("_hash", "_key", "_known", "_terms")

    _key: frozenset[Form]
    _hash: int
    _terms: TermCache | None
    #: What a machine learnt of this state in passing (``remember``, ``recalled``); None
    #: until then. Filled after construction: a memo, not part of the state's value.
    _known: Known | None

    def __init__(self, forms: Iterable[Form], terms: TermCache | None = None) -> None:
        key = forms if isinstance(forms, frozenset) else frozenset(forms)
        _fill(self, "_key", key)
        _fill(self, "_hash", hash(key))
        _fill(self, "_terms", terms)
        _fill(self, "_known", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MachineState is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("MachineState is immutable")

    @classmethod
    def from_fluents(cls, fluents: Iterable[Term | str]) -> MachineState:
        """A state made of the given fluents (terms or KIF strings)."""
        return cls([form_of(ground_term(f)) for f in fluents])

    @property
    def forms(self) -> frozenset[Form]:
        """Its fluents in their form (see the module doc): what it equals and hashes by,
        what an engine reads a state from without building terms."""
        return self._key

    @property
    def fluents(self) -> frozenset[Term]:
        convert = self._terms.term if self._terms else term_of_form
        return frozenset(convert(r) for r in self._key)

    def __iter__(self) -> Iterator[Term]:
        convert = self._terms.term if self._terms else term_of_form
        return (convert(r) for r in self._key)

    def __len__(self) -> int:
        return len(self._key)

    def __contains__(self, fluent: object) -> bool:
        if isinstance(fluent, str):
            fluent = parse_kif_term(fluent)
        return isinstance(fluent, Const | Func) and form_of(fluent) in self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MachineState) and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return "(" + " ".join(sorted(kif_term(f) for f in self)) + ")"

    def __repr__(self) -> str:
        return f"MachineState({self})"

    def __copy__(self) -> MachineState:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, object]) -> MachineState:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its fluents' forms (strings and tuples of them) and its game's
        identity (``TermCache.game``: the roles, fluent stores and case rule, plain data)
        with the game's name, never as a machine or its memo: unpickled, it is a state
        of that game for any machine of that game, in any process, and a machine of
        another game refuses it as it refuses such a state (``check_same_game``)."""
        terms = self._terms
        game = None if terms is None else (terms.game, terms.name)
        return (_unpickled_state, (game, tuple(self._key)))


def _unpickled_state(game: Any, forms: Any) -> MachineState:
    """A pickled ``MachineState`` (``MachineState.__reduce__``), its data checked as a
    state from outside is: forms of ground terms at most ``MAX_TERM_DEPTH`` deep, names of
    valid text, a game identity of plain data; ``ValueError`` otherwise."""
    if forms.__class__ is not tuple:
        raise ValueError("not a pickled MachineState: its fluents are not a tuple")
    for form in forms:
        _check_form(form)
    return MachineState(forms, None if game is None else _pickled_game(game))


def _check_form(form: Any) -> None:
    """``ValueError`` unless ``form`` is the form of a ground term (see ``form_of``)."""
    todo: list[tuple[Any, int]] = [(form, 0)]
    while todo:
        node, depth = todo.pop()
        if node.__class__ is str and node:
            _check_form_text(node)
        elif node.__class__ is tuple and len(node) >= 2 and node[0].__class__ is str:
            if depth >= MAX_TERM_DEPTH:
                raise ValueError(f"not a pickled MachineState: a fluent nested deeper "
                                 f"than {MAX_TERM_DEPTH} levels")
            _check_form_text(node[0])
            todo.extend((a, depth + 1) for a in node[1:])
        else:
            raise ValueError(f"not a pickled MachineState: {shown(node)} is not the form of "
                             "a ground term")


def _check_form_text(text: str) -> None:
    try:
        _check_text(text)
    except TransitionDefinitionError as e:
        raise ValueError(f"not a pickled MachineState: {e}") from None


#: The stand-ins for the ``TermCache`` of pickled states' games, one per game identity.
_PICKLED_GAMES: weakref.WeakValueDictionary[Any, TermCache] = weakref.WeakValueDictionary()
_PICKLED_LOCK = threading.Lock()


def _pickled_game(game: Any) -> TermCache:
    """The ``TermCache`` stand-in that carries a pickled state's game identity (what
    ``check_same_game`` compares), shared by every state of that game unpickled here."""
    if not (game.__class__ is tuple and len(game) == 2 and game[1].__class__ is str):
        raise ValueError("not a pickled MachineState: its game is not (identity, name)")
    identity, name = game
    _check_identity(identity)
    with _PICKLED_LOCK:
        terms = _PICKLED_GAMES.get(game)
        if terms is None:
            terms = _PICKLED_GAMES[game] = TermCache(_as_given, identity, name)
        return terms


def _check_identity(identity: Any) -> None:
    """``ValueError`` unless ``identity`` is a game identity as ``TermCache.game`` holds
    it: plain data (the roles' forms, the fluent stores, the case rule), or None."""
    if identity is None:
        return
    if not (identity.__class__ is tuple and len(identity) == 3):
        raise ValueError("not a pickled MachineState: its game identity is not plain data")
    roles, stores, case_sensitive = identity
    if not (roles.__class__ is tuple and stores.__class__ is frozenset
            and case_sensitive.__class__ is bool):
        raise ValueError("not a pickled MachineState: its game identity is not plain data")
    for role in roles:
        _check_form(role)
    for store in stores:
        if not (store.__class__ is tuple and len(store) == 2 and store[0].__class__ is str
                and store[1].__class__ is int):
            raise ValueError("not a pickled MachineState: its game identity is not plain "
                             "data")


def _as_given(t: Term) -> Term:
    return t


def remember(
    state: MachineState,
    terms: TermCache,
    terminal: bool,
    legal: tuple[tuple[Term, ...], ...],
    goals: list[list[str]],
) -> None:
    """Record on ``state`` what the machine owning ``terms`` learnt of it in passing (its
    memo: see the module doc)."""
    _fill(state, "_known", Known(terms, terminal, legal, goals))


def recalled(state: MachineState, terms: TermCache) -> Known | None:
    """What the machine owning ``terms`` learnt of ``state`` (``remember``), or None
    when it learnt nothing or another machine did."""
    known = state._known
    return known if known is not None and known.terms is terms else None


def check_same_game(state: MachineState, terms: TermCache, machine: str) -> None:
    """``ValueError`` unless ``state`` may be asked of the machine ``machine`` whose
    ``TermCache`` is ``terms``: a state made by a machine of another game is refused (one
    made by hand, ``MachineState.from_fluents``, or by a machine of the same game, is
    not)."""
    other = state._terms
    if other is not None and other is not terms and other.game != terms.game:
        raise ValueError(
            f"{machine}: the state comes from the machine for another game "
            f"({other.name}); a machine answers only for states of its own game (or "
            "built with MachineState.from_fluents)"
        )


def ground_term(x: Term | str) -> Term:
    """A ground term from outside (a term, or KIF text), checked: ground, at most
    ``MAX_TERM_DEPTH`` deep, and with names that are valid text (no lone surrogates);
    ``TransitionDefinitionError`` otherwise."""
    if isinstance(x, str):
        _check_text(x)
        try:
            t = parse_kif_term(x)
        except GdlError as e:
            raise TransitionDefinitionError(f"not a GDL term: {shown(x)}: {e}") from None
    else:
        t = x
    if not isinstance(t, Const | Func):
        raise TransitionDefinitionError(f"not a ground GDL term: {shown(x)}")
    todo: list[tuple[Term, int]] = [(t, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, Var):
            raise TransitionDefinitionError(f"not a ground GDL term: {shown(x)}")
        if not isinstance(node, Const | Func):
            raise TransitionDefinitionError(f"not a GDL term: {shown(x)}")
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
            f"not valid text: {shown(text)} holds the lone surrogate U+{ord(text[e.start]):04X}"
        ) from None


def shown(x: object, width: int = 80) -> str:
    """``x`` for a message: ASCII-escaped if text, cut to ``width`` characters."""
    text = ascii(x) if isinstance(x, str) else repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."


def short(state: MachineState, width: int = 300) -> str:
    """A state for a message, cut to ``width`` characters."""
    text = str(state)
    return text if len(text) <= width else text[: width - 3] + "..."


def _name(x: Form) -> str:
    return x if isinstance(x, str) else str(x).lower() if isinstance(x, bool) else str(x)


def freeze(x: Any) -> Form:
    """A term as janus returns it (nested lists) in the hashable form (nested tuples)."""
    if x.__class__ is str:
        return x
    return tuple([e if e.__class__ is str else freeze(e) for e in x])


def changed(key: frozenset[Form], added: list[Form], removed: list[Form]) -> frozenset[Form]:
    """The fluents of a state (``key``) with ``removed`` taken out and ``added`` put in."""
    if removed:
        key = key.difference(removed)
    return key.union(added) if added else key


def term_of_form(form: Form) -> Term:
    """The term a form stands for."""
    if isinstance(form, tuple):
        return Func(_name(form[0]), tuple(term_of_form(a) for a in form[1:]))
    return Const(_name(form))


def form_of(t: Term) -> Form:
    """The form of a ground term."""
    if isinstance(t, Func):
        return (t.name, *(form_of(a) for a in t.args))
    if isinstance(t, Const):
        return t.name
    raise TransitionDefinitionError(f"a variable is not a move or fluent: ?{t.name}")


class TermCache:
    """Interning cache between forms and terms for one game (bounded by its symbols)."""

    def __init__(
        self, canonical: Callable[[Term], Term], game: Hashable = None, name: str = ""
    ) -> None:
        #: What makes two machines' states interchangeable: equal for machines of one
        #: game (same roles, fluent stores and case rule), unequal otherwise.
        self.game = game
        self.name = name  # the game's name, for messages
        self._to_term: dict[Form, Term] = {}
        self._to_form: dict[Term | str, Form] = {}
        self._by_id: dict[int, Form] = {}  # terms made here (kept alive by _to_term)
        self.canonical = canonical

    def term(self, form: Any) -> Term:
        """The term for a form (a string, a tuple, or a list for a compound as janus
        gives it)."""
        if form.__class__ is list:
            form = freeze(form)
        t = self._to_term.get(form)
        if t is None:
            t = self._to_term[form] = term_of_form(form)
            self._by_id[id(t)] = form  # it came from the engine: already checked, canonical
        return t

    def form(self, x: Term | str) -> Form:
        """The form of a term or KIF text from outside, checked (``ground_term``) and
        spelled as the game does. Terms this game returned cost one lookup."""
        r = self._by_id.get(id(x))
        if r is not None:
            return r
        term = None if isinstance(x, str) else ground_term(x)  # checked first: safe to hash
        key = x if term is None else term
        r = self._to_form.get(key)
        if r is None:
            r = form_of(self.canonical(term if term is not None else ground_term(x)))
            if len(self._to_form) < 100_000:
                self._to_form[key] = r
        return r
