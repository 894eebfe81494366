"""GDL -> SWI-Prolog: the code generator.

``translate(description)`` returns a ``Translation`` whose ``text`` is one SWI-Prolog
module, meant to be read by people as well as loaded by ``prolog/gdl_runtime.pl``.

Naming (injective, so nothing in a game can reach a Prolog builtin):

- GDL's keyword relations keep their names: ``role/1``, ``base/1``, ``input/2``,
  ``init/1``, ``legal/2``, ``next/1``, ``goal/2``, ``terminal/0``, and GDL-II's
  ``sees/2`` and ``percept/2``;
- every other relation ``r`` becomes ``r_r`` (``(line ?x)`` -> ``r_line(X)``);
- the state is stored per fluent functor: ``(true (cell ?x ?y b))`` ->
  ``true_cell(X, Y, b)`` (multi-argument indexing for free); a fluent whose functor
  is not known statically goes through the dispatcher ``true/1``;
- ``(does ?r ?m)`` -> ``does(R, M)``; constants and function symbols are quoted atoms
  with the symbol's exact text (``'1'``, ``'not-filled'``).

Evaluation strategy:

- relations that do not depend on ``true``/``does`` and are defined by rules are
  computed once per game: their rules are emitted as ``static_r`` (tabled when
  recursive) and, when the game is loaded, the runtime asserts the facts they derive
  as ``r_r`` (dynamic, shared by every state and thread), which is what every other
  rule calls -- plain facts with SWI's multi-argument indexing. Recursive ones that
  build compound terms (lists, counters) are instead tabled and answered on demand;
- state-dependent relations are plain Prolog, except those that are recursive, which
  are tabled for termination; when the state (or the joint move) changes, the runtime
  abolishes their tables if a query that may have filled them ran since
  (``gdl_query_tables/2``), so no answer leaks from one state into another;
- ``not`` -> ``\\+`` (``tnot/1`` on a tabled relation of the same recursive
  component), ``distinct`` -> ``\\==``, both placed after the literals binding them
  (``gdl2pl.flatten.order_body``);
- a positive literal that is ground when it is called (its variables all bound by the
  literals before it) holds at most once in GDL, so it is written ``\\+ \\+ G``: proved
  once, not once per proof (nine such literals of seven proofs each would otherwise make
  7^9 proofs of one goal).

The translator works in two steps: ``plan`` decides, from the dependency graph
(``gdl2pl.depgraph``), what each relation becomes (static, recursive, tabled, state- or
move-dependent) and which fluent stores exist; ``emit`` writes the Prolog text of a plan.
"""

from __future__ import annotations

from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import graph_of
from gdl2pl.flatten import BodyLiteral
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import TranslationError
from gdl2pl.flatten import called_sentence
from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import key_node
from gdl2pl.flatten import relation_graph
from gdl2pl.flatten import relation_key
from gdl2pl.prolog_text import VariableNamer
from gdl2pl.prolog_text import comment_text
from gdl2pl.prolog_text import quote_atom
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables
from gdl2pl.syntax import walk
from gdl2pl.vocabulary import GDL_2010_RELATIONS
from gdl2pl.vocabulary import GDL_II_RELATIONS
from gdl2pl.vocabulary import KEYWORD_RELATIONS
from gdl2pl.vocabulary import RANDOM_ROLE
from gdl2pl.vocabulary import is_keyword_relation
from gdl2pl.written import answer_syntax
from gdl2pl.written import clause_text

#: Keyword relations a game defines (``true`` and ``does`` are the runtime's inputs).
DEFINED_KEYWORDS = {k: a for k, a in KEYWORD_RELATIONS.items() if k not in ("true", "does")}

PredKey = tuple[str, int]
TRUE: PredKey = ("true", 1)
DOES: PredKey = ("does", 2)

#: The store of fluents that have no store of their own: ``true_(Fluent)``.
FALLBACK_STORE = "true_"


