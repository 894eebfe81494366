"""Static checks of a game description: GDL's restrictions (safety, stratified negation and
recursion, the keyword dependencies), arities, misplaced keywords and missing essentials.

``check_description`` returns findings, each an error (the description is not valid GDL,
or is so likely mistyped that a validator rejects it) or a warning (legal but suspicious,
or outside the letter of GDL while still playable). Symbols are compared case-insensitively
(``str.casefold``), so the checker runs on raw or on case-normalized descriptions alike.

Findings quote the game (terms, variables, the rule concerned, always whole) in the syntax
it was read in, or in the one ``check_description`` is given: KIF ``(<= (p ?x) (q ?x))`` or
infix ``p(X) :- q(X)``.

Stratified negation is checked on the ground level where the names alone do not settle it:
a cycle through ``not`` in the dependency graph of relation names is an error only if some
ground atom may depend on its own negation (see ``gdl2pl.depgraph.negation_may_close``);
otherwise it is a warning. Real games rely on this, e.g. ``(<= (goal ?r 0) (not (goal ?r
100)))``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import body_atoms
from gdl2pl.depgraph import dependency_graph
from gdl2pl.depgraph import negation_may_close
from gdl2pl.depgraph import renamed_apart
from gdl2pl.depgraph import unify
from gdl2pl.flatten import disjunctive_normal_form
from gdl2pl.source import without_cycle_collection
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import children
from gdl2pl.syntax import variables
from gdl2pl.syntax import walk
from gdl2pl.vocabulary import CONNECTIVES
from gdl2pl.vocabulary import FORBIDDEN_DEPENDENCIES
from gdl2pl.vocabulary import GDL_2010_RELATIONS
from gdl2pl.vocabulary import GDL_II_RELATIONS
from gdl2pl.vocabulary import INPUT_RELATIONS
from gdl2pl.vocabulary import KEYWORD_RELATIONS
from gdl2pl.vocabulary import RANDOM_ROLE
from gdl2pl.written import answer_syntax
from gdl2pl.written import clause_text as written_clause
from gdl2pl.written import term_text
from gdl2pl.written import variable_text

#: The arity of each GDL keyword relation (kept as a name for existing callers).
KEYWORD_ARITY = KEYWORD_RELATIONS

_MAX_ALTERNATIVES = 256

#: The syntax the findings being made quote the game in: set by ``check_description`` for
#: one check (a context variable, so a check in another thread keeps its own).
_SYNTAX: ContextVar[str] = ContextVar("gdl2pl_check_syntax", default="kif")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a description.

    ``severity`` is ``"error"`` or ``"warning"``; ``code`` a stable identifier such as
    ``"unsafe-variable"``; ``pos`` where it is (None for what concerns the whole game);
    ``rule`` the text of the clause concerned, whole, in the syntax of the message ("" for
    the whole game).
    """

    severity: str
    code: str
    message: str
    pos: Pos | None = None
    rule: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def format_finding(f: Finding, file: str | None = None) -> str:
    """``file:line:col: error|warning: message [rule: ...]`` (``file:`` alone without a
    position)."""
    if f.pos is not None:
        where = str(f.pos if f.pos.file or file is None else Pos(f.pos.line, f.pos.column, file))
    else:
        where = file or "<input>"
    text = f"{where}: {f.severity}: {f.message}"
    return f"{text} [rule: {f.rule}]" if f.rule else text


def has_errors(findings: Iterable[Finding]) -> bool:
    """True if any finding is an error."""
    return any(f.is_error for f in findings)


def check_description(
    d: Description, file: str | None = None, syntax: str | None = None
) -> list[Finding]:
    """Every finding on ``d``, ordered by position (whole-game findings first). ``file``
    names the source where positions carry no file name; messages quote the game in
    ``syntax`` (``kif`` or ``infix``; default: the syntax ``d`` was read in)."""
    token = _SYNTAX.set(answer_syntax(d, syntax))
    try:
        with without_cycle_collection():
            return _check(d, file)
    finally:
        _SYNTAX.reset(token)


def _check(d: Description, file: str | None) -> list[Finding]:
    graph = dependency_graph(d)
    found: list[Finding] = []
    for clause in d.clauses:
        found += _check_clause_shape(clause)
        found += _check_safety(clause)
    found += _check_arities(d)
    found += _check_prolog_arity(d)
    found += _check_and(d)
    found += _check_spellings(d)
    found += _check_essentials(d)
    found += _check_random(d)
    found += _check_keyword_dependencies(graph)
    found += _check_negation_cycles(graph)
    found += _check_recursion(graph)
    found += _check_unproducible_inputs(d)
    found += _check_undefined_relations(d, graph)
    found += _check_unused_relations(d, graph)
    unique = list(dict.fromkeys(_with_file(f, file) for f in found))
    return sorted(unique, key=_order)


