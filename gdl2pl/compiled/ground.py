"""The grounder's input, and grounding: the ground instances of a game's rules that can
fire in a reachable state, as the game's ``Network``.

Symbols become numbers here, before anything leaves Python: the grounder sees the rules
as integers and lists only, and nothing of the game's text is ever a name in an ASP
program, C or Python source. A body literal is a list whose first element says what it
is (variables are negative integers, a constant an id, a compound ``[functor id,
arg...]``, a relation atom ``[relation id, arg...]``):

  ``[s, A]``  a positive literal over a static relation (independent of the state)
  ``[p, A]``  a positive literal over a dynamic relation
  ``[t, F]``  (true F)                  ``[m, R, M]``  (does R M)
  ``[ns, A]`` a negated static literal   ``[nd, A]``  a negated dynamic literal
  ``[nt, F]`` (not (true F))            ``[nm, R, M]``  (not (does R M))
  ``[ne, X, Y]`` (distinct X Y)         ``[eq, X, Y]``  (not (distinct X Y))
  ``[dm, A]`` a demanded relation's demand (``demand.py``)

``ground_network`` gives the game's ``Network``, grounded by clingo's grounder
(``grounder.py``) and assembled (``assemble.py``): the fluents and moves of the
relaxation (supersets of the reachable ones) and the ground rules over numbered atoms
in evaluation order; or it raises ``GroundingBudgetError`` (a budget of
``GroundingBudget`` exceeded, saying which and at which rule) or
``CompileRefusedError`` (e.g. an unsafe rule no demand binds).
"""

from __future__ import annotations

import time
from array import array
from dataclasses import dataclass
from dataclasses import field
from typing import Any

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

from .assemble import Assembled
from .assemble import assemble
from .components import split_cycles
from .demand import Unsafe
from .demand import transform
from .errors import CompileRefusedError
from .errors import GroundingBudgetError
from .grounder import Grounding
from .grounder import GroundingStop
from .grounder import Undetermined
from .grounder import ground
from .network import GroundingStats
from .network import Network
from .network import standard_order

Raw = Any  # a fluent or move as the Prolog engine's states hold it: str or tuple

#: How many facts the relaxed model may hold per ground rule of the budget (its static
#: facts become no rule; each dynamic one is a rule's head at least).
FACTS_PER_RULE = 4

#: The nodes of true and does in ``relation_graph``.
_INPUTS = (key_node(("true", 1)), key_node(("does", 2)))

#: The keyword relations the grounder is told about, in this order.
KEYWORD_RELATIONS = (
    ("init", 1),
    ("next", 1),
    ("legal", 2),
    ("terminal", 0),
    ("goal", 2),
    ("sees", 2),
    ("role", 1),
)
KEYWORDS = tuple(n for n, _ in KEYWORD_RELATIONS)


@dataclass(frozen=True)
class GroundingBudget:
    """What grounding one game may take: wall-clock seconds (for the whole build:
    grounding, handing the network back, building and tuning it), ground rules (and
    facts of the relaxed model), the depth of a derived term, and the grounding worker's
    memory. Past any of them ``GroundingBudgetError`` says which."""

    seconds: float = 30.0
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
    """The flat rules as the grounder takes them (``GroundingInput``)."""

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
        variables: dict[str, int] = {}
        head = names.relation(r.head, variables)
        body = [literal(b, variables) for b in _last_of_each(r.body)]
        out.append(["d" if relation_node(r.head) in dynamic else "s", head, body])
    return out


def _last_of_each(body: tuple[Any, ...]) -> list[Any]:
    """``body`` with each literal at its last place only: a guard before a recursive
    call is asked again once its variables are bound (``order_body``), which the
    grounder, joining in body order, takes as the one place of the literal."""
    seen: set[Any] = set()
    kept = []
    for lit in reversed(body):
        if lit not in seen:
            seen.add(lit)
            kept.append(lit)
    return kept[::-1]


def _unsafe_error(r: FlatRule, u: Unsafe) -> CompileRefusedError:
    """A rule with a variable that no positive literal of its body binds (in its head, a
    negation or a ``distinct``) and no use of its relation does: the grounder cannot
    ground it. Such a game fails ``gdl2pl check``; it reaches here only when run anyway."""
    variables: dict[str, int] = {}
    _Names().relation(r.head, variables)
    for b in r.body:
        for v in variables_of(b):  # type: ignore[arg-type]
            variables.setdefault(v.name, -1 - len(variables))
    name = next(n for n, i in variables.items() if i == u.var)
    nodes = [r.head, *r.body]
    pos = next(
        (v.pos for node in nodes for v in variables_of(node) if v.name == name and v.pos),  # type: ignore[arg-type]
        r.source.pos,
    )
    at = f" at {pos}" if pos else ""
    where = "the head" if u.in_head else "a negation or distinct"
    return CompileRefusedError(
        f"an unsafe rule{at}: the variable ?{name} in {where} occurs in no positive "
        "literal of the body, and no use of its relation binds it"
    )