def rule_variables(r: FlatRule) -> VariableNamer:
    """The Prolog names of a flattened rule's variables (``_X`` for one used once)."""
    counts: dict[str, int] = defaultdict(int)
    for node in (r.head, *r.body):
        for v in walk(node):
            if isinstance(v, Var):
                counts[v.name] += 1
    return VariableNamer(dict(counts))


def rule_comment(r: FlatRule, source_name: str, syntax: str = "kif") -> str:
    """The comment above a clause: where its GDL rule is, which ``or`` branch, and the
    rule itself, whole, in ``syntax`` (one line: the clause stands right under it)."""
    pos = r.source.pos
    where = f"{source_name}:{pos.line}" if pos else source_name
    if r.branches > 1:
        where += f" (branch {r.branch} of {r.branches} of the rule's or)"
    return comment_text(f"% {where}  {clause_text(r.source, syntax)}")


def predicate_name(name: str, arity: int) -> str:
    """The Prolog predicate name of the GDL relation ``name``/``arity`` (unquoted): a
    keyword relation keeps its name, any other relation (``base/3`` of a game older than
    GDL 2010 included) is ``r_name``."""
    return name if is_keyword_relation(name, arity) else "r_" + name


def static_name(name: str) -> str:
    """The rules of a state-independent relation; ``predicate_name`` then holds the facts
    they derive, which the runtime computes once when the game is loaded."""
    return "static_" + name


def store_name(functor: str) -> str:
    """The dynamic predicate holding the fluents ``(functor a1 ... an)`` (or the constant
    ``functor``), unquoted; stores of one functor are told apart by their Prolog arity.
    Injective, and ``FALLBACK_STORE`` (``true_``) is outside its range: no GDL symbol is
    empty."""
    return "true_" + functor


@dataclass(frozen=True)
class Translation:
    """The generated module and what the runtime and the explainer need to know about it."""

    module: str
    text: str
    roles: tuple[str, ...]
    stores: tuple[tuple[str, int], ...] = field(default=())
    #: For each clause of ``text``: the 1-based line where its head starts (the line
    #: after its comment), and the flat rule it was written from.
    origins: tuple[tuple[int, FlatRule], ...] = field(default=())
    #: GDL-2010 keywords (``base``, ``input``) the game uses as ordinary relations, with
    #: other arities: it predates GDL 2010 and declares no base or input.
    pre_2010: tuple[str, ...] = field(default=())
    #: A GDL-II game: it declares the role ``random`` (chance) or uses ``sees`` or
    #: ``percept`` (hidden information); see ``is_gdl_ii``.
    gdl_ii: bool = False


# -- the plan -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What each relation of a game becomes in Prolog; computed by ``plan``."""

    rules: tuple[FlatRule, ...]
    defined: frozenset[PredKey]
    #: Each relation's strongly connected component (over positive and negative edges).
    component: dict[PredKey, int]
    #: On a cycle of positive dependencies: tabled, for termination.
    recursive: frozenset[PredKey]
    #: Depending on the state (``true``) or on the joint move (``does``).
    state_dependent: frozenset[PredKey]
    move_dependent: frozenset[PredKey]
    #: Computed once at load: ``static_r`` rules, whose facts the runtime asserts as ``r_r``.
    static: tuple[PredKey, ...]
    #: Fluent stores ``true_F/N``, one per functor and arity seen in true/init/next/base.
    stores: tuple[tuple[str, int], ...]
    #: Relations called (or keyword relations) that no clause defines: always false.
    undefined: tuple[PredKey, ...]
    #: Relations derived by rules with a body (more than one proof is possible).
    derived: frozenset[PredKey]
    #: Table groups: recursive static, recursive on demand, recursive state-dependent.
    static_tabled: tuple[PredKey, ...]
    on_demand_tabled: tuple[PredKey, ...]
    true_tables: tuple[PredKey, ...]
    does_tables: tuple[PredKey, ...]
    #: (keyword query, kind of tables it may fill).
    query_tables: tuple[tuple[str, str], ...]
    roles: tuple[str, ...]
    #: GDL-2010 keyword relations used with another arity (as in older games).
    pre_2010: tuple[str, ...] = ()
    #: Declares the role ``random`` or uses ``sees``/``percept`` (``is_gdl_ii``).
    gdl_ii: bool = False

    @property
    def tabled(self) -> frozenset[PredKey]:
        return self.recursive & self.defined

    def same_component(self, a: PredKey, b: PredKey) -> bool:
        return self.component.get(a) == self.component.get(b)