def _order(f: Finding) -> tuple[int, int]:
    return (f.pos.line, f.pos.column) if f.pos else (0, 0)


def _with_file(f: Finding, file: str | None) -> Finding:
    if file is None or f.pos is None or f.pos.file is not None:
        return f
    return Finding(f.severity, f.code, f.message, Pos(f.pos.line, f.pos.column, file), f.rule)


# -- helpers ----------------------------------------------------------------------------


def _key(name: str) -> str:
    return name.casefold()


def clause_text(c: Clause) -> str:
    """A clause as the findings quote it: whole, on one line, in their syntax."""
    return written_clause(c, _SYNTAX.get())


def _error(code: str, message: str, pos: Pos | None, c: Clause | None) -> Finding:
    return Finding("error", code, message, pos, clause_text(c) if c else "")


def _warning(code: str, message: str, pos: Pos | None, c: Clause | None) -> Finding:
    return Finding("warning", code, message, pos, clause_text(c) if c else "")


def _where(node: object, c: Clause) -> Pos | None:
    return getattr(node, "pos", None) or c.pos


_LITERAL_TYPES = (Const, Func, Not, Distinct, Or, And)


def _body_literals(lits: Iterable[Literal]) -> Iterator[Literal]:
    """Every literal inside ``lits``, nested ones included, outermost first (the terms
    inside sentences and ``distinct`` are not literals and are skipped)."""
    for lit in lits:
        stack: list[Literal] = [lit]
        while stack:
            n = stack.pop()
            yield n
            if not isinstance(n, (Const, Func, Distinct)):
                stack.extend(reversed(children(n)))  # type: ignore[arg-type]


def _sentences(c: Clause) -> Iterator[Sentence]:
    """The head and every atomic sentence of the body."""
    yield c.head
    if isinstance(c, Rule):
        for lit in _body_literals(c.body):
            if isinstance(lit, (Const, Func)):
                yield lit


def _subterms(t: Term) -> Iterator[Term]:
    return walk(t)  # type: ignore[return-value]


def _terms(c: Clause) -> Iterator[Term]:
    """Every term (argument of a sentence or of ``distinct``, at any depth) of a clause."""
    for s in _sentences(c):
        if isinstance(s, Func):
            for a in s.args:
                yield from _subterms(a)
    if isinstance(c, Rule):
        for lit in _body_literals(c.body):
            if isinstance(lit, Distinct):
                yield from _subterms(lit.left)
                yield from _subterms(lit.right)


def _arity(s: Sentence) -> int:
    return len(s.args) if isinstance(s, Func) else 0


def _show(s: Sentence | Term | Literal) -> str:
    return term_text(s, _SYNTAX.get())


def _var(v: Var, c: Clause) -> str:
    """The variable ``v`` of ``c`` as the findings' syntax writes it in ``c``."""
    return variable_text(v.name, _SYNTAX.get(), c)


def _infix() -> bool:
    return _SYNTAX.get() == "infix"


# -- the shape of clauses ---------------------------------------------------------------


def _is_sees_rule(c: Clause) -> bool:
    """``c`` is a rule for GDL-II's ``sees/2``."""
    return isinstance(c, Rule) and _key(c.head.name) == "sees" and _arity(c.head) == 2


def _percept_terms(c: Clause) -> set[int]:
    """The ids of the terms inside the percept (second argument) of a ``sees/2`` head."""
    head = c.head
    if not (isinstance(head, Func) and _key(head.name) == "sees" and len(head.args) == 2):
        return set()
    return {id(t) for t in _subterms(head.args[1])}


