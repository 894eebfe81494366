"""Grounding by the reasoner: the ground instances of a game's rules that can fire in a
reachable state, computed in Prolog (``gdl_ground.pl``) from the game's flat rules.

Symbols become numbers here, before anything leaves Python: Prolog sees the rules as
integers and lists only, and nothing of the game's text is ever a name in Prolog, C or
Python source. ``ground_game`` gives a ``GroundGame``: the fluents and moves of the
relaxation (supersets of the reachable ones) and the ground rules over numbered atoms,
or raises ``GroundingBudgetError`` (a budget of ``GroundingBudget`` exceeded) or
``CompileRefusedError`` (e.g. an unsafe rule).
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.bridge.errors import ReasonerError
from gdl2pl.bridge.swipl import interrupt_after
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.depgraph import dependency_graph
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import relation_key
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables as variables_of
from gdl2pl.vocabulary import INPUT_RELATIONS

from .errors import CompileRefusedError
from .errors import GroundingBudgetError

Raw = Any  # a fluent or move as the Prolog engine's states hold it: str or tuple

#: The keyword relations the grounder is told about, in gdl_ground.pl's order.
KEYWORD_RELATIONS = (
    ("init", 1),
    ("next", 1),
    ("legal", 2),
    ("terminal", 0),
    ("goal", 2),
    ("sees", 2),
)


@dataclass(frozen=True)
class GroundingBudget:
    """What grounding one game may take: wall-clock seconds, Prolog inferences, and
    ground rules. Past any of them ``GroundingBudgetError`` says which."""

    seconds: float = 30.0
    inferences: int = 1_000_000_000
    rules: int = 1_000_000


@dataclass(frozen=True)
class GroundGame:
    """The ground rules of a game over numbered atoms.

    ``fluents`` and ``moves`` are the relaxation's (every fluent and legal move of every
    reachable state is among them), in the Prolog engine's raw form; ``atoms[i]`` says
    what atom i is: ``("true", fluent index)``, ``("does", move index)`` or
    ``(relation name, raw arguments)``; ``rules`` are (head, positive, negative) atom
    ids."""

    roles: list[Raw]
    fluents: list[Raw]
    moves: list[tuple[int, Raw]]
    atoms: list[tuple[str, Any]]
    rules: list[Any]  # [head, [positive...], [negative...]] per ground rule
    seconds: float


class _Names:
    """Symbols as numbers: constants are ids, compounds ``[functor id, arg...]``."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, int], int] = {}
        self.keys: list[tuple[str, str, int]] = []

    def id(self, kind: str, name: str, arity: int) -> int:
        key = (kind, name, arity)
        i = self.ids.get(key)
        if i is None:
            i = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return i

    def term(self, t: Term, variables: dict[str, int]) -> Any:
        if isinstance(t, Var):
            return variables.setdefault(t.name, -1 - len(variables))
        if isinstance(t, Const):
            return self.id("c", t.name, 0)
        return [self.id("f", t.name, len(t.args)), *(self.term(a, variables) for a in t.args)]

    def relation(self, s: Sentence, variables: dict[str, int]) -> list[Any]:
        name, arity = relation_key(s)
        args = s.args if isinstance(s, Func) else ()
        return [self.id("r", name, arity), *(self.term(a, variables) for a in args)]

    def raw(self, py: Any) -> Raw:
        """The Prolog engine's raw form of a term in py form."""
        if isinstance(py, int):
            return self.keys[py][1]
        return (self.keys[py[0]][1], *(self.raw(a) for a in py[1:]))


def _encode(rules: list[FlatRule], names: _Names, dynamic: set[str]) -> list[list[Any]]:
    """The flat rules as data for gdl_ground.pl (see its header)."""

    def literal(lit: Any, variables: dict[str, int]) -> list[Any]:
        if isinstance(lit, Distinct):
            return ["ne", names.term(lit.left, variables), names.term(lit.right, variables)]
        if isinstance(lit, Not):
            inner = lit.body
            if isinstance(inner, Distinct):
                return ["eq", names.term(inner.left, variables), names.term(inner.right, variables)]
            if isinstance(inner, Not):
                return literal(inner.body, variables)
            return ["n" + literal(inner, variables)[0], *literal(inner, variables)[1:]]
        name = lit.name
        args = lit.args if isinstance(lit, Func) else ()
        if name == "true" and len(args) == 1:
            return ["t", names.term(args[0], variables)]
        if name == "does" and len(args) == 2:
            return ["m", *(names.term(a, variables) for a in args)]
        if name in INPUT_RELATIONS:
            raise CompileRefusedError(f"'{name}' with {len(args)} arguments has no meaning")
        return ["p" if name in dynamic else "s", names.relation(lit, variables)]

    out = []
    for r in rules:
        _check_safe(r)
        variables: dict[str, int] = {}
        head = names.relation(r.head, variables)
        body = [literal(b, variables) for b in r.body]
        out.append(["d" if r.head.name in dynamic else "s", head, body])
    return out