def _key_of(node: str) -> PredKey:
    name, arity = node.rsplit("/", 1)
    return (name, int(arity))


def _graphs(rules: list[FlatRule]) -> tuple[DependencyGraph, DependencyGraph]:
    """The dependency graph over ``name/arity`` keys, and its positive edges alone."""
    full = relation_graph(rules)
    positive = graph_of(full.nodes, [e for e in full.edges if not e.negative], full.defined)
    return full, positive


def _builds_terms(r: FlatRule) -> bool:
    """True if the rule's head builds compound terms from variables (e.g. lists): a
    recursive relation doing so may have a huge or infinite extension, so it is
    evaluated on demand (tabled) instead of being computed whole at load time."""
    args = r.head.args if isinstance(r.head, Func) else ()
    return any(
        isinstance(a, Func) and any(isinstance(n, Var) for n in walk(a)) for a in args
    )


def _stores(rules: list[FlatRule]) -> tuple[tuple[str, int], ...]:
    stores: dict[tuple[str, int], None] = {}

    def add(f: Term) -> None:
        if isinstance(f, Func) and f.args:
            stores.setdefault((f.name, len(f.args)))
        elif isinstance(f, Const):
            stores.setdefault((f.name, 0))

    for r in rules:
        if relation_key(r.head) in (("next", 1), ("init", 1), ("base", 1)):
            add(r.head.args[0])  # type: ignore[union-attr]
        for lit in r.body:
            s = called_sentence(lit)
            if s is not None and relation_key(s) == TRUE:
                add(s.args[0])  # type: ignore[union-attr]
    return tuple(stores)


def plan(rules: list[FlatRule]) -> Plan:
    """Decide what every relation becomes, from the dependency graph of ``rules``."""
    graph, positive = _graphs(rules)
    by_head: dict[PredKey, list[FlatRule]] = defaultdict(list)
    for r in rules:
        by_head[relation_key(r.head)].append(r)
    defined = frozenset(by_head)
    recursive = frozenset(map(_key_of, positive.recursive()))
    component = {
        _key_of(n): i for i, comp in enumerate(graph.components()) for n in comp
    }
    on_true = frozenset(map(_key_of, graph.dependents([key_node(TRUE)])))
    on_does = frozenset(map(_key_of, graph.dependents([key_node(DOES)])))
    changing_set = on_true | on_does
    static = sorted(
        (
            key
            for key, rs in by_head.items()
            if key not in changing_set
            and any(r.body for r in rs)
            and not (key in recursive and any(_builds_terms(r) for r in rs))
        ),
        key=lambda k: (component[k], k),
    )
    called = {relation_key(s) for r in rules for s in map(called_sentence, r.body) if s is not None}
    roles = tuple(
        r.head.args[0].name  # type: ignore[union-attr]
        for r in rules
        if relation_key(r.head) == ("role", 1) and isinstance(r.head.args[0], Const)  # type: ignore[union-attr]
    )
    gdl_ii = is_gdl_ii(roles, defined | called)
    undefined = sorted(called - defined - {TRUE, DOES})
    undefined += [
        k
        for k in DEFINED_KEYWORDS.items()
        if k not in defined and k not in undefined and (gdl_ii or k[0] not in GDL_II_RELATIONS)
    ]
    tabled = recursive & defined
    state_tabled = sorted(k for k in tabled if k not in static)
    changing = [k for k in state_tabled if k in changing_set]
    true_tables = tuple(k for k in changing if k not in on_does)
    does_tables = tuple(k for k in changing if k in on_does)
    query_tables = tuple(
        (name, kind)
        for name, arity in DEFINED_KEYWORDS.items()
        if (name, arity) in defined
        for kind, keys in (("true", true_tables), ("does", does_tables))
        if (set(map(_key_of, graph.depends_on(key_node((name, arity))))) | {(name, arity)})
        & set(keys)
    )
    return Plan(
        rules=tuple(rules),
        defined=defined,
        component=component,
        recursive=recursive,
        state_dependent=on_true,
        move_dependent=on_does,
        static=tuple(static),
        stores=_stores(rules),
        undefined=tuple(undefined),
        derived=frozenset(k for k, rs in by_head.items() if any(r.body for r in rs)),
        static_tabled=tuple(sorted(k for k in tabled if k in static)),
        on_demand_tabled=tuple(k for k in state_tabled if k not in changing_set),
        true_tables=true_tables,
        does_tables=does_tables,
        query_tables=query_tables,
        roles=roles,
        pre_2010=tuple(
            sorted(
                {n for n, a in defined | called if n in GDL_2010_RELATIONS}
                - {n for n, a in defined | called if is_keyword_relation(n, a)}
            )
        ),
        gdl_ii=gdl_ii,
    )