def _check_clause_shape(c: Clause) -> Iterator[Finding]:
    """Misplaced connectives and keywords, zero-arity relations and functions, empty
    bodies, empty disjunctions, negated non-sentences, rules for input relations, ``next``
    in a body."""
    if isinstance(c, Rule) and not c.body:
        neck = "':-'" if _infix() else "'<='"
        yield _warning(
            "zero-arity-rule",
            f"{clause_text(c)} is a rule with an empty body: if it always holds, "
            f"write it as a fact (drop the {neck}); otherwise check the parentheses",
            c.pos,
            c,
        )
    head = _key(c.head.name)
    if head in ("true", "does"):
        yield _error(
            "defines-input",
            f"{c.head.name} is an input relation of GDL: no rule or fact may define it",
            _where(c.head, c),
            c,
        )
    for s in _sentences(c):
        name = _key(s.name)
        if name in CONNECTIVES:
            yield _error(
                "misplaced-keyword",
                f"'{s.name}' is a logical keyword, not a relation: {_show(s)} cannot be a "
                + ("fact" if isinstance(c, Fact) else "sentence"),
                _where(s, c),
                c,
            )
        elif isinstance(s, Func) and not s.args:
            yield _warning(
                "zero-arity-relation",
                f"{_show(s)} is written as a relation with no arguments: write it as the "
                f"proposition {_show(Const(s.name))} (drop the parentheses)",
                _where(s, c),
                c,
            )
        if name == "next" and s is not c.head and _is_sees_rule(c):
            yield _warning(
                "next-in-sees",
                "next in a sees rule is read as what the role sees of the next state (the "
                "state this turn's joint move leads to), as older GDL-II games mean it; a "
                "strict reader refuses next in any rule body",
                _where(s, c),
                c,
            )
        elif name == "next" and s is not c.head:
            yield _error(
                "next-in-body",
                "next must not occur in a rule body: it only defines the next state",
                _where(s, c),
                c,
            )
        elif name == "sees" and _arity(s) == 2 and s is not c.head:
            yield _error(
                "sees-in-body",
                "sees must not occur in a rule body: it says what a role perceives of the "
                "move into the next state, which nothing in the current state may depend on",
                _where(s, c),
                c,
            )
    percept = _percept_terms(c)
    for t in _terms(c):
        if isinstance(t, Var):
            continue
        name = _key(t.name)
        kind = "function" if isinstance(t, Func) else "constant"
        if name in CONNECTIVES:
            yield _error(
                "misplaced-keyword",
                f"'{t.name}' is a logical keyword and cannot be used as a {kind}",
                _where(t, c),
                c,
            )
        elif isinstance(t, Func) and name == "does" and id(t) in percept:
            yield _warning(
                "does-in-percept",
                f"the percept {_show(t)} names a move with the keyword does, as older "
                "GDL-II games write it: read as the term it is (the role perceives it "
                "written so); a strict reader refuses a keyword used as a function",
                _where(t, c),
                c,
            )
        elif isinstance(t, Func) and name in KEYWORD_ARITY:
            yield _error(
                "keyword-as-function",
                f"the keyword {t.name} is used as a function in {_show(t)}: it may only "
                "name a sentence",
                _where(t, c),
                c,
            )
        elif isinstance(t, Func) and not t.args:
            yield _warning(
                "zero-arity-function",
                f"{_show(t)} is written as a function with no arguments: write it as the "
                f"constant {_show(Const(t.name))} (drop the parentheses)",
                _where(t, c),
                c,
            )
    if isinstance(c, Rule):
        for lit in _body_literals(c.body):
            if isinstance(lit, Not) and not isinstance(lit.body, (Const, Func)):
                yield _error(
                    "negated-non-sentence",
                    f"the negation {_show(lit)} contains {_show(lit.body)}, which is not a "
                    "sentence: only a single sentence may be negated",
                    _where(lit, c),
                    c,
                )
            elif isinstance(lit, Or) and not lit.disjuncts:
                yield _error(
                    "empty-disjunction",
                    "empty disjunction (or): it can never hold, so the rule never applies",
                    _where(lit, c),
                    c,
                )


# -- safety -----------------------------------------------------------------------------


def _alternatives(lits: Iterable[Literal]) -> list[list[Literal]] | None:
    """The body as a disjunction of plain conjunctions (see
    ``gdl2pl.flatten.disjunctive_normal_form``); None beyond _MAX_ALTERNATIVES."""
    return disjunctive_normal_form(lits, _MAX_ALTERNATIVES)


def _bound_approx(lits: Iterable[Literal]) -> set[str]:
    """Variables certainly bound by positive sentences (under ``or``: bound in every
    disjunct). Used when distributing ``or`` would give too many alternatives."""
    out: set[str] = set()
    for lit in lits:
        if isinstance(lit, (Const, Func)):
            out |= {v.name for v in variables(lit)}
        elif isinstance(lit, And):
            out |= _bound_approx(lit.conjuncts)
        elif isinstance(lit, Or) and lit.disjuncts:
            out |= set.intersection(*(_bound_approx([d]) for d in lit.disjuncts))
    return out


