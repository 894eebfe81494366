"""Grounding by the reasoner: the ground instances of a game's rules that can fire in a
reachable state, computed in Prolog (``gdl_ground.pl``) from the game's flat rules.

Symbols become numbers here, before anything leaves Python: Prolog sees the rules as
integers and lists only, and nothing of the game's text is ever a name in Prolog, C or
Python source. ``ground_network`` gives the game's ``Network``: the fluents and moves of
the relaxation (supersets of the reachable ones) and the ground rules over numbered
atoms in evaluation order, or raises ``GroundingBudgetError`` (a budget of
``GroundingBudget`` exceeded) or ``CompileRefusedError`` (e.g. an unsafe rule).
"""

from __future__ import annotations

import gc
import time
from array import array
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.bridge.errors import ReasonerError
from gdl2pl.bridge.swipl import interrupt_after
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import key_node
from gdl2pl.flatten import relation_graph
from gdl2pl.flatten import relation_key
from gdl2pl.flatten import relation_node
from gdl2pl.syntax import Const
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import clause_line
from gdl2pl.syntax import variables as variables_of
from gdl2pl.vocabulary import INPUT_RELATIONS

from .components import split_cycles
from .errors import CompileRefusedError
from .errors import GroundingBudgetError
from .network import GroundingStats
from .network import Network
from .network import standard_order

Raw = Any  # a fluent or move as the Prolog engine's states hold it: str or tuple

#: The nodes of true and does in ``relation_graph``.
_INPUTS = (key_node(("true", 1)), key_node(("does", 2)))

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
    """What grounding one game may take: wall-clock seconds (for the whole build:
    grounding, handing the network back, building and tuning it), Prolog inferences,
    ground rules (and facts of the relaxed model), the depth of a derived term, and the
    grounding worker's memory. Past any of them ``GroundingBudgetError`` says which."""

    seconds: float = 30.0
    inferences: int = 1_000_000_000
    rules: int = 2_000_000
    depth: int = 64
    #: bytes of address space the grounding worker may use (``compiled/build.py``)
    memory: int = 4 * 2**30


class _Names:
    """Symbols as numbers: constants are ids, compounds ``[functor id, arg...]``."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, int], int] = {}
        self.keys: list[tuple[str, str, int]] = []

    @classmethod
    def of(cls, keys: list[tuple[str, str, int]]) -> _Names:
        """The names whose ids are ``keys``' positions."""
        names = cls()
        names.keys = [(str(k), str(n), int(a)) for k, n, a in keys]
        names.ids = {k: i for i, k in enumerate(names.keys)}
        return names

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
        """The Prolog engine's raw form of a term in py form (iteratively: a term may be
        as deep as the grounder's depth bound, and Python's stack is not)."""
        if isinstance(py, int):
            return self.keys[py][1]
        # post-order over the nested lists, building tuples bottom-up
        out: list[Any] = []
        stack: list[tuple[Any, bool]] = [(py, False)]
        while stack:
            node, done = stack.pop()
            if isinstance(node, int):
                out.append(self.keys[node][1])
            elif done:
                k = len(node) - 1
                args = out[len(out) - k :] if k else []
                del out[len(out) - k :]
                out.append((self.keys[node[0]][1], *args))
            else:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node[1:]))
        return out[0]


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
        return ["p" if relation_node(lit) in dynamic else "s", names.relation(lit, variables)]

    out = []
    for r in rules:
        _check_safe(r)
        variables: dict[str, int] = {}
        head = names.relation(r.head, variables)
        body = [literal(b, variables) for b in r.body]
        out.append(["d" if relation_node(r.head) in dynamic else "s", head, body])
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


@dataclass(frozen=True)
class GroundingInput:
    """A game's rules as the grounder takes them (see gdl_ground.pl): numbered rules,
    the relations' strata, the keywords' relation ids, and ``names``, what each number
    stands for ((kind, name, arity) per id). Numbers, text and lists only (it crosses to
    the grounding worker as JSON)."""

    rules: list[Any]
    relations: list[list[int]]
    keywords: list[int]
    names: list[tuple[str, str, int]]
    #: per rule, where it comes from (``file:line:column``) and its text, for messages
    sources: list[str]


