"""GDL -> SWI-Prolog: the code generator.

``translate(description)`` returns a ``Translation`` whose ``text`` is one SWI-Prolog
module, meant to be read by people as well as loaded by ``prolog/gdl_runtime.pl``.

Naming (injective, so nothing in a game can reach a Prolog builtin):

- GDL's keyword relations keep their names: ``role/1``, ``base/1``, ``input/2``,
  ``init/1``, ``legal/2``, ``next/1``, ``goal/2``, ``terminal/0``;
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
  component), ``distinct`` -> ``\\==``, both placed after the literals binding them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gdl2pl.depgraph import strongly_connected_components
from gdl2pl.kif import kif_clause
from gdl2pl.prolog_syntax import VariableNamer, comment_text, quote_atom
from gdl2pl.rules import (
    BodyLiteral,
    NormalRule,
    TranslationError,
    normalize_rules,
    relation_key,
)
from gdl2pl.syntax import Const, Description, Distinct, Func, Not, Sentence, Term, Var

#: GDL relations that keep their own name in Prolog, with their arities.
KEYWORD_RELATIONS = {
    "role": 1,
    "base": 1,
    "input": 2,
    "init": 1,
    "legal": 2,
    "next": 1,
    "goal": 2,
    "terminal": 0,
}

PredKey = tuple[str, int]
TRUE: PredKey = ("true", 1)
DOES: PredKey = ("does", 2)


def predicate_name(name: str, arity: int) -> str:
    """The Prolog predicate name of the GDL relation ``name``/``arity`` (unquoted)."""
    if KEYWORD_RELATIONS.get(name) == arity:
        return name
    return "r_" + name


def static_name(name: str, arity: int) -> str:
    """The rules of a state-independent relation; ``predicate_name`` then holds the facts
    they derive, which the runtime computes once when the game is loaded."""
    return "static_" + name


def store_name(functor: str, arity: int) -> str:
    """The dynamic predicate (with Prolog arity ``arity``) holding the fluents
    ``(functor a1 ... an)`` (or the constant ``functor`` when ``arity`` is 0), unquoted.

    Injective: a store is named by ``"true_" + functor`` and told apart by its Prolog
    arity. The fallback store ``FALLBACK_STORE/1`` (``true_``, holding whole fluents
    whose functor is not known statically, and zero-arity compounds such as ``(foo)``)
    is outside that space, since no GDL symbol is empty."""
    return "true_" + functor


#: The store of fluents that have no store of their own: ``true_(Fluent)``.
FALLBACK_STORE = "true_"


@dataclass(frozen=True)
class Translation:
    """The generated module and what the runtime needs to know about it."""

    module: str
    text: str
    roles: tuple[str, ...]
    tabled: tuple[PredKey, ...]
    true_tables: tuple[PredKey, ...]
    does_tables: tuple[PredKey, ...]
    stores: tuple[tuple[str, int], ...] = field(default=())
    #: For each clause of ``text``: the 1-based line where its head starts (the line
    #: after its comment), and the flat rule it was written from.
    origins: tuple[tuple[int, NormalRule], ...] = field(default=())


# -- dependency analysis --------------------------------------------------------------


@dataclass
class _Analysis:
    defined: dict[PredKey, list[NormalRule]]
    depends_true: set[PredKey]
    depends_does: set[PredKey]
    recursive: set[PredKey]  # on a cycle of positive dependencies
    component: dict[PredKey, int]  # SCC id over all (positive and negative) edges
    uses: dict[PredKey, set[PredKey]]  # head -> relations its rules' bodies call

    def reached(self, start: PredKey) -> set[PredKey]:
        """``start`` and every relation its rules call, directly or not."""
        seen, todo = {start}, [start]
        while todo:
            for k in self.uses.get(todo.pop(), ()):
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        return seen


def _literal_sentence(lit: BodyLiteral) -> Sentence | None:
    if isinstance(lit, Not):
        inner = lit.body.body if isinstance(lit.body, Not) else lit.body
        return inner if isinstance(inner, Const | Func) else None
    if isinstance(lit, Const | Func):
        return lit
    return None


def _analyse(rules: list[NormalRule]) -> _Analysis:
    defined: dict[PredKey, list[NormalRule]] = defaultdict(list)
    uses: dict[PredKey, set[PredKey]] = defaultdict(set)  # head -> body relations
    pos_uses: dict[PredKey, set[PredKey]] = defaultdict(set)
    for r in rules:
        head = relation_key(r.head)
        defined[head].append(r)
        for lit in r.body:
            s = _literal_sentence(lit)
            if s is None:
                continue
            uses[head].add(relation_key(s))
            if not isinstance(lit, Not):
                pos_uses[head].add(relation_key(s))
    nodes = sorted(set(defined) | {k for v in uses.values() for k in v})

    def reaching(target: PredKey) -> set[PredKey]:
        out: set[PredKey] = set()
        changed = True
        while changed:
            changed = False
            for head, body in uses.items():
                if head not in out and (target in body or body & out):
                    out.add(head)
                    changed = True
        return out

    recursive: set[PredKey] = set()
    for comp in strongly_connected_components(nodes, pos_uses):
        if len(comp) > 1 or any(p in pos_uses.get(p, ()) for p in comp):
            recursive |= comp
    component = {
        p: i for i, comp in enumerate(strongly_connected_components(nodes, uses)) for p in comp
    }
    return _Analysis(
        dict(defined), reaching(TRUE), reaching(DOES), recursive, component, dict(uses)
    )


# -- code generation --------------------------------------------------------------------


class _Writer:
    def __init__(self, d: Description, source_name: str | None) -> None:
        self.d = d
        self.source_name = source_name or "game"
        self.rules = normalize_rules(d)
        self.a = _analyse(self.rules)
        self.stores: dict[tuple[str, int], None] = {}
        self._collect_stores()
        a = self.a
        self.static_rules: set[PredKey] = {
            key
            for key, rules in a.defined.items()
            if key not in a.depends_true | a.depends_does
            and any(r.body for r in rules)
            and not (key in a.recursive and any(_builds_terms(r) for r in rules))
        }

    # fluent stores: functors seen in true/next/init/base positions
    def _collect_stores(self) -> None:
        def add(f: Term) -> None:
            if isinstance(f, Func) and f.args:
                self.stores.setdefault((f.name, len(f.args)), None)
            elif isinstance(f, Const):
                self.stores.setdefault((f.name, 0), None)

        for r in self.rules:
            hk = relation_key(r.head)
            if hk in (("next", 1), ("init", 1), ("base", 1)):
                add(r.head.args[0])  # type: ignore[union-attr]
            for lit in r.body:
                s = _literal_sentence(lit)
                if s is not None and relation_key(s) == TRUE:
                    add(s.args[0])  # type: ignore[union-attr]

    def term(self, t: Term, names: VariableNamer) -> str:
        if isinstance(t, Var):
            return names[t.name]
        if isinstance(t, Const):
            return quote_atom(t.name)
        args = ", ".join(self.term(a, names) for a in t.args)
        return f"{quote_atom(t.name)}({args})"

    def pred_name(self, key: PredKey, context: PredKey | None) -> str:
        """The predicate a literal of relation ``key`` calls from a rule for ``context``
        (``None`` for a head)."""
        if key in self.static_rules and (
            context is None or self.a.component.get(key) == self.a.component.get(context)
        ):
            return static_name(*key)
        return predicate_name(*key)

    def call(self, s: Sentence, names: VariableNamer, context: PredKey | None = None) -> str:
        key = relation_key(s)
        args = s.args if isinstance(s, Func) else ()
        if key == TRUE:
            f = args[0]
            if isinstance(f, Func) and f.args:
                inner = ", ".join(self.term(a, names) for a in f.args)
                return f"{quote_atom(store_name(f.name, len(f.args)))}({inner})"
            if isinstance(f, Const):
                return quote_atom(store_name(f.name, 0))
            if isinstance(f, Func):  # a zero-arity compound (foo): the fallback store
                return f"{FALLBACK_STORE}({self.term(f, names)})"
            return f"true({self.term(f, names)})"
        if s.name in ("true", "does") and key != DOES:
            raise TranslationError(f"'{s.name}' used with {len(args)} argument(s)")
        name = "does" if key == DOES else quote_atom(self.pred_name(key, context))
        if not args:
            return name
        return f"{name}({', '.join(self.term(a, names) for a in args)})"

    def literal(self, lit: BodyLiteral, head: PredKey, names: VariableNamer) -> str:
        if isinstance(lit, Distinct):
            return f"{self.term(lit.left, names)} \\== {self.term(lit.right, names)}"
        if isinstance(lit, Not) and isinstance(lit.body, Distinct):
            return f"{self.term(lit.body.left, names)} == {self.term(lit.body.right, names)}"
        if isinstance(lit, Not) and isinstance(lit.body, Not):
            return f"\\+ \\+ {self.call(lit.body.body, names, head)}"  # type: ignore[arg-type]
        if isinstance(lit, Not):
            inner = self.call(lit.body, names, head)  # type: ignore[arg-type]
            key = relation_key(lit.body)  # type: ignore[arg-type]
            same_component = self.a.component.get(key) == self.a.component.get(head)
            if same_component and key in self.tabled:
                return f"tnot({inner})"
            return f"\\+ {inner}"
        return self.call(lit, names, head)

    def clause(self, r: NormalRule) -> str:
        counts: dict[str, int] = defaultdict(int)
        for node in (r.head, *r.body):
            _count_vars(node, counts)
        names = VariableNamer(dict(counts))
        head = self.call(r.head, names, None)
        src = " ".join(kif_clause(r.source).split())
        if len(src) > 110:
            src = src[:107] + "..."
        pos = r.source.pos
        where = f"{self.source_name}:{pos.line}" if pos else self.source_name
        comment = comment_text(f"% {where}  {src}")
        if not r.body:
            return f"{comment}\n{head}."
        key = relation_key(r.head)
        body = ",\n    ".join(self.literal(lit, key, names) for lit in r.body)
        return f"{comment}\n{head} :-\n    {body}."

    @property
    def tabled(self) -> set[PredKey]:
        """Recursive relations: their rules (``static_`` ones for static relations)."""
        return {key for key in self.a.defined if key in self.a.recursive}

    def generate(self, module: str) -> Translation:
        a = self.a
        tabled = self.tabled
        called: set[PredKey] = set()
        for r in self.rules:
            for lit in r.body:
                s = _literal_sentence(lit)
                if s is not None:
                    called.add(relation_key(s))
        undefined = sorted(called - set(a.defined) - {TRUE, DOES})
        for name, arity in KEYWORD_RELATIONS.items():
            if (name, arity) not in a.defined and (name, arity) not in undefined:
                undefined.append((name, arity))

        def pi(key: PredKey, name: str | None = None) -> str:
            return f"{quote_atom(name or predicate_name(*key))}/{key[1]}"

        statics = sorted(self.static_rules, key=lambda k: (a.component[k], k))
        heads = sorted(pi(k, self.pred_name(k, None)) for k in a.defined)
        store_pis = [f"{quote_atom(store_name(n, ar))}/{ar}" for (n, ar) in self.stores]
        store_pis += [f"{FALLBACK_STORE}/1", "does/2"]
        out: list[str] = [
            comment_text(f"%   {module}: translated by gdl2pl from {self.source_name}."),
            "%",
            "%   Each clause is one GDL rule (or one branch of a rule's 'or'); the comment",
            "%   above it gives the source line and the rule in KIF. The state is held in",
            "%   the thread-local true_F/N predicates, the joint move in does/2; the",
            "%   runtime (prolog/gdl_runtime.pl) fills them in.",
            "",
            f":- module({quote_atom(module)}, []).",
            ":- set_module(base(system)).",
            ":- set_module(class(temporary)).",
            "",
            "% The state, and the joint move while the next state is computed:",
            "% filled in by the runtime.",
            f":- thread_local {', '.join(store_pis)}.",
        ]
        if undefined:
            out.append("% Relations used but never defined: they are always false.")
            out.append(f":- dynamic {', '.join(pi(k) for k in undefined)}.")
        if statics:
            out.append("% Independent of the state: the runtime asserts the facts that the")
            out.append("% static_* rules derive, once, when the game is loaded.")
            out.append(f":- dynamic {', '.join(pi(k) for k in statics)}.")
        if heads:
            out.append(f":- discontiguous {', '.join(heads)}.")
        static_tabled = sorted(k for k in tabled if k in self.static_rules)
        state_tabled = sorted(k for k in tabled if k not in self.static_rules)
        if static_tabled:
            out.append(
                "% Recursive, independent of the state: tabled while the facts are computed."
            )
            out.append(f":- table {', '.join(pi(k, static_name(*k)) for k in static_tabled)}.")
        on_demand = [k for k in state_tabled if k not in a.depends_true | a.depends_does]
        changing = [k for k in state_tabled if k in a.depends_true | a.depends_does]
        if on_demand:
            out.append("% Recursive, independent of the state, building terms: answered on demand.")
            out.append(f":- table {', '.join(pi(k) for k in on_demand)}.")
        if changing:
            out.append(
                "% Recursive and state-dependent: tables are cleared when the state changes."
            )
            out.append(f":- table {', '.join(pi(k) for k in changing)}.")
        out.append("")
        origins: list[tuple[int, NormalRule]] = []
        line = sum(chunk.count("\n") + 1 for chunk in out)
        for r in self.rules:
            chunk = self.clause(r) + "\n"
            origins.append((line + 2, r))
            line += chunk.count("\n") + 1
            out.append(chunk)
        out.append("% ---- Interface to the runtime ----")
        out.append("")
        dispatch, stores = [], []
        for n, ar in self.stores:
            vs = ", ".join(f"A{i + 1}" for i in range(ar))
            store = quote_atom(store_name(n, ar))
            fluent, fact = quote_atom(n), store
            if ar:
                fluent, fact = f"{fluent}({vs})", f"{store}({vs})"
            dispatch.append(f"true({fluent}) :- {fact}.")
            stores.append(f"gdl_store({fluent}, {fact}).")
        out.append("% true(?Fluent): the dispatcher for fluents not known statically.")
        out.extend(dispatch)
        out.append(f"true(F) :- {FALLBACK_STORE}(F).")
        out.append("")
        out.append("% gdl_store(+Fluent, -Fact): where the runtime asserts a fluent.")
        out.extend(stores)
        out.append(f"gdl_store(F, {FALLBACK_STORE}(F)).")
        out.append("")
        out.append("% gdl_static(?Facts, ?Rules): what the runtime computes at load, in order.")
        if not statics:
            out.append("gdl_static(_, _) :- fail.")
        for k in statics:
            vs = ", ".join(f"A{i + 1}" for i in range(k[1]))
            args = f"({vs})" if k[1] else ""
            fact, rules = quote_atom(predicate_name(*k)), quote_atom(static_name(*k))
            out.append(f"gdl_static({fact}{args}, {rules}{args}).")
        out.append("")
        out.append("% Tables to clear when the state (true) or the joint move (does) changes.")
        true_tables = [k for k in changing if k not in a.depends_does]
        does_tables = [k for k in changing if k in a.depends_does]
        for kind, keys in (("gdl_true_table", true_tables), ("gdl_does_table", does_tables)):
            if not keys:
                out.append(f"{kind}(_) :- fail.")
            for k in keys:
                vs = ", ".join("_" for _ in range(k[1]))
                head = quote_atom(predicate_name(*k)) + (f"({vs})" if k[1] else "")
                out.append(f"{kind}({head}).")
        out.append("")
        out.append("% gdl_query_tables(?Query, ?Kind): the queries that may fill those tables;")
        out.append("% the runtime clears a kind of tables only when such a query ran since.")
        reaching = [
            (name, kind)
            for name, arity in KEYWORD_RELATIONS.items()
            for kind, keys in (("true", true_tables), ("does", does_tables))
            if (name, arity) in a.defined and a.reached((name, arity)) & set(keys)
        ]
        if not reaching:
            out.append("gdl_query_tables(_, _) :- fail.")
        out.extend(f"gdl_query_tables({name}, {kind})." for name, kind in reaching)
        out.append("")
        roles = tuple(
            r.head.args[0].name  # type: ignore[union-attr]
            for r in self.rules
            if relation_key(r.head) == ("role", 1) and isinstance(r.head.args[0], Const)  # type: ignore[union-attr]
        )
        return Translation(
            module=module,
            text="\n".join(out),
            roles=roles,
            tabled=tuple(sorted(tabled)),
            true_tables=tuple(true_tables),
            does_tables=tuple(does_tables),
            stores=tuple(self.stores),
            origins=tuple(origins),
        )


def _builds_terms(r: NormalRule) -> bool:
    """True if the rule's head builds compound terms from variables (e.g. lists): a
    recursive relation doing so may have a huge or infinite extension, so it is
    evaluated on demand (tabled) instead of being computed whole at load time."""

    def builds(t: Term, nested: bool) -> bool:
        if isinstance(t, Var):
            return nested
        if isinstance(t, Func):
            return any(builds(a, True) for a in t.args)
        return False

    return any(builds(t, False) for t in (r.head.args if isinstance(r.head, Func) else ()))


def _count_vars(node: object, counts: dict[str, int]) -> None:
    if isinstance(node, Var):
        counts[node.name] += 1
    elif isinstance(node, Func):
        for a in node.args:
            _count_vars(a, counts)
    elif isinstance(node, Not):
        _count_vars(node.body, counts)
    elif isinstance(node, Distinct):
        _count_vars(node.left, counts)
        _count_vars(node.right, counts)


def translate(d: Description, module: str = "game", source_name: str | None = None) -> Translation:
    """Translate a (case-normalized) description into one SWI-Prolog module."""
    return _Writer(d, source_name).generate(module)