def _check_safety(c: Clause) -> Iterator[Finding]:
    """Facts must be ground; in a rule, every variable of the head, of a negation or of a
    ``distinct`` must occur in a positive sentence of the body. A positive sentence inside
    an ``or`` binds a variable only for its own disjunct: the body is checked as the rules
    it stands for once ``or`` is distributed."""
    if isinstance(c, Fact):
        for v in variables(c.head):
            yield _error(
                "variable-in-fact",
                f"the fact {_show(c.head)} contains the variable {_var(v, c)}: facts must be "
                "ground (or write a rule that binds it)",
                _where(v, c),
                c,
            )
        return
    alternatives = _alternatives(c.body)
    if alternatives is None:
        bound = _bound_approx(c.body)
        alternatives = [[lit for lit in _body_literals(c.body) if isinstance(lit, (Not, Distinct))]]
        bound_in = [bound]
    else:
        bound_in = [
            {v.name for lit in alt if isinstance(lit, (Const, Func)) for v in variables(lit)}
            for alt in alternatives
        ]
    reported: set[str] = set()
    for alt, bound in zip(alternatives, bound_in, strict=True):
        places: list[tuple[str, Var]] = [("the head", v) for v in variables(c.head)]
        for lit in alt:
            if isinstance(lit, Not):
                places += [("a negation", v) for v in variables(lit)]
            elif isinstance(lit, Distinct):
                places += [("a distinct", v) for v in variables(lit)]
        for where, v in places:
            if v.name not in bound and v.name not in reported:
                reported.add(v.name)
                yield _error(
                    "unsafe-variable",
                    f"unsafe rule: the variable {_var(v, c)} in {where} does not occur in a "
                    "positive sentence of the body",
                    _where(v, c),
                    c,
                )


# -- arities ----------------------------------------------------------------------------


def _check_arities(d: Description) -> Iterator[Finding]:
    """Keyword relations must have their fixed arity (error); any other relation, and any
    function, should be used with one arity only (warning, as ggp-base's validator)."""
    sentence_seen: dict[str, dict[int, tuple[Sentence, Clause]]] = {}
    function_seen: dict[str, dict[int, tuple[Term, Clause]]] = {}
    for c in d.clauses:
        for s in _sentences(c):
            name = _key(s.name)
            if name in CONNECTIVES:
                continue
            sentence_seen.setdefault(name, {}).setdefault(_arity(s), (s, c))
        for t in _terms(c):
            if isinstance(t, Func) and t.args:
                function_seen.setdefault(_key(t.name), {}).setdefault(len(t.args), (t, c))
    for name, by_arity in sentence_seen.items():
        if name in KEYWORD_ARITY:
            want = KEYWORD_ARITY[name]
            for arity, (s, c) in by_arity.items():
                if arity != want and name in GDL_II_RELATIONS:
                    yield _warning(
                        "pre-gdl-ii",
                        f"{s.name} is a keyword relation of GDL-II ({name} with {want} "
                        f"arguments); {_show(s)} has {arity}: it is read as an ordinary "
                        "relation, as in a game written before GDL-II",
                        _where(s, c),
                        c,
                    )
                elif arity != want and name in GDL_2010_RELATIONS:
                    yield _warning(
                        "pre-gdl-2010",
                        f"{s.name} is a keyword relation of GDL 2010 ({name} with {want} "
                        f"argument(s)); {_show(s)} has {arity}: the game predates GDL 2010 "
                        f"and uses {s.name} as an ordinary relation, which is how it is "
                        "read (base_propositions and input_moves are then unavailable)",
                        _where(s, c),
                        c,
                    )
                elif arity != want:
                    yield _error(
                        "keyword-arity",
                        f"the keyword relation {s.name} takes {want} argument(s), "
                        f"found {arity} in {_show(s)}",
                        _where(s, c),
                        c,
                    )
        elif len(by_arity) > 1:
            yield _arity_warning("relation", by_arity)
    for uses in function_seen.values():
        if len(uses) > 1:
            yield _arity_warning("function", uses)


#: SWI-Prolog's largest procedure arity (its ``max_procedure_arity`` flag): a relation
#: becomes a predicate of its arity, a fluent a store of the fluent's arity.
MAX_PROLOG_ARITY = 1024

_FLUENT_HOLDERS = frozenset({"true", "init", "next", "base"})


def _check_prolog_arity(d: Description) -> Iterator[Finding]:
    """A relation, or a fluent, with more arguments than SWI-Prolog's procedure arity
    limit cannot be loaded (error): found here rather than when the game is loaded."""
    for c in d.clauses:
        for s in _sentences(c):
            what: Sentence | Term = s
            if _arity(s) <= MAX_PROLOG_ARITY and isinstance(s, Func) and len(s.args) == 1:
                if _key(s.name) not in _FLUENT_HOLDERS:
                    continue
                what = s.args[0]
            if isinstance(what, Func) and len(what.args) > MAX_PROLOG_ARITY:
                kind = "relation" if what is s else "fluent"
                yield _error(
                    "arity-limit",
                    f"the {kind} {what.name} has {len(what.args):,} arguments; SWI-Prolog "
                    f"takes at most {MAX_PROLOG_ARITY:,} (a {kind} becomes a Prolog predicate "
                    "of that arity)",
                    _where(what, c) or _where(s, c),
                    c,
                )


_KIF_AND = re.compile(r"\(\s*and(?=[\s()])", re.IGNORECASE)