def grounding_input(rules: list[FlatRule], game: str) -> GroundingInput:
    """What the grounder needs of ``rules`` (a game's flat rules, as the Prolog engine
    loaded them): only the rules that what a network answers depends on, its relations
    told apart and ordered as the reasoner's (``relation_graph``: ``(w)`` is not ``w``).
    ``CompileRefusedError`` for a game that has no network (a legal, terminal or goal
    that depends on ``does``; an unsafe rule, named by place)."""
    graph = relation_graph(rules)
    _refuse_moves_in_state_questions(graph, game)
    dynamic = set(graph.dependents(_INPUTS)) | set(_INPUTS)
    relevant = _relevant(graph)
    names = _Names()
    kept = [r for r in rules if relation_node(r.head) in relevant]
    try:
        data = _encode(kept, names, dynamic)
    except CompileRefusedError as e:
        raise CompileRefusedError(f"{game}: cannot be compiled: {e}") from None
    for rule in data:
        for lit in rule[2]:
            if lit[0] == "np":
                lit[0] = "nd"
    keywords = [names.id("r", n, a) for n, a in KEYWORD_RELATIONS]
    sources = [_source(r) for r in kept]
    return GroundingInput(data, _strata(graph, names), keywords, list(names.keys), sources)


def _source(r: FlatRule) -> str:
    """Where a rule comes from and its text, for a message (``file:line:col: rule``)."""
    text = clause_line(r.source, 160)
    pos = r.source.pos
    return f"{pos}: {text}" if pos else text