def _check_safe(r: FlatRule) -> None:
    """Refuse a rule with a variable that no positive literal of its body binds (in its
    head, a negation or a ``distinct``): the grounder needs every instance ground. Such a
    game fails ``gdl2pl check``; it reaches here only when run anyway."""
    bound = {
        v.name
        for lit in r.body
        if not isinstance(lit, (Not, Distinct))
        for v in variables_of(lit)  # type: ignore[arg-type]
    }
    places = [("the head", r.head), *(("a negation or distinct", b) for b in r.body)]
    for where, node in places:
        if where != "the head" and not isinstance(node, (Not, Distinct)):
            continue
        for v in variables_of(node):  # type: ignore[arg-type]
            if v.name not in bound:
                pos = getattr(v, "pos", None) or r.source.pos
                at = f" at {pos}" if pos else ""
                raise CompileRefusedError(
                    f"an unsafe rule{at}: the variable ?{v.name} in {where} occurs in no "
                    "positive literal of the body"
                )


def ground_game(
    rules: list[FlatRule],
    normalized: Description,
    roles: tuple[Raw, ...],
    game: str,
    budget: GroundingBudget | None = None,
) -> GroundGame:
    """Ground ``rules`` (the flat rules of ``normalized``, as the Prolog engine loaded
    them) within ``budget``; ``roles`` are the engine's raw roles (for the moves)."""
    budget = budget or GroundingBudget()
    graph = dependency_graph(normalized, key=str)
    dynamic = set(graph.dependents(INPUT_RELATIONS)) | set(INPUT_RELATIONS)
    names = _Names()
    try:
        data = _encode(rules, names, dynamic)
    except CompileRefusedError as e:
        raise CompileRefusedError(f"{game}: cannot be compiled: {e}") from None
    for rule in data:
        for lit in rule[2]:
            if lit[0] == "np":
                lit[0] = "nd"
    keywords = [names.id("r", n, a) for n, a in KEYWORD_RELATIONS]
    janus = runtime_with("gdl2pl.compiled", "gdl_ground.pl")
    start = time.perf_counter()
    paused = gc.isenabled()
    gc.disable()  # the answer is millions of small lists, none in a cycle
    try:
        with interrupt_after(budget.seconds):
            result = janus.apply_once(
                "gdl_ground", "ground_game", data, keywords, [budget.inferences, budget.rules]
            )
    except QueryInterrupted:
        result = ["interrupted"]
    except ReasonerError as e:
        raise CompileRefusedError(f"{game}: grounding failed: {e}") from None
    except Exception as e:  # janus' PrologError
        raise CompileRefusedError(f"{game}: grounding failed: {e}") from None
    finally:
        if paused:
            gc.enable()
    seconds = time.perf_counter() - start
    tag = result[0]
    if tag == "interrupted" or seconds > budget.seconds:  # the answer's transfer counts too
        raise GroundingBudgetError(
            f"{game}: grounding took more than its budget of {budget.seconds:g} s"
        )
    if tag == "budget":
        what, figure = result[1], result[2]
        if what == "inferences":
            text = f"more than its budget of {figure:,} Prolog inferences"
        elif what == "rules":
            text = f"more than {figure:,} ground rules"
        elif what == "tripwire":
            text = f"a term past the reasoner's bound {figure} (one that grows without end)"
        else:
            text = f"more memory than Prolog allows ({figure})"
        raise GroundingBudgetError(f"{game}: grounding needs {text}")
    if tag == "unsafe":
        raise CompileRefusedError(
            f"{game}: cannot be compiled: a rule leaves a variable unbound (an unsafe rule "
            "or negation)"
        )
    _, base, moves, atoms, ground = result
    fluents = [names.raw(f) for f in base]
    fluent_index = {f: i for i, f in enumerate(fluents)}
    role_index = {r: i for i, r in enumerate(roles)}
    move_list: list[tuple[int, Raw]] = []
    move_index: dict[tuple[int, Raw], int] = {}
    for r, m in moves:
        role = role_index.get(names.raw(r))
        if role is None:
            continue  # a legal move of something that is not a role: never asked
        move_index[(role, names.raw(m))] = len(move_list)
        move_list.append((role, names.raw(m)))
    table: list[tuple[str, Any]] = [("", None)] * len(atoms)
    for i, key in atoms:
        if key[0] == "t":
            table[i] = ("true", fluent_index[names.raw(key[1])])
        elif key[0] == "m":
            role = role_index.get(names.raw(key[1]))
            index = -1 if role is None else move_index.get((role, names.raw(key[2])), -1)
            table[i] = ("does", index)
        else:
            table[i] = (names.keys[key[0]][1], tuple(names.raw(a) for a in key[1:]))
    # janus' lists as they come ([head, positive, negative]): no copy of a million rules
    return GroundGame(list(roles), fluents, move_list, table, ground, seconds)