@dataclass(frozen=True)
class GroundingInput:
    """A game's rules as the grounder takes them (see the module doc): numbered rules,
    the relations' strata, the keywords' relation ids (``KEYWORD_RELATIONS``), ``names``,
    what each number stands for ((kind, name, arity) per id), and the demand's rules.
    Numbers, text and lists only (it crosses to the grounding worker as JSON)."""

    rules: list[Any]
    relations: list[list[int]]
    keywords: list[int]
    names: list[tuple[str, str, int]]
    #: per rule, where it comes from (``file:line:column``) and its text, for messages
    sources: list[str]
    #: the demand's rules (``demand.py``): [[relation, argument...], body]
    demand: list[Any] = field(default_factory=list)


def grounding_input(rules: list[FlatRule], game: str) -> GroundingInput:
    """What the grounder needs of ``rules`` (a game's flat rules, as the Prolog engine
    loaded them): only the rules that what a network answers depends on (and the
    roles), its relations told apart and ordered as the reasoner's (``relation_graph``:
    ``(w)`` is not ``w``), with their demand. ``CompileRefusedError`` for a game that has
    no network (a legal, terminal or goal that depends on ``does``; an unsafe rule that
    no demand binds, named by place)."""
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
    by_role = [keywords[KEYWORDS.index(k)] for k in ("legal", "goal", "sees")]
    data, demand, unsafe = transform(data, keywords, by_role)
    if unsafe:
        error = _unsafe_error(kept[unsafe[0].rule], unsafe[0])
        raise CompileRefusedError(f"{game}: cannot be compiled: {error}")
    _refuse_unstratified(data, _strata(graph, names), game)
    sources = [_source(r) for r in kept]
    return GroundingInput(data, _strata(graph, names), keywords, list(names.keys), sources, demand)


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
    """The network of ``inp``, grounded by clingo's grounder in this process within
    ``budget``; ``roles`` are the Prolog engine's raw roles. (A player grounds in a
    worker process instead, whose limits bound what runs between the budget's checks:
    ``NetworkBuild``.)"""
    budget = budget or GroundingBudget()
    start = time.perf_counter()
    names = _Names.of(inp.names)
    g = Grounding(
        rules=inp.rules,
        demand=inp.demand,
        keywords=inp.keywords,
        max_facts=FACTS_PER_RULE * budget.rules,
        max_rules=budget.rules,
        max_depth=budget.depth,
        deadline=time.monotonic() + budget.seconds,
    )
    try:
        gp = ground(g)
    except GroundingStop as e:
        raise _stopped(e, inp, names, game, budget) from None
    except Undetermined as e:
        raise CompileRefusedError(
            f"{game}: cannot be compiled: the relaxed model leaves atoms of "
            f"{_predicate_name(names, e.predicate)} undetermined (a cycle through not), "
            "which the network would read as false"
        ) from None
    assembly = time.perf_counter()
    strata = {rel: (pos, bool(rec)) for rel, _, pos, rec in inp.relations}
    net = assemble(gp, strata, {i: r[1][0] for i, r in enumerate(inp.rules)})
    seconds = time.perf_counter() - start
    if seconds > budget.seconds:
        raise GroundingBudgetError(
            f"{game}: grounding took more than its budget of {budget.seconds:g} s"
        )
    if len(net.lit_start) - 1 > budget.rules:  # (a count over the network's atoms)
        most = max(net.rules_of, key=net.rules_of.__getitem__)
        rule = next((i for i, r in enumerate(inp.rules) if r[1][0] == most), -1)
        at = f" (at the rule {inp.sources[rule]})" if rule >= 0 else ""
        raise GroundingBudgetError(f"{game}: grounding needs {_figure('rules', budget.rules)}{at}")
    phases = [*gp.phases, ("assembly", time.perf_counter() - assembly)]
    return _network(net, names, roles, seconds, gp.model_facts, phases)


def _refuse_unstratified(rules: list[Any], relations: list[list[int]], game: str) -> None:
    """A static rule that negates a relation of its own stratum: no exact static model."""
    stratum = {rel: pos for rel, _, pos, _ in relations}
    for kind, head, body in rules:
        if kind == "s" and any(
            lit[0] == "ns" and stratum.get(lit[1][0]) == stratum.get(head[0]) for lit in body
        ):
            raise CompileRefusedError(
                f"{game}: cannot be compiled: a relation depends negatively on itself "
                "(its negation is not stratified by relation)"
            )