def ground_network(
    inp: GroundingInput,
    roles: tuple[Raw, ...],
    game: str,
    budget: GroundingBudget | None = None,
) -> Network:
    """The network of ``inp``, grounded by the reasoner in this process within
    ``budget``; ``roles`` are the Prolog engine's raw roles. (A player grounds in a
    worker process instead: ``NetworkBuild``.)"""
    budget = budget or GroundingBudget()
    start = time.perf_counter()
    names = _Names.of(inp.names)
    janus = runtime_with("gdl2pl.compiled", "gdl_ground.pl")
    paused = gc.isenabled()
    gc.disable()  # the answer is large lists of ints, none in a cycle
    try:
        with interrupt_after(budget.seconds):
            result = janus.apply_once(
                "gdl_ground",
                "ground_game",
                inp.rules,
                inp.relations,
                inp.keywords,
                [budget.inferences, budget.rules, budget.depth],
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
        rule = result[3] if len(result) > 3 else -1
        at = f" (at the rule {inp.sources[rule]})" if 0 <= rule < len(inp.sources) else ""
        error = GroundingBudgetError(f"{game}: grounding needs {_figure(result[1], result[2])}{at}")
        error.profile = [tuple(p) for p in result[4]] if len(result) > 4 else []
        error.sizes = (
            [(_model_name(names, n), a, c) for n, a, c in result[5]] if len(result) > 5 else []
        )
        raise error
    if tag == "unsafe":
        raise CompileRefusedError(
            f"{game}: cannot be compiled: a rule leaves a variable unbound (an unsafe rule "
            "or negation)"
        )
    if tag == "unstratified":
        raise CompileRefusedError(
            f"{game}: cannot be compiled: a relation depends negatively on itself (its "
            "negation is not stratified by relation)"
        )
    return _network(result, names, roles, seconds)


def _model_name(names: _Names, predicate: str) -> str:
    """The relation, fluent or move a predicate of the grounder's model stands for:
    g<id> a relation, tg<id> (tc...) a fluent's functor, mg<id> a move's."""
    kind = {"g": "", "t": "true ", "m": "does "}.get(predicate[:1], "")
    rest = predicate[1:] if kind else predicate
    digits = rest.lstrip("g")
    if digits.isdigit() and int(digits) < len(names.keys):
        return kind + names.keys[int(digits)][1]
    return predicate


def _figure(what: str, figure: Any) -> str:
    """The budget a grounding went past, as a phrase."""
    if what == "inferences":
        return f"more than its budget of {figure:,} Prolog inferences"
    if what == "rules":
        return f"more than {figure:,} ground rules"
    if what == "tripwire":
        return f"a term deeper than {figure} (one that grows without end)"
    return f"more memory than Prolog allows ({figure})"


def _refuse_moves_in_state_questions(graph: Any, game: str) -> None:
    """A game whose legal, terminal or goal depends on ``does`` (an error ``gdl2pl
    check`` reports) has no network: those questions are asked of a state alone."""
    moving = graph.dependents([key_node(("does", 2))])
    for keyword, arity in (("legal", 2), ("terminal", 0), ("goal", 2)):
        if key_node((keyword, arity)) in moving:
            raise CompileRefusedError(
                f"{game}: cannot be compiled: {keyword} depends on does (the moves of "
                "the step being made), which a state alone cannot answer"
            )


def _relevant(graph: Any) -> set[str]:
    """The relations what a network answers depends on: legal, next, terminal, goal,
    sees and init (the initial state), with everything they use; and role, which the
    flat rules of a sees rule with an unbound role read (``gdl2pl.flatten``)."""
    roots = {key_node(k) for k in KEYWORD_RELATIONS} | {key_node(("role", 1))}
    out = set(roots)
    for r in roots:
        out |= graph.depends_on(r)
    return out


def _strata(graph: Any, names: _Names) -> list[list[int]]:
    """[relation id, arity, position of its strongly connected component in an
    evaluation order, 1 if recursive] for every relation of the encoded rules."""
    position = {}
    for i, comp in enumerate(graph.components()):
        for n in comp:
            position[n] = i
    recursive = graph.recursive()
    return [
        [i, arity, position.get(key_node((name, arity)), -1),
         int(key_node((name, arity)) in recursive)]
        for i, (kind, name, arity) in enumerate(names.keys)
        if kind == "r"
    ]


def _per_role(
    triples: list[Any], role_index: dict[Raw, int], names: _Names
) -> list[list[tuple[int, Raw]]]:
    """[role, value, atom] triples (goals, percepts) as per role (atom, raw value) pairs
    in standard order of the values; triples of something not a role are left out."""
    out: list[list[tuple[int, Raw]]] = [[] for _ in role_index]
    for r, v, atom in triples:
        role = role_index.get(names.raw(r))
        if role is not None:
            out[role].append((atom, names.raw(v)))
    for pairs in out:
        pairs.sort(key=lambda pair: standard_order(pair[1]))
    return out


def _network(result: list[Any], names: _Names, roles: tuple[Raw, ...], seconds: float) -> Network:
    """The network of the grounder's answer (see gdl_ground.pl)."""
    _, arrays, outputs, stats = result
    base, moves, n_atoms, rule_start, lit_start, lits, state_prog, move_prog = arrays
    legal_pairs, next_pairs, terminal, goal_triples, sees_triples, init = outputs
    fluents = [names.raw(f) for f in base]
    role_index = {r: i for i, r in enumerate(roles)}
    move_list = [(role_index.get(names.raw(r), -1), names.raw(m)) for r, m in moves]
    n_f, n_m = len(fluents), len(move_list)
    legal: list[list[tuple[int, int]]] = [[] for _ in roles]
    for m, atom in legal_pairs:
        role = move_list[m][0]
        if role >= 0:
            legal[role].append((atom, m))
    for ms in legal:
        ms.sort(key=lambda pair: standard_order(move_list[pair[1]][1]))
    goals = _per_role(goal_triples, role_index, names)
    sees = _per_role(sees_triples, role_index, names)
    facts, rounds, count, profile = stats
    return Network(
        n_fluents=n_f,
        n_moves=n_m,
        n_atoms=n_atoms,
        rule_start=array("i", rule_start),
        lit_start=array("i", lit_start),
        lits=array("i", lits),
        state_program=array("i", split_cycles(state_prog, rule_start, lit_start, lits)),
        move_program=array("i", split_cycles(move_prog, rule_start, lit_start, lits)),
        legal=legal,
        next=sorted((a, f) for a, f in next_pairs),
        terminal=terminal if terminal >= 0 else n_f + n_m,
        goals=goals,
        sees=sees,
        fluents=fluents,
        moves=move_list,
        init=list(init),
        stats=GroundingStats(seconds, facts, rounds, count, [tuple(p) for p in profile]),
    )