def is_gdl_ii(roles: Iterable[str], relations: Iterable[PredKey]) -> bool:
    """True for a GDL-II game: one of its ``roles`` is ``random``, or one of its
    ``relations`` (name, arity) is ``sees/2`` or ``percept/2``."""
    return any(r.casefold() == RANDOM_ROLE for r in roles) or any(
        n in GDL_II_RELATIONS and is_keyword_relation(n, a) for n, a in relations
    )


# -- emitting Prolog text -------------------------------------------------------------------

#: The opening of the comment that says how to read a translated module (this one, and
#: the standalone one of ``standalone.py``): clauses and rules.
def how_to_read(syntax: str) -> str:
    """The header's first paragraph: how a clause relates to its rule, quoted in
    ``syntax``."""
    written = "infix" if syntax == "infix" else "KIF"
    return f"""\
%   How to read this module
%   -----------------------
%   Each clause below is one GDL rule, or one branch of a rule whose body has an
%   'or' (the rule is then split into one clause per branch); the comment above a
%   clause gives its source line, the branch, and the rule in {written}.
%
"""


_HEADER = """\
%   :- set_module(base(system)): the module sees only SWI-Prolog's built-ins, not
%      the user's predicates, so a game's relation can never call or clash with them.
%   :- set_module(class(temporary)): the module is destroyed when the game is closed.
%
%   Names: a keyword relation keeps its name (legal/2, goal/2, next/1, ...); every
%   other relation r becomes r_r; constants are quoted atoms with the GDL text.
%   The state: (true (cell 1 1 b)) is the fact true_cell('1', '1', b) of the
%   thread-local store true_cell/3 (one store per fluent functor and arity, so
%   Prolog indexes on every argument); fluents whose functor is not known when the
%   game is translated go to the fallback store true_/1, and true/1 looks a fluent
%   up in whichever store holds it. The joint move is held in does/2. The runtime
%   (prolog/gdl_runtime.pl) fills these in for each state.
%   static_r: the rules of a relation r that does not depend on the state; the
%   runtime computes their facts once, when the game is loaded, and asserts them
%   as r_r, which every other rule calls.
%   \\+ G is negation as failure (GDL's not); X \\== Y is (distinct X Y); tnot/1
%   is the tabled negation used inside a recursive component; \\+ \\+ G proves a
%   literal that is ground when it is called once only (it holds or it does not).
"""