def _check_and(d: Description) -> Iterator[Finding]:
    """``(and ...)`` in a KIF rule body is not GDL (warning): gdl2pl reads it as a
    conjunction, ggp-base as an undefined relation. Infix groups ``(a & b)`` are fine."""
    if d.source is None:
        return
    lines: list[str] | None = None
    for c in d.clauses:
        if not isinstance(c, Rule):
            continue
        for lit in _body_literals(c.body):
            if not isinstance(lit, And) or lit.pos is None:
                continue
            if lines is None:
                lines = re.split(r"\r\n|\r|\n", d.source)
            if not 1 <= lit.pos.line <= len(lines):
                continue
            if not _KIF_AND.match(lines[lit.pos.line - 1], lit.pos.column - 1):
                continue
            yield _warning(
                "and-in-body",
                f"(and ...) on line {lit.pos.line} is not GDL: gdl2pl reads it as the "
                "conjunction of its literals (as BenderNG and the Dresden prover do), while "
                "ggp-base reads it as a relation named 'and' that no rule defines, so never "
                "true; write its literals directly in the body",
                lit.pos,
                c,
            )


def _arity_warning(
    kind: str, by_arity: Mapping[int, tuple[Sentence | Term, Clause]]
) -> Finding:
    uses = [
        f"{arity} in {_show(node)} (line {c.pos.line if c.pos else '?'})"
        for arity, (node, c) in by_arity.items()
    ]
    node, c = list(by_arity.values())[1]
    return _warning(
        "arity-mismatch",
        f"the {kind} {node.name} is used with different numbers of arguments: " + ", ".join(uses),
        _where(node, c),
        c,
    )


def _check_spellings(d: Description) -> Iterator[Finding]:
    """A symbol spelled in several cases (``whiteWin``, ``whitewin``) is one symbol in GDL,
    and in gdl2pl by default, but two for a case-sensitive engine (warning, once per
    symbol, where the second spelling first appears)."""
    seen: dict[str, dict[str, tuple[Sentence | Term, Clause]]] = {}
    for c in d.clauses:
        for node in (*_sentences(c), *_terms(c)):
            if isinstance(node, Var):
                continue
            key = _key(node.name)
            if key in KEYWORD_ARITY or key in CONNECTIVES:
                continue
            seen.setdefault(key, {}).setdefault(node.name, (node, c))
    for spellings in seen.values():
        if len(spellings) < 2:
            continue
        uses = [
            f"{name} (line {c.pos.line if c.pos else '?'})" for name, (_, c) in spellings.items()
        ]
        node, c = list(spellings.values())[1]
        yield _warning(
            "mixed-case",
            "one symbol spelled in different cases: " + ", ".join(uses) + "; GDL reads them "
            "as one symbol, case-sensitive engines as several",
            _where(node, c),
            c,
        )


# -- roles, goals, essentials -------------------------------------------------------------


def _check_essentials(d: Description) -> Iterator[Finding]:
    """role, legal, goal and terminal must be defined (init and next need not be: an empty
    state is a state); goal values must be numbers 0..100; the role argument of legal,
    goal, does and input should be a declared role (warning)."""
    defined = {_key(c.head.name) for c in d.clauses}
    for kw in ("role", "legal", "goal", "terminal"):
        if kw not in defined:
            yield _error(f"missing-{kw}", f"the game defines no {kw}", None, None)
    roles = {
        _key(c.head.args[0].name)
        for c in d.clauses
        if isinstance(c.head, Func)
        and _key(c.head.name) == "role"
        and len(c.head.args) == 1
        and isinstance(c.head.args[0], Const)
    }
    warned: set[tuple[str, str]] = set()
    for c in d.clauses:
        if _key(c.head.name) == "goal" and isinstance(c.head, Func) and len(c.head.args) == 2:
            value = c.head.args[1]
            if not isinstance(value, Var) and not _is_goal_value(value):
                yield _error(
                    "goal-value",
                    f"goal value {_show(value)} is not a number from 0 to 100",
                    _where(value, c),
                    c,
                )
        if not roles:
            continue
        for s in _sentences(c):
            name = _key(s.name)
            if name not in ("legal", "goal", "does", "input", "sees", "percept"):
                continue
            if not isinstance(s, Func):
                continue
            if not s.args or not isinstance(s.args[0], Const):
                continue
            who = _key(s.args[0].name)
            if who not in roles and (name, who) not in warned:
                warned.add((name, who))
                yield _warning(
                    "unknown-role",
                    f"{s.args[0].name} in {_show(s)} is not a declared role",
                    _where(s.args[0], c),
                    c,
                )