def _stopped(
    e: GroundingStop, inp: GroundingInput, names: _Names, game: str, budget: GroundingBudget
) -> GroundingBudgetError:
    """The budget error of a grounding stopped past a budget: what, and at which rule."""
    if e.what == "seconds":
        return GroundingBudgetError(
            f"{game}: grounding took more than its budget of {budget.seconds:g} s"
        )
    rule = _culprit(e.sizes, inp) if e.rule is None else e.rule
    if rule >= len(inp.rules):  # a demand's rule: the rule whose use it is
        rule = inp.demand[rule - len(inp.rules)][2]
    at = f" (at the rule {inp.sources[rule]})" if 0 <= rule < len(inp.sources) else ""
    error = GroundingBudgetError(f"{game}: grounding needs {_figure(e.what, e.figure)}{at}")
    error.sizes = [(_predicate_name(names, n), a, c) for n, a, c in e.sizes if n[:1] in "armtuwxd"]
    return error


def _culprit(sizes: list[tuple[str, int, int]], inp: GroundingInput) -> int:
    """The rule whose atoms grew most when a budget stopped the grounding (a chain's
    atoms name their rule; a relation's, its first rule), or -1."""
    grown = [s for s in sizes if s[0][:1] in ("a", "r", "x", "d") and s[0][1:2].isdigit()]
    if not grown:
        return -1
    name = max(grown, key=lambda s: s[2])[0]
    if name[0] == "x":
        return int(name[1:].split("_")[0])
    rel = int(name[1:])
    return next((i for i, (_, head, _) in enumerate(inp.rules) if head[0] == rel), -1)


def _predicate_name(names: _Names, predicate: str) -> str:
    """What a predicate of the grounder's programs stands for (a relation's name, the
    demand of one, true, does, a chain's atoms)."""
    kind, number = predicate[:1], predicate[1:]
    if kind in ("a", "r", "d") and number.isdigit() and int(number) < len(names.keys):
        name = names.keys[int(number)][1]
        return f"demand of {name}" if kind == "d" else name
    if kind == "x":
        return f"chain of rule {number.split('_')[0]}"
    return {"u": "true", "w": "does", "t": "true", "m": "does"}.get(predicate, predicate)


def _figure(what: str, figure: Any) -> str:
    """The budget a grounding went past, as a phrase."""
    if what == "rules":
        return f"more than {figure:,} ground rules"
    if what == "facts":
        return f"more than {figure:,} facts in its relaxed model"
    if what == "tripwire":
        return f"a term deeper than {figure} (one that grows without end)"
    return f"more memory than it may have ({figure})"


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
    sees, init (the initial state) and role (the roles a demand may ask for, and which
    the flat rules of a sees rule with an unbound role read: ``gdl2pl.flatten``), with
    everything they use."""
    roots = {key_node(k) for k in KEYWORD_RELATIONS}
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


def _network(
    a: Assembled,
    names: _Names,
    roles: tuple[Raw, ...],
    seconds: float,
    facts: int,
    phases: list[tuple[str, float]],
) -> Network:
    """The network of an assembled ground program, its terms in raw form."""
    fluents = [names.raw(f) for f in a.fluents]
    role_index = {r: i for i, r in enumerate(roles)}
    move_list = [(role_index.get(names.raw(r), -1), names.raw(m)) for r, m in a.moves]
    n_f, n_m = len(fluents), len(move_list)
    legal: list[list[tuple[int, int]]] = [[] for _ in roles]
    for m, atom in a.legal:
        role = move_list[m][0]
        if role >= 0:
            legal[role].append((atom, m))
    for ms in legal:
        ms.sort(key=lambda pair: standard_order(move_list[pair[1]][1]))
    n_rules = len(a.lit_start) - 1
    relations = sorted(
        ((names.keys[rel][1] if 0 <= rel < len(names.keys) else str(rel), n)
         for rel, n in a.rules_of.items()),
        key=lambda p: -p[1],
    )
    return Network(
        n_fluents=n_f,
        n_moves=n_m,
        n_atoms=a.n_atoms,
        rule_start=array("i", a.rule_start),
        lit_start=array("i", a.lit_start),
        lits=array("i", a.lits),
        state_program=array("i", split_cycles(a.state_program, a.rule_start, a.lit_start, a.lits)),
        move_program=array("i", split_cycles(a.move_program, a.rule_start, a.lit_start, a.lits)),
        legal=legal,
        next=sorted(a.next),
        terminal=a.terminal if a.terminal >= 0 else n_f + n_m,
        goals=_per_role(a.goals, role_index, names),
        sees=_per_role(a.sees, role_index, names),
        fluents=fluents,
        moves=move_list,
        init=list(a.init),
        stats=GroundingStats(seconds, facts, n_rules, phases, relations),
    )