#: The header's lines on guards, in a module that has one (``guarded``).
GUARD_NOTE = """%   ( ground(X) -> \\+ G ; true ), before a recursive call: a negation that guards
%   the recursion when the caller bound X; it is asked again once the body binds X.
"""


def guarded(goal: str, unbound: list[str]) -> str:
    """A negation ``goal`` written before a recursive call as a guard while the head
    variables ``unbound`` (Prolog names) are not bound by the body yet: asked only when
    the caller bound them (``order_body`` asks it again once the body binds them)."""
    if not unbound:
        return goal
    test = ", ".join(f"ground({v})" for v in unbound)
    return f"( {test} -> {goal} ; true )"


def guards(r: FlatRule) -> list[bool]:
    """For each literal of ``r``'s body, whether it is a guard (see ``guarded``): a
    negation with a variable no positive literal before it binds, asked again later in
    the body (``order_body``). An unsafe negation, never asked again, is no guard."""
    later = Counter(r.body)
    bound: set[str] = set()
    out = []
    for lit in r.body:
        later[lit] -= 1
        names = {v.name for v in variables(lit)}
        out.append(isinstance(lit, Not) and not names <= bound and later[lit] > 0)
        if isinstance(lit, Const | Func):
            bound |= names
    return out


def has_guard(rules: Iterable[FlatRule]) -> bool:
    """Some rule's body has a guard (``guards``)."""
    return any(any(guards(r)) for r in rules)


def prolog_clause(
    r: FlatRule,
    head: str,
    comment: str,
    literal: Callable[[BodyLiteral, set[str], bool], str],
) -> str:
    """The clause of ``r`` under its ``comment``, each body literal written by
    ``literal(lit, bound, guard)``: ``bound`` the variables the positive literals before
    it bind, ``guard`` whether it is a guard (``guards``)."""
    bound: set[str] = set()
    goals = []
    for lit, guard in zip(r.body, guards(r), strict=True):
        goals.append(literal(lit, bound, guard))
        if isinstance(lit, Const | Func):
            bound.update(v.name for v in variables(lit))
    body = ",\n    ".join(goals)
    return f"{comment}\n{head} :-\n    {body}."


def unbound_names(lit: BodyLiteral, names: VariableNamer, bound: set[str]) -> list[str]:
    """The Prolog names of the variables of ``lit`` not in ``bound``, once each, in order."""
    return list(dict.fromkeys(names[v.name] for v in variables(lit) if v.name not in bound))