def _check_random(d: Description) -> Iterator[Finding]:
    """GDL-II's role ``random`` is chance, not a player: it perceives nothing (``percept``
    for it is an error; ``sees`` for it a warning, as older games write it harmlessly),
    its goal values mean nothing (warning), and a game
    that declares it must give it legal moves (error when no ``legal`` rule can)."""
    declared: Clause | None = None
    has_legal = False
    for c in d.clauses:
        head = c.head
        if not isinstance(head, Func) or not head.args:
            continue
        name, who = _key(head.name), head.args[0]
        is_random = isinstance(who, Const) and _key(who.name) == RANDOM_ROLE
        if name == "role" and len(head.args) == 1 and is_random:
            declared = declared or c
        elif len(head.args) != 2:
            continue
        elif name == "legal" and (is_random or isinstance(who, Var)):
            has_legal = True
        elif name == "sees" and is_random:
            yield _warning(
                "sees-random",
                f"{_show(head)}: the random role is chance and perceives nothing: the rule "
                "is read as it stands but no player is told of it (a strict reader refuses it)",
                _where(who, c),
                c,
            )
        elif name == "percept" and is_random:
            yield _error(
                f"{name}-random",
                f"{_show(head)}: the random role is chance, not a player, and perceives "
                "nothing",
                _where(who, c),
                c,
            )
        elif name == "goal" and is_random:
            yield _warning(
                "random-goal",
                f"{_show(head)}: the random role is chance, not a player; its goal values "
                "are ignored by GDL-II players",
                _where(who, c),
                c,
            )
    if declared is not None and not has_legal:
        yield _error(
            "random-without-moves",
            "the game declares the role random but no legal rule gives it a move: chance "
            "must have a legal move in every state that is not terminal",
            _where(declared.head, declared),
            declared,
        )


def _is_goal_value(t: Term) -> bool:
    return isinstance(t, Const) and t.name.isdigit() and t.name.isascii() and int(t.name) <= 100


# -- the dependency graph ---------------------------------------------------------------


def _check_keyword_dependencies(graph: DependencyGraph) -> Iterator[Finding]:
    """role, base, input and init must not depend on true or does; init also not on next,
    legal, goal or terminal; legal, goal and terminal not on does. Reported at the body
    sentence of a keyword's rule through which the dependency enters, once per rule and
    forbidden relation."""

    @cache
    def reach(rel: str) -> frozenset[str]:
        return graph.depends_on(rel) | {rel}

    reported: set[tuple[int, str]] = set()
    for e in graph.edges:
        forbidden = FORBIDDEN_DEPENDENCIES.get(e.head)
        if not forbidden or _arity(e.rule.head) != KEYWORD_ARITY[e.head]:
            continue  # not a keyword relation (e.g. base/3 in a game older than GDL 2010)
        for bad in forbidden:
            if bad in reach(e.body) and (id(e.rule), bad) not in reported:
                reported.add((id(e.rule), bad))
                via = "" if e.body == bad else f" (through {e.atom.name})"
                yield _error(
                    "keyword-dependency",
                    f"{graph.spelling[e.head]} must not depend on {bad}{via}",
                    _where(e.atom, e.rule),
                    e.rule,
                )


def _check_negation_cycles(graph: DependencyGraph) -> Iterator[Finding]:
    """A cycle through ``not`` in the graph of relation names is an error if some ground
    atom may depend on its own negation through it, else a warning."""
    for e in graph.negative_cycle_edges():
        cycle = graph.spelling[e.body]
        if negation_may_close(graph, e):
            yield _error(
                "unstratified-negation",
                f"negation is not stratified: {_show(e.atom)} is negated in a rule for "
                f"{graph.spelling[e.head]}, which it depends on (recursion through {cycle})",
                _where(e.atom, e.rule),
                e.rule,
            )
        else:
            yield _warning(
                "negation-cycle",
                f"negation cycle through {cycle} is not stratified by name, but cannot "
                f"close on one ground atom: no instance of {_show(e.atom)} depends on "
                f"{_show(e.rule.head)}",
                _where(e.atom, e.rule),
                e.rule,
            )


def _same(a: Term, b: Term) -> bool:
    if isinstance(a, Var) or isinstance(b, Var):
        return isinstance(a, Var) and isinstance(b, Var) and a.name == b.name
    if _key(a.name) != _key(b.name):
        return False
    if isinstance(a, Func) and isinstance(b, Func):
        return len(a.args) == len(b.args) and all(map(_same, a.args, b.args))
    return isinstance(a, Const) and isinstance(b, Const)