class _Emitter:
    """Writes the Prolog text of a plan."""

    def __init__(self, p: Plan, source_name: str, syntax: str = "kif") -> None:
        self.p = p
        self.source_name = source_name
        self.syntax = syntax

    def term(self, t: Term, names: VariableNamer) -> str:
        if isinstance(t, Var):
            return names[t.name]
        if isinstance(t, Const):
            return quote_atom(t.name)
        args = ", ".join(self.term(a, names) for a in t.args)
        return f"{quote_atom(t.name)}({args})"

    def pred_name(self, key: PredKey, context: PredKey | None) -> str:
        """The predicate a literal of relation ``key`` calls from a rule for ``context``
        (``None`` for a head): ``static_r`` inside r's own component, else ``r_r``."""
        if key in self.p.static and (context is None or self.p.same_component(key, context)):
            return static_name(key[0])
        return predicate_name(*key)

    def call(self, s: Sentence, names: VariableNamer, context: PredKey | None = None) -> str:
        key = relation_key(s)
        args = s.args if isinstance(s, Func) else ()
        if key == TRUE:
            f = args[0]
            if isinstance(f, Func) and f.args:
                inner = ", ".join(self.term(a, names) for a in f.args)
                return f"{quote_atom(store_name(f.name))}({inner})"
            if isinstance(f, Const):
                return quote_atom(store_name(f.name))
            if isinstance(f, Func):  # a zero-arity compound (foo): the fallback store
                return f"{FALLBACK_STORE}({self.term(f, names)})"
            return f"true({self.term(f, names)})"
        if s.name in ("true", "does") and key != DOES:
            raise TranslationError(f"'{s.name}' used with {len(args)} argument(s)")
        name = "does" if key == DOES else quote_atom(self.pred_name(key, context))
        if not args:
            return name
        return f"{name}({', '.join(self.term(a, names) for a in args)})"

    def literal(
        self, lit: BodyLiteral, head: PredKey, names: VariableNamer, bound: set[str], guard: bool
    ) -> str:
        if isinstance(lit, Distinct):
            return f"{self.term(lit.left, names)} \\== {self.term(lit.right, names)}"
        if isinstance(lit, Not):
            text = self.negation(lit, head, names)
            return guarded(text, unbound_names(lit, names, bound)) if guard else text
        text = self.call(lit, names, head)
        key = relation_key(lit)
        if (
            key in self.p.derived
            and not self.p.same_component(key, head)
            and all(v.name in bound for v in variables(lit))
        ):
            return f"\\+ \\+ {text}"  # ground when called: it holds at most once
        return text

    def negation(self, lit: Not, head: PredKey, names: VariableNamer) -> str:
        if isinstance(lit.body, Distinct):
            return f"{self.term(lit.body.left, names)} == {self.term(lit.body.right, names)}"
        if isinstance(lit.body, Not):
            return f"\\+ \\+ {self.call(lit.body.body, names, head)}"  # type: ignore[arg-type]
        inner = self.call(lit.body, names, head)  # type: ignore[arg-type]
        key = relation_key(lit.body)  # type: ignore[arg-type]
        if self.p.same_component(key, head) and key in self.p.tabled:
            return f"tnot({inner})"
        return f"\\+ {inner}"

    def clause(self, r: FlatRule) -> str:
        names = rule_variables(r)
        head = self.call(r.head, names, None)
        comment = rule_comment(r, self.source_name, self.syntax)
        if not r.body:
            return f"{comment}\n{head}."
        key = relation_key(r.head)
        return prolog_clause(
            r, head, comment, lambda lit, bound, guard: self.literal(lit, key, names, bound, guard)
        )

    def pi(self, key: PredKey, name: str | None = None) -> str:
        return f"{quote_atom(name or predicate_name(*key))}/{key[1]}"

    def declarations(self, module: str) -> list[str]:
        p = self.p
        store_pis = [f"{quote_atom(store_name(n))}/{ar}" for (n, ar) in p.stores]
        store_pis += [f"{FALLBACK_STORE}/1", "does/2"]
        out = [
            comment_text(f"%   {module}: translated by gdl2pl from {self.source_name}."),
            "%",
            *how_to_read(self.syntax).splitlines(),
            *_HEADER.splitlines(),
            *(GUARD_NOTE.splitlines() if has_guard(p.rules) else []),
            "",
            f":- module({quote_atom(module)}, []).",
            ":- set_module(base(system)).",
            ":- set_module(class(temporary)).",
            "",
            "% The state, and the joint move while the next state is computed:",
            "% filled in by the runtime.",
            f":- thread_local {', '.join(store_pis)}.",
        ]
        if p.undefined:
            out.append("% Relations used but never defined: they are always false.")
            out.append(f":- dynamic {', '.join(self.pi(k) for k in p.undefined)}.")
        if p.static:
            out.append("% Independent of the state: the runtime asserts the facts that the")
            out.append("% static_* rules derive, once, when the game is loaded.")
            out.append(f":- dynamic {', '.join(self.pi(k) for k in p.static)}.")
        heads = sorted(self.pi(k, self.pred_name(k, None)) for k in p.defined)
        if heads:
            out.append(f":- discontiguous {', '.join(heads)}.")
        groups = (
            (
                "% Recursive, independent of the state: tabled while the facts are computed.",
                [self.pi(k, static_name(k[0])) for k in p.static_tabled],
            ),
            (
                "% Recursive, independent of the state, building terms: answered on demand.",
                [self.pi(k) for k in p.on_demand_tabled],
            ),
            (
                "% Recursive and state-dependent: tables are cleared when the state changes.",
                [self.pi(k) for k in (*p.true_tables, *p.does_tables)],
            ),
        )
        for comment, pis in groups:
            if pis:
                out.append(comment)
                out.append(f":- table {', '.join(sorted(pis))}.")
        out.append("")
        return out

    def interface(self) -> list[str]:
        p = self.p
        out = ["% ---- Interface to the runtime ----", ""]
        dispatch, stores = [], []
        for n, ar in p.stores:
            vs = ", ".join(f"A{i + 1}" for i in range(ar))
            store = quote_atom(store_name(n))
            fluent, fact = quote_atom(n), store
            if ar:
                fluent, fact = f"{fluent}({vs})", f"{store}({vs})"
            dispatch.append(f"true({fluent}) :- {fact}.")
            stores.append(f"gdl_store({fluent}, {fact}).")
        out.append("% true(?Fluent): the dispatcher for fluents not known statically.")
        out += [*dispatch, f"true(F) :- {FALLBACK_STORE}(F).", ""]
        out.append("% gdl_store(+Fluent, -Fact): where the runtime asserts a fluent.")
        out += [*stores, f"gdl_store(F, {FALLBACK_STORE}(F)).", ""]
        out.append("% gdl_static(?Facts, ?Rules): what the runtime computes at load, in order.")
        if not p.static:
            out.append("gdl_static(_, _) :- fail.")
        for k in p.static:
            vs = ", ".join(f"A{i + 1}" for i in range(k[1]))
            args = f"({vs})" if k[1] else ""
            fact, rules = quote_atom(predicate_name(*k)), quote_atom(static_name(k[0]))
            out.append(f"gdl_static({fact}{args}, {rules}{args}).")
        out.append("")
        out.append("% Tables to clear when the state (true) or the joint move (does) changes.")
        for kind, keys in (("gdl_true_table", p.true_tables), ("gdl_does_table", p.does_tables)):
            if not keys:
                out.append(f"{kind}(_) :- fail.")
            for k in keys:
                vs = ", ".join("_" for _ in range(k[1]))
                head = quote_atom(predicate_name(*k)) + (f"({vs})" if k[1] else "")
                out.append(f"{kind}({head}).")
        out.append("")
        out.append("% gdl_query_tables(?Query, ?Kind): the queries that may fill those tables;")
        out.append("% the runtime clears a kind of tables only when such a query ran since.")
        if not p.query_tables:
            out.append("gdl_query_tables(_, _) :- fail.")
        out += [f"gdl_query_tables({name}, {kind})." for name, kind in p.query_tables]
        out.append("")
        return out


def emit(p: Plan, module: str, source_name: str, syntax: str = "kif") -> Translation:
    """The Prolog module of a plan, with the line of every clause; the comments quote
    the rules in ``syntax``."""
    e = _Emitter(p, source_name, syntax)
    out = e.declarations(module)
    origins: list[tuple[int, FlatRule]] = []
    line = sum(chunk.count("\n") + 1 for chunk in out)
    for r in p.rules:
        chunk = e.clause(r) + "\n"
        origins.append((line + 2, r))
        line += chunk.count("\n") + 1
        out.append(chunk)
    out += e.interface()
    return Translation(
        module=module,
        text="\n".join(out),
        roles=p.roles,
        stores=p.stores,
        origins=tuple(origins),
        pre_2010=p.pre_2010,
        gdl_ii=p.gdl_ii,
    )


def translate(
    d: Description,
    module: str = "game",
    source_name: str | None = None,
    syntax: str | None = None,
) -> Translation:
    """Translate a (case-normalized) description into one SWI-Prolog module, its comments
    quoting the rules in ``syntax`` (default: the syntax ``d`` was read in)."""
    return emit(plan(flatten_rules(d)), module, source_name or "game", answer_syntax(d, syntax))