def _check_recursion(graph: DependencyGraph) -> Iterator[Finding]:
    """GDL's recursion restriction (warning): in a rule with head ``p`` and a positive body
    sentence ``q`` in ``p``'s component, every argument of ``q`` is ground, or an argument
    of the head, or a subterm of an argument of a positive body sentence outside the
    component."""
    recursive = graph.recursive()
    comp = graph.component_of()
    rules: dict[int, Rule] = {id(e.rule): e.rule for e in graph.edges if e.head in recursive}
    for rule in rules.values():
        group = comp[_key(rule.head.name)]
        head_args = rule.head.args if isinstance(rule.head, Func) else ()
        outside = [
            sub
            for lit in _top_conjuncts(rule.body)
            if isinstance(lit, Func) and _key(lit.name) not in group
            for a in lit.args
            for sub in _subterms(a)
        ]
        for lit in rule.body:
            for atom, negative in body_atoms(lit):
                if negative or not isinstance(atom, Func) or _key(atom.name) not in group:
                    continue
                for arg in atom.args:
                    if (
                        not variables(arg)
                        or any(_same(arg, h) for h in head_args)
                        or any(_same(arg, o) for o in outside)
                    ):
                        continue
                    yield _warning(
                        "recursion-restriction",
                        f"recursion restriction: the argument {_show(arg)} of {_show(atom)} "
                        f"(recursive with {rule.head.name}) is neither ground, nor an "
                        "argument of the head, nor bound by a sentence outside the recursion",
                        _where(atom, rule),
                        rule,
                    )


def _top_conjuncts(lits: Iterable[Literal]) -> Iterator[Literal]:
    for lit in lits:
        if isinstance(lit, And):
            yield from _top_conjuncts(lit.conjuncts)
        else:
            yield lit


# -- lints: rules that cannot fire, relations that do nothing ----------------------------

#: The keyword heads whose arguments are all a ``does`` or ``true`` literal can ever match:
#: a move is made only if it is legal (``input`` declares the possible ones), and a fluent
#: is true only if ``init`` or ``next`` puts it in a state (``base`` declares them).
_PRODUCERS: dict[str, tuple[tuple[str, int], ...]] = {
    "does": (("legal", 2), ("input", 2)),
    "true": (("init", 1), ("next", 1), ("base", 1)),
}

#: Relations whose absence the checker already reports as an error (``missing-...``), or
#: which are the game's inputs: not reported again as undefined.
_NOT_UNDEFINED = frozenset({"true", "does", "role", "legal", "goal", "terminal"})

#: The relations a game is made of: what every other relation must serve.
_ROOTS = frozenset(KEYWORD_RELATIONS) - {"true", "does"}


def _literal_uses(lits: Iterable[Literal]) -> Iterator[tuple[Sentence, str]]:
    """Every atomic sentence of a body with what follows if it can never hold: ``"rule"``
    (a conjunct: the rule never fires), ``"disjunct"`` (under ``or``: that branch never
    holds) or ``"negation"`` (under ``not``: the negation always holds)."""

    def go(lit: Literal, effect: str) -> Iterator[tuple[Sentence, str]]:
        if isinstance(lit, (Const, Func)):
            yield lit, effect
        elif isinstance(lit, Not):
            yield from go(lit.body, "negation")
        elif isinstance(lit, And):
            for c in lit.conjuncts:
                yield from go(c, effect)
        elif isinstance(lit, Or):
            for d in lit.disjuncts:
                yield from go(d, "disjunct" if effect == "rule" else effect)

    for lit in lits:
        yield from go(lit, "rule")


_CONSEQUENCE = {
    "rule": "so the rule can never fire",
    "disjunct": "so this part of the rule never holds",
    "negation": "so its negation always holds",
}


def _functor(t: Term) -> tuple[str, int] | None:
    """The index key of a term: its name and arity (None for a variable)."""
    if isinstance(t, Var):
        return None
    return _key(t.name), len(t.args) if isinstance(t, Func) else 0


#: The most head patterns the never-holds lint tries in all: beyond it (a game generated
#: with thousands of moves) the lint stops, so checking stays fast on any input.
_UNIFY_BUDGET = 200_000


def _check_unproducible_inputs(d: Description) -> Iterator[Finding]:
    """A ``(does r m)`` that no ``legal``/``input`` head unifies with, or a ``(true f)``
    that no ``init``/``next``/``base`` head unifies with, can never hold (warning): the
    patterns of the heads over-approximate what the game can produce (a variable matches
    anything), so the warning is sound. Typically a misspelt move or fluent. Stops
    (reporting what it found so far) after ``_UNIFY_BUDGET`` unification attempts."""
    heads: dict[str, dict[tuple[str, int] | None, list[Term]]] = {"does": {}, "true": {}}
    for c in d.clauses:
        h = c.head
        if not isinstance(h, Func):
            continue
        name = (_key(h.name), len(h.args))
        for target, producers in _PRODUCERS.items():
            if name in producers:
                pattern = renamed_apart(Func("", h.args), "h")
                heads[target].setdefault(_functor(h.args[-1]), []).append(pattern)
    known: dict[tuple[str, Term], bool] = {}

    @cache
    def produced(target: str) -> tuple[Term, ...]:
        terms = {p.args[-1] for ps in heads[target].values() for p in ps if isinstance(p, Func)}
        return tuple(terms)

    budget = _UNIFY_BUDGET
    found = 0
    for c in d.clauses:
        if not isinstance(c, Rule):
            continue
        for atom, effect in _literal_uses(c.body):
            target = _key(atom.name)
            if target not in heads or _arity(atom) != KEYWORD_ARITY[target]:
                continue
            assert isinstance(atom, Func)
            args = atom.args
            index = heads[target]
            candidates = [*index.get(None, ()), *index.get(_functor(args[-1]), ())]
            if args[-1].__class__ is Var:
                candidates = [p for ps in index.values() for p in ps]
            pattern = renamed_apart(Func("", args), "b")
            cache_key = (target, pattern)
            if cache_key not in known:
                budget -= len(candidates)
                if budget < 0:
                    return  # a game this large is left unlinted rather than slow to check
                known[cache_key] = any(unify(pattern, p, {}) for p in candidates)
            if known[cache_key]:
                continue
            found += 1
            yield _warning(
                "never-holds",
                f"{_show(atom)} can never hold: "
                + _unproducible_reason(target, atom, produced(target), found <= _MAX_SUGGESTED)
                + f", {_CONSEQUENCE[effect]}",
                _where(atom, c),
                c,
            )


#: Close spellings are suggested from at most this many distinct names or terms, for at
#: most the first ``_MAX_SUGGESTED`` findings of a lint (difflib is quadratic).
_MAX_SUGGESTIONS_FROM = 200
_MAX_SUGGESTED = 20


def _unproducible_reason(
    target: str, atom: Func, produced: Sequence[Term], suggest: bool = True
) -> str:
    """Why nothing produces ``atom``, with the closest spellings among the ``produced``
    terms (the last arguments of the producing heads)."""
    if target == "does":
        what = (
            f"no legal (or input) rule gives {_show(atom.args[0])} the move "
            f"{_show(atom.args[1])}"
        )
    else:
        what = f"no init, next (or base) rule makes {_show(atom.args[0])} a fluent"
    last = atom.args[-1]
    close: list[str] = []
    if not isinstance(last, Var) and suggest and len(produced) <= _MAX_SUGGESTIONS_FROM:
        shown = sorted({_show(t) for t in produced if not variables(t)})
        close = difflib.get_close_matches(_show(last), shown, n=3)
        if not close:
            names = sorted({t.name for t in produced if not isinstance(t, Var)})
            close = difflib.get_close_matches(last.name, names, n=3)
    return what + (f" (did you mean {' or '.join(close)}?)" if close else "")


def _check_undefined_relations(d: Description, graph: DependencyGraph) -> Iterator[Finding]:
    """A relation used in a rule body that no rule or fact defines never holds (warning,
    once per relation, at its first use). Keyword relations whose absence is an error
    already (``missing-legal``...) and the inputs ``true``/``does`` are left out. In a
    description without roles, a plain logic program, an undefined relation is the
    program's input (``gdl2pl model --input``): nothing is reported."""
    if "role" not in graph.defined:
        return
    reported: set[str] = set()
    for c in d.clauses:
        if not isinstance(c, Rule):
            continue
        for atom, effect in _literal_uses(c.body):
            name = _key(atom.name)
            if name in graph.defined or name in _NOT_UNDEFINED or name in reported:
                continue
            reported.add(name)
            close: list[str] = []
            if len(reported) <= _MAX_SUGGESTED and len(graph.defined) <= _MAX_SUGGESTIONS_FROM:
                spellings = sorted(graph.spelling[k] for k in graph.defined)
                close = difflib.get_close_matches(name, spellings, n=3)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            yield _warning(
                "undefined-relation",
                f"no rule or fact defines {atom.name}{hint}: {_show(atom)} never holds, "
                + _CONSEQUENCE[effect],
                _where(atom, c),
                c,
            )


def _check_unused_relations(d: Description, graph: DependencyGraph) -> Iterator[Finding]:
    """A relation that is defined but that no keyword relation (role, init, next, legal,
    goal, terminal, base, input, sees, percept) depends on has no effect on the game
    (warning, once per relation, at its first definition). A description without roles is
    a plain logic program, not a game: every relation is its own purpose, nothing is
    reported."""
    if "role" not in graph.defined:
        return
    used: set[str] = set()
    for root in _ROOTS & graph.defined:
        used |= graph.depends_on(root)
    first: dict[str, Clause] = {}
    for c in d.clauses:
        first.setdefault(_key(c.head.name), c)
    for name, c in first.items():
        if name in used or name in _ROOTS or name in INPUT_RELATIONS:
            continue
        line = c.pos.line if c.pos else "?"
        yield _warning(
            "unused-relation",
            f"the relation {c.head.name} (defined on line {line}) is never used: no "
            "role, init, next, legal, goal or terminal rule depends on it, so it has no "
            "effect on the game",
            _where(c.head, c),
            c,
        )
