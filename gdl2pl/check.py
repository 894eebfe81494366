"""Static checks of a game description: GDL's restrictions (safety, stratified negation and
recursion, the keyword dependencies), arities, misplaced keywords and missing essentials.

``check_description`` returns findings, each an error (the description is not valid GDL,
or is so likely mistyped that a validator rejects it) or a warning (legal but suspicious,
or outside the letter of GDL while still playable). Symbols are compared case-insensitively
(``str.casefold``), so the checker runs on raw or on case-normalized descriptions alike.

Findings quote the game (terms, variables, the rule concerned, always whole) in the syntax
it was read in, or in the one ``check_description`` is given: KIF ``(<= (p ?x) (q ?x))`` or
infix ``p(X) :- q(X)``.

Relations are told apart as the reasoner tells them (after ggp-base): ``(p)``, a relation
written with empty parentheses, is another relation than the proposition ``p``, so
``(<= p (not (p)))`` is stratified, and ``(terminal)`` is not the keyword ``terminal``.

Stratified negation is checked on the ground level where the names alone do not settle it:
a cycle through ``not`` in the dependency graph of relation names is an error only if some
ground atom may depend on its own negation (see ``gdl2pl.depgraph.negation_may_close``);
otherwise it is a warning. Real games rely on this, e.g. ``(<= (goal ?r 0) (not (goal ?r
100)))``.

How it is built: ``gdl2pl.check_facts`` walks each clause once and gathers what the checks
read (its sentences, terms, body literals, and the dependency graph of the game); each
check is then a small function over those facts, ``CLAUSE_CHECKS`` run on every clause in
turn and ``GAME_CHECKS`` on the whole game, in the order their findings are reported.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

from gdl2pl.check_facts import ClauseFacts
from gdl2pl.check_facts import GameFacts
from gdl2pl.check_facts import arity
from gdl2pl.check_facts import game_facts
from gdl2pl.depgraph import GROUND_NOT_STRATIFIED
from gdl2pl.depgraph import GROUND_STRATIFIED
from gdl2pl.depgraph import NOT_STRATIFIED
from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import body_atoms
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

#: The warnings of what the Dresden GameController's GDL-II games write and a strict
#: reader refuses, read as their authors meant (docs/gdl2.md, "Older dialects"): a
#: player that accepts such a game says so in its log.
READ_AS_MEANT = frozenset(
    {"sees-any-role", "keyword-in-percept", "does-in-percept", "sees-random", "next-in-sees"}
)

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


#: What only a game must define: a description without any role is read as a plain logic
#: program (``gdl2pl model``'s input), whose check leaves these findings out.
GAME_ONLY = frozenset({"missing-role", "missing-legal", "missing-goal", "missing-terminal"})

#: How a description without any role is named by ``gdl2pl check`` and the studio.
PROGRAM_NOTE = "a logic program: no roles"


def as_program(findings: Sequence[Finding]) -> list[Finding] | None:
    """The findings of a plain logic program, a description that defines none of role,
    legal, goal and terminal (all of ``GAME_ONLY`` among its findings): all but those;
    None for a game (a text with a legal rule but no role is a game missing its role)."""
    if not {f.code for f in findings} >= GAME_ONLY:
        return None
    return [f for f in findings if f.code not in GAME_ONLY]


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
    game = game_facts(d)
    found: list[Finding] = []
    for clause in game.clauses:
        for clause_check in CLAUSE_CHECKS:
            found += clause_check(clause)
    for game_check in GAME_CHECKS:
        found += game_check(game)
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


# Alike on purpose: every check reports through ``_error``/``_warning`` (code, message,
# node, clause), so its findings read the same way (``duplicates`` pairs them by shape).


def _error(code: str, message: str, at: object, c: Clause) -> Finding:
    """An error about the node ``at`` of ``c`` (placed at ``at``, else at ``c``)."""
    return Finding("error", code, message, _where(at, c), clause_text(c))


def _warning(code: str, message: str, at: object, c: Clause) -> Finding:
    """A warning about the node ``at`` of ``c`` (placed at ``at``, else at ``c``)."""
    return Finding("warning", code, message, _where(at, c), clause_text(c))


def _where(node: object, c: Clause) -> Pos | None:
    return getattr(node, "pos", None) or c.pos


def _show(s: Sentence | Term | Literal, c: Clause | None = None) -> str:
    """A term or literal of ``c`` in the findings' syntax (any term: a variable, a
    constant, a function term; any literal), its variables named as ``c`` is quoted."""
    return term_text(s, _SYNTAX.get(), c)


def _relation(graph: DependencyGraph, node: str) -> str:
    """A relation of the game's graph as the findings name it: its name as first written,
    or ``(p)`` (infix ``p()``) for a relation written with empty parentheses."""
    if node in graph.zero_arity:
        return _show(graph.written(node))
    return graph.spelling[node]


def _var(v: Var, c: Clause) -> str:
    """The variable ``v`` of ``c`` as the findings' syntax writes it in ``c``."""
    return variable_text(v.name, _SYNTAX.get(), c)


def _infix() -> bool:
    return _SYNTAX.get() == "infix"


# -- the shape of clauses: small checks, each over one clause's facts ----------------------


def _check_empty_body(f: ClauseFacts) -> Iterator[Finding]:
    """A rule with no body is likely a fact written as a rule, or misplaced parentheses."""
    c = f.clause
    if isinstance(c, Rule) and not c.body:
        neck = "':-'" if _infix() else "'<='"
        yield _warning(
            "zero-arity-rule",
            f"{clause_text(c)} is a rule with an empty body: if it always holds, "
            f"write it as a fact (drop the {neck}); otherwise check the parentheses",
            c,
            c,
        )


def _check_defines_input(f: ClauseFacts) -> Iterator[Finding]:
    """No clause may define ``true`` or ``does``: they are the game's inputs."""
    c = f.clause
    if _key(c.head.name) in INPUT_RELATIONS:
        yield _error(
            "defines-input",
            f"{c.head.name} is an input relation of GDL: no rule or fact may define it",
            c.head,
            c,
        )


def _check_sentence_names(f: ClauseFacts) -> Iterator[Finding]:
    """A connective used as a relation (a relation written with empty parentheses is a
    check of the whole game, ``_check_zero_arity_relations``)."""
    c = f.clause
    for s in f.sentences:
        if _key(s.name) in CONNECTIVES:
            what = "fact" if isinstance(c, Fact) else "sentence"
            yield _error(
                "misplaced-keyword",
                f"'{s.name}' is a logical keyword, not a relation: {_show(s, c)} cannot be "
                f"a {what}",
                s,
                c,
            )
        yield from _next_state_in_body(s, f)


def _next_state_in_body(s: Sentence, f: ClauseFacts) -> Iterator[Finding]:
    """``next`` and ``sees`` describe the next state: no body may ask for them (but an
    older GDL-II game's ``sees`` rule reads ``next``, with a warning)."""
    c = f.clause
    name = _key(s.name)
    if s is c.head or name not in ("next", "sees"):
        return
    if name == "next" and f.is_sees_rule:
        yield _warning(
            "next-in-sees",
            "next in a sees rule is read as what the role sees of the next state (the "
            "state this turn's joint move leads to), as older GDL-II games mean it; a "
            "strict reader refuses next in any rule body",
            s,
            c,
        )
    elif name == "next":
        yield _error(
            "next-in-body",
            "next must not occur in a rule body: it only defines the next state",
            s,
            c,
        )
    elif arity(s) == 2:
        yield _error(
            "sees-in-body",
            "sees must not occur in a rule body: it says what a role perceives of the "
            "move into the next state, which nothing in the current state may depend on",
            s,
            c,
        )


def _check_term_names(f: ClauseFacts) -> Iterator[Finding]:
    """A connective or a keyword used as a term (but ``does`` inside an older GDL-II
    percept, with a warning); a function written with empty parentheses."""
    c = f.clause
    for t in f.terms:
        name = _key(t.name)
        if name in CONNECTIVES:
            kind = "function" if isinstance(t, Func) else "constant"
            yield _error(
                "misplaced-keyword",
                f"'{t.name}' is a logical keyword and cannot be used as a {kind}",
                t,
                c,
            )
        elif not isinstance(t, Func):
            continue
        elif name == "does" and id(t) in f.percept:
            yield _warning(
                "does-in-percept",
                f"the percept {_show(t, c)} names a move with the keyword does, as older "
                "GDL-II games write it: read as the term it is (the role perceives it "
                "written so); a strict reader refuses a keyword used as a function",
                t,
                c,
            )
        elif name in KEYWORD_ARITY and id(t) in f.percept:
            yield _warning(
                "keyword-in-percept",
                f"the percept {_show(t)} is written with the keyword {t.name}, as older "
                "GDL-II games write it: read as the term it is (the role perceives it "
                "written so); a strict reader refuses a keyword used as a function",
                t,
                c,
            )
        elif name in KEYWORD_ARITY:
            yield _error(
                "keyword-as-function",
                f"the keyword {t.name} is used as a function in {_show(t, c)}: it may only "
                "name a sentence",
                t,
                c,
            )
        elif not t.args:
            yield _warning(
                "zero-arity-function",
                f"{_show(t, c)} is written as a function with no arguments: write it as the "
                f"constant {_show(Const(t.name))} (drop the parentheses)",
                t,
                c,
            )


def _check_connectives(f: ClauseFacts) -> Iterator[Finding]:
    """``not`` of anything but one sentence; an empty ``or``."""
    c = f.clause
    for lit in f.literals:
        if isinstance(lit, Not) and not isinstance(lit.body, (Const, Func)):
            yield _error(
                "negated-non-sentence",
                f"the negation {_show(lit, c)} contains {_show(lit.body, c)}, which is not a "
                "sentence: only a single sentence may be negated",
                lit,
                c,
            )
        elif isinstance(lit, Or) and not lit.disjuncts:
            yield _error(
                "empty-disjunction",
                f"empty disjunction {'(|)' if _infix() else '(or)'}: it can never hold, so "
                "the rule never applies",
                lit,
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


def _check_ground_fact(f: ClauseFacts) -> Iterator[Finding]:
    """Facts must be ground."""
    c = f.clause
    if isinstance(c, Fact):
        for v in variables(c.head):
            yield _error(
                "variable-in-fact",
                f"the fact {_show(c.head, c)} contains the variable {_var(v, c)}: facts must be "
                "ground (or write a rule that binds it)",
                v,
                c,
            )


def _check_safety(f: ClauseFacts) -> Iterator[Finding]:
    """In a rule, every variable of the head, of a negation or of a ``distinct`` must occur
    in a positive sentence of the body. A positive sentence inside an ``or`` binds a
    variable only for its own disjunct: the body is checked as the rules it stands for
    once ``or`` is distributed."""
    c = f.clause
    if not isinstance(c, Rule):
        return
    alternatives = _alternatives(c.body)
    if alternatives is None:
        bound = _bound_approx(c.body)
        alternatives = [[lit for lit in f.literals if isinstance(lit, (Not, Distinct))]]
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
                if v.name == _sees_role(c):
                    yield _warning(
                        "sees-any-role",
                        f"the role {_var(v, c)} of this sees rule occurs in no positive "
                        "sentence of the body: it is read as every role, as if "
                        f"{_show(Func('role', (v,)))} were in the body (the Dresden "
                        "GameController's meaning); a strict reader refuses an unsafe rule",
                        v,
                        c,
                    )
                    continue
                yield _error(
                    "unsafe-variable",
                    f"unsafe rule: the variable {_var(v, c)} in {where} does not occur in a "
                    "positive sentence of the body" + _constant_hint(v, c),
                    v,
                    c,
                )


def _constant_hint(v: Var, c: Rule) -> str:
    """When the body of ``c`` has a constant spelled as ``v`` is (``x`` for ``X`` or
    ``?x``), the hint that it was likely meant as that variable."""
    same = [
        n
        for lit in c.body
        for n in walk(lit)
        if isinstance(n, Const) and _key(n.name) == _key(v.name)
    ]
    if not same:
        return ""
    why = "lower-case names are constants" if _infix() else "a name without ? is a constant"
    return (
        f" (the body has the constant {_show(same[0], c)}: {why}; the variable is written "
        f"{_var(v, c)})"
    )


def _sees_role(c: Rule) -> str | None:
    """The name of the variable a ``sees`` rule has for its role, if it has one."""
    head = c.head
    if isinstance(head, Func) and _key(head.name) == "sees" and len(head.args) == 2:
        role = head.args[0]
        return role.name if isinstance(role, Var) else None
    return None


def _check_zero_arity_relations(game: GameFacts) -> Iterator[Finding]:
    """A relation written with empty parentheses, ``(p)`` (warning, at each use): the
    reasoner reads it, as ggp-base does, as another relation than the proposition ``p``.
    The warning says so when the game uses ``p`` too (dropping the parentheses would then
    change what the game means), and when ``p`` is a keyword (``(terminal)`` is not
    ``terminal``)."""
    propositions: dict[str, Clause] = {}
    for f in game.clauses:
        for s in f.sentences:
            if isinstance(s, Const):
                propositions.setdefault(_key(s.name), f.clause)
    for f in game.clauses:
        c = f.clause
        for s in f.sentences:
            name = _key(s.name)
            if not isinstance(s, Func) or s.args or name in CONNECTIVES:
                continue
            plain = _show(Const(s.name))
            keyword = KEYWORD_ARITY.get(name) == 0
            what = f"the keyword {plain}" if keyword else f"the proposition {plain}"
            also = propositions.get(name)
            if also is not None:
                line = also.pos.line if also.pos else "?"
                advice = (
                    f"it is another relation than {what}, which the game also uses (line "
                    f"{line}); if the two are meant as one, drop the parentheses"
                )
            elif keyword:
                advice = f"it is another relation than {what}: drop the parentheses"
            else:
                advice = f"write it as {what} (drop the parentheses)"
            yield _warning(
                "zero-arity-relation",
                f"{_show(s, c)} is written as a relation with no arguments: {advice}",
                s,
                c,
            )


#: The checks of one clause, run on each clause in turn, in this order.
CLAUSE_CHECKS: tuple[Callable[[ClauseFacts], Iterable[Finding]], ...] = (
    _check_empty_body,
    _check_defines_input,
    _check_sentence_names,
    _check_term_names,
    _check_connectives,
    _check_ground_fact,
    _check_safety,
)


# -- arities ----------------------------------------------------------------------------


#: Each name's arities, each with the node and clause of its first use.
_Arities = dict[str, dict[int, tuple[Sentence | Term, Clause]]]


def _first_arities(game: GameFacts) -> tuple[_Arities, _Arities]:
    """Each relation's and each function's arities, each with its first use."""
    sentence_seen: _Arities = {}
    function_seen: _Arities = {}
    for f in game.clauses:
        c = f.clause
        for s in f.sentences:
            name = _key(s.name)
            if name not in CONNECTIVES:
                sentence_seen.setdefault(name, {}).setdefault(arity(s), (s, c))
        for t in f.terms:
            if isinstance(t, Func) and t.args:
                function_seen.setdefault(_key(t.name), {}).setdefault(len(t.args), (t, c))
    return sentence_seen, function_seen


def _check_arities(game: GameFacts) -> Iterator[Finding]:
    """Keyword relations must have their fixed arity (error); any other relation, and any
    function, should be used with one arity only (warning, as ggp-base's validator)."""
    sentence_seen, function_seen = _first_arities(game)
    for name, by_arity in sentence_seen.items():
        if name in KEYWORD_ARITY:
            for found, (s, c) in by_arity.items():
                if found != KEYWORD_ARITY[name]:
                    yield _keyword_arity(name, found, s, c)
        elif len(by_arity) > 1:
            yield _arity_warning("relation", by_arity)
    for uses in function_seen.values():
        if len(uses) > 1:
            yield _arity_warning("function", uses)


def _keyword_arity(name: str, found: int, s: Sentence | Term, c: Clause) -> Finding:
    """A keyword relation used with another arity: read as an ordinary relation when
    the keyword is younger than the game may be (GDL-II, GDL 2010), else an error."""
    want = KEYWORD_ARITY[name]
    if name in GDL_II_RELATIONS:
        return _warning(
            "pre-gdl-ii",
            f"{s.name} is a keyword relation of GDL-II ({name} with {want} "
            f"arguments); {_show(s, c)} has {found}: it is read as an ordinary "
            "relation, as in a game written before GDL-II",
            s,
            c,
        )
    if name in GDL_2010_RELATIONS:
        return _warning(
            "pre-gdl-2010",
            f"{s.name} is a keyword relation of GDL 2010 ({name} with {want} "
            f"argument(s)); {_show(s, c)} has {found}: the game predates GDL 2010 "
            f"and uses {s.name} as an ordinary relation, which is how it is "
            "read (base_propositions and input_moves are then unavailable)",
            s,
            c,
        )
    return _error(
        "keyword-arity",
        f"the keyword relation {s.name} takes {want} argument(s), found {found} in {_show(s, c)}",
        s,
        c,
    )


def _arity_warning(kind: str, by_arity: Mapping[int, tuple[Sentence | Term, Clause]]) -> Finding:
    uses = [
        f"{n} in {_show(node, c)} (line {c.pos.line if c.pos else '?'})"
        for n, (node, c) in by_arity.items()
    ]
    node, c = list(by_arity.values())[1]
    return _warning(
        "arity-mismatch",
        f"the {kind} {node.name} is used with different numbers of arguments: " + ", ".join(uses),
        node,
        c,
    )


#: SWI-Prolog's largest procedure arity (its ``max_procedure_arity`` flag): a relation
#: becomes a predicate of its arity, a fluent a store of the fluent's arity.
MAX_PROLOG_ARITY = 1024

_FLUENT_HOLDERS = frozenset({"true", "init", "next", "base"})


def _check_prolog_arity(game: GameFacts) -> Iterator[Finding]:
    """A relation, or a fluent, with more arguments than SWI-Prolog's procedure arity
    limit cannot be loaded (error): found here rather than when the game is loaded."""
    for f in game.clauses:
        c = f.clause
        for s in f.sentences:
            what: Sentence | Term = s
            if arity(s) <= MAX_PROLOG_ARITY and isinstance(s, Func) and len(s.args) == 1:
                if _key(s.name) not in _FLUENT_HOLDERS:
                    continue
                what = s.args[0]
            if isinstance(what, Func) and len(what.args) > MAX_PROLOG_ARITY:
                kind = "relation" if what is s else "fluent"
                message = (
                    f"the {kind} {what.name} has {len(what.args):,} arguments; SWI-Prolog "
                    f"takes at most {MAX_PROLOG_ARITY:,} (a {kind} becomes a Prolog predicate "
                    "of that arity)"
                )
                pos = _where(what, c) or _where(s, c)
                yield Finding("error", "arity-limit", message, pos, clause_text(c))


_KIF_AND = re.compile(r"\(\s*and(?=[\s()])", re.IGNORECASE)


def _check_and(game: GameFacts) -> Iterator[Finding]:
    """``(and ...)`` in a KIF rule body is not GDL (warning): gdl2pl reads it as a
    conjunction, ggp-base as an undefined relation. Infix groups ``(a & b)`` are fine."""
    source = game.description.source
    if source is None:
        return
    lines: list[str] | None = None
    for f in game.clauses:
        for lit in f.literals:
            if not isinstance(lit, And) or lit.pos is None:
                continue
            if lines is None:
                lines = re.split(r"\r\n|\r|\n", source)
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
                lit,
                f.clause,
            )


def _check_spellings(game: GameFacts) -> Iterator[Finding]:
    """A symbol spelled in several cases (``whiteWin``, ``whitewin``) is one symbol in GDL,
    and in gdl2pl by default, but two for a case-sensitive engine (warning, once per
    symbol, where the second spelling first appears)."""
    seen: dict[str, dict[str, tuple[Sentence | Term, Clause]]] = {}
    for f in game.clauses:
        for node in (*f.sentences, *f.terms):
            key = _key(node.name)
            if key in KEYWORD_ARITY or key in CONNECTIVES:
                continue
            seen.setdefault(key, {}).setdefault(node.name, (node, f.clause))
    for spellings in seen.values():
        if len(spellings) < 2:
            continue
        uses = [
            f"{name} (line {c.pos.line if c.pos else '?'})" for name, (_, c) in spellings.items()
        ]
        second, c = list(spellings.values())[1]
        yield _warning(
            "mixed-case",
            "one symbol spelled in different cases: " + ", ".join(uses) + "; GDL reads them "
            "as one symbol, case-sensitive engines as several",
            second,
            c,
        )


# -- roles, goals, essentials -------------------------------------------------------------

#: The keyword relations whose first argument names a role.
_ROLE_ARGUMENT = frozenset({"legal", "goal", "does", "input", "sees", "percept"})


def _check_essentials(game: GameFacts) -> Iterator[Finding]:
    """role, legal, goal and terminal must be defined (init and next need not be: an empty
    state is a state); goal values must be numbers 0..100; the role argument of legal,
    goal, does and input should be a declared role (warning)."""
    for kw in ("role", "legal", "goal", "terminal"):
        if kw not in game.graph.defined:
            yield Finding("error", f"missing-{kw}", f"the game defines no {kw}" + _apart(game, kw))
    warned: set[tuple[str, str]] = set()
    for f in game.clauses:
        yield from _goal_value(f.clause)
        if game.roles:
            yield from _role_names(f, game.roles, warned)


def _apart(game: GameFacts, keyword: str) -> str:
    """When the game defines the keyword's name written with empty parentheses: that this
    is another relation."""
    if keyword + "()" not in game.graph.defined:
        return ""
    return f" ({_show(Func(keyword, ()))}, written with parentheses, is another relation)"


def _goal_value(c: Clause) -> Iterator[Finding]:
    """A goal value must be a number from 0 to 100."""
    head = c.head
    if _key(head.name) == "goal" and isinstance(head, Func) and len(head.args) == 2:
        value = head.args[1]
        if not isinstance(value, Var) and not _is_goal_value(value):
            message = f"goal value {_show(value, c)} is not a number from 0 to 100"
            yield _error("goal-value", message, value, c)


def _role_names(
    f: ClauseFacts, roles: frozenset[str], warned: set[tuple[str, str]]
) -> Iterator[Finding]:
    """A keyword relation's role argument should be a declared role (warning, once per
    relation and name: ``warned`` holds those reported)."""
    for s in f.sentences:
        name = _key(s.name)
        if name not in _ROLE_ARGUMENT or not isinstance(s, Func):
            continue
        if not s.args or not isinstance(s.args[0], Const):
            continue
        who = _key(s.args[0].name)
        if who not in roles and (name, who) not in warned:
            warned.add((name, who))
            yield _warning(
                "unknown-role",
                f"{s.args[0].name} in {_show(s, f.clause)} is not a declared role",
                s.args[0],
                f.clause,
            )


def _check_random(game: GameFacts) -> Iterator[Finding]:
    """GDL-II's role ``random`` is chance, not a player: it perceives nothing (``percept``
    for it is an error; ``sees`` for it a warning, as older games write it harmlessly),
    its goal values mean nothing (warning), and a game
    that declares it must give it legal moves (error when no ``legal`` rule can)."""
    declared: Clause | None = None
    has_legal = False
    for f in game.clauses:
        c = f.clause
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
        elif is_random and name in _RANDOM_HEADS:
            severity, code, reason = _RANDOM_HEADS[name]
            message = f"{_show(head, c)}: the random role is chance{reason}"
            yield Finding(severity, code, message, _where(who, c), clause_text(c))
    if declared is not None and not has_legal:
        yield _error(
            "random-without-moves",
            "the game declares the role random but no legal rule gives it a move: chance "
            "must have a legal move in every state that is not terminal",
            declared.head,
            declared,
        )


#: What a rule for the random role means, by its head: severity, code, and the reason.
_RANDOM_HEADS = {
    "sees": (
        "warning",
        "sees-random",
        " and perceives nothing: the rule is read as it stands but no player is told of it "
        "(a strict reader refuses it)",
    ),
    "percept": ("error", "percept-random", ", not a player, and perceives nothing"),
    "goal": (
        "warning",
        "random-goal",
        ", not a player; its goal values are ignored by GDL-II players",
    ),
}


def _is_goal_value(t: Term) -> bool:
    return isinstance(t, Const) and t.name.isdigit() and t.name.isascii() and int(t.name) <= 100


# -- the dependency graph ---------------------------------------------------------------


def _check_keyword_dependencies(game: GameFacts) -> Iterator[Finding]:
    """role, base, input and init must not depend on true or does; init also not on next,
    legal, goal or terminal; legal, goal and terminal not on does. Reported at the body
    sentence of a keyword's rule through which the dependency enters, once per rule and
    forbidden relation."""
    graph = game.graph

    @cache
    def reach(rel: str) -> frozenset[str]:
        return graph.depends_on(rel) | {rel}

    reported: set[tuple[int, str]] = set()
    for e in graph.edges:
        forbidden = FORBIDDEN_DEPENDENCIES.get(e.head)
        if not forbidden or arity(e.rule.head) != KEYWORD_ARITY[e.head]:
            continue  # not a keyword relation (e.g. base/3 in a game older than GDL 2010)
        for bad in forbidden:
            if bad in reach(e.body) and (id(e.rule), bad) not in reported:
                reported.add((id(e.rule), bad))
                via = "" if e.body == bad else f" (through {_relation(graph, e.body)})"
                yield _error(
                    "keyword-dependency",
                    f"{_relation(graph, e.head)} must not depend on {bad}{via}",
                    e.atom,
                    e.rule,
                )


def _check_negation_cycles(game: GameFacts) -> Iterator[Finding]:
    """A cycle through ``not`` in the graph of relation names is an error if some ground
    atom may depend on its own negation through it, else a warning."""
    graph = game.graph
    for e in graph.negative_cycle_edges():
        cycle = _relation(graph, e.body)
        if negation_may_close(graph, e):
            yield _error(
                "unstratified-negation",
                f"{NOT_STRATIFIED}, {GROUND_NOT_STRATIFIED}: {_show(e.atom, e.rule)} is negated "
                f"in a rule for {_relation(graph, e.head)}, which it depends on (recursion "
                f"through {cycle})",
                e.atom,
                e.rule,
            )
        else:
            yield _warning(
                "negation-cycle",
                f"{NOT_STRATIFIED}, {GROUND_STRATIFIED}: the cycle goes through {cycle}, but no "
                f"instance of {_show(e.atom, e.rule)} depends on {_show(e.rule.head, e.rule)}, "
                "so the game keeps its meaning and plays",
                e.atom,
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


def _check_recursion(game: GameFacts) -> Iterator[Finding]:
    """GDL's recursion restriction (warning): in a rule with head ``p`` and a positive body
    sentence ``q`` in ``p``'s component, every argument of ``q`` is ground, or an argument
    of the head, or a subterm of an argument of a positive body sentence outside the
    component."""
    graph = game.graph
    recursive = graph.recursive()
    comp = graph.component_of()
    rules: dict[int, Rule] = {id(e.rule): e.rule for e in graph.edges if e.head in recursive}
    for rule in rules.values():
        group = comp[graph.node(rule.head)]
        head_args = rule.head.args if isinstance(rule.head, Func) else ()
        outside = [
            sub
            for lit in _top_conjuncts(rule.body)
            if isinstance(lit, Func) and graph.node(lit) not in group
            for a in lit.args
            for sub in _subterms(a)
        ]
        for lit in rule.body:
            for atom, negative in body_atoms(lit):
                if negative or not isinstance(atom, Func) or graph.node(atom) not in group:
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
                        f"recursion restriction: the argument {_show(arg, rule)} of "
                        f"{_show(atom, rule)} "
                        f"(recursive with {_relation(graph, graph.node(rule.head))}) is neither "
                        "ground, nor an "
                        "argument of the head, nor bound by a sentence outside the recursion",
                        atom,
                        rule,
                    )


def _subterms(t: Term) -> Iterator[Term]:
    return walk(t)  # type: ignore[return-value]


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


#: The argument patterns of the heads that produce each input, by the functor of their
#: last argument (None: a variable, which matches anything).
_ProducerIndex = dict[str, dict[tuple[str, int] | None, list[Term]]]


def _producer_heads(game: GameFacts) -> _ProducerIndex:
    """The heads that may produce a ``does`` or a ``true`` (see ``_PRODUCERS``), their
    arguments as a pattern with variables renamed apart."""
    heads: _ProducerIndex = {"does": {}, "true": {}}
    for f in game.clauses:
        h = f.clause.head
        if not isinstance(h, Func):
            continue
        name = (_key(h.name), len(h.args))
        for target, producers in _PRODUCERS.items():
            if name in producers:
                pattern = renamed_apart(Func("", h.args), "h")
                heads[target].setdefault(_functor(h.args[-1]), []).append(pattern)
    return heads


def _check_unproducible_inputs(game: GameFacts) -> Iterator[Finding]:
    """A ``(does r m)`` that no ``legal``/``input`` head unifies with, or a ``(true f)``
    that no ``init``/``next``/``base`` head unifies with, can never hold (warning): the
    patterns of the heads over-approximate what the game can produce (a variable matches
    anything), so the warning is sound. Typically a misspelt move or fluent. Stops
    (reporting what it found so far) after ``_UNIFY_BUDGET`` unification attempts."""
    heads = _producer_heads(game)
    known: dict[tuple[str, Term], bool] = {}

    @cache
    def produced(target: str) -> tuple[Term, ...]:
        terms = {p.args[-1] for ps in heads[target].values() for p in ps if isinstance(p, Func)}
        return tuple(terms)

    budget = _UNIFY_BUDGET
    found = 0
    for f in game.clauses:
        for atom, effect in f.uses:
            target = _key(atom.name)
            if target not in heads or arity(atom) != KEYWORD_ARITY[target]:
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
                f"{_show(atom, f.clause)} can never hold: "
                + _unproducible_reason(
                    target, atom, f.clause, produced(target), found <= _MAX_SUGGESTED
                )
                + f", {_CONSEQUENCE[effect]}",
                atom,
                f.clause,
            )


#: Close spellings are suggested from at most this many distinct names or terms, for at
#: most the first ``_MAX_SUGGESTED`` findings of a lint (difflib is quadratic).
_MAX_SUGGESTIONS_FROM = 200
_MAX_SUGGESTED = 20


def _unproducible_reason(
    target: str, atom: Func, c: Clause, produced: Sequence[Term], suggest: bool = True
) -> str:
    """Why nothing produces ``atom`` (of ``c``), with the closest spellings among the ``produced``
    terms (the last arguments of the producing heads)."""
    if target == "does":
        who, move = (_show(a, c) for a in atom.args)
        what = f"no legal (or input) rule gives {who} the move {move}"
    else:
        what = f"no init, next (or base) rule makes {_show(atom.args[0], c)} a fluent"
    last = atom.args[-1]
    close: list[str] = []
    if not isinstance(last, Var) and suggest and len(produced) <= _MAX_SUGGESTIONS_FROM:
        shown = sorted({_show(t) for t in produced if not variables(t)})
        close = difflib.get_close_matches(_show(last, c), shown, n=3)
        if not close:
            names = sorted({t.name for t in produced if not isinstance(t, Var)})
            close = difflib.get_close_matches(last.name, names, n=3)
    return what + (f" (did you mean {' or '.join(close)}?)" if close else "")


def _check_undefined_relations(game: GameFacts) -> Iterator[Finding]:
    """A relation used in a rule body that no rule or fact defines never holds (warning,
    once per relation, at its first use). Keyword relations whose absence is an error
    already (``missing-legal``...) and the inputs ``true``/``does`` are left out. In a
    description without roles, a plain logic program, an undefined relation is the
    program's input (``gdl2pl model --input``): nothing is reported."""
    graph = game.graph
    if "role" not in graph.defined:
        return
    reported: set[str] = set()
    for f in game.clauses:
        for atom, effect in f.uses:
            node = graph.node(atom)
            if node in graph.defined or node in _NOT_UNDEFINED or node in reported:
                continue
            reported.add(node)
            close: list[str] = []
            if len(reported) <= _MAX_SUGGESTED and len(graph.defined) <= _MAX_SUGGESTIONS_FROM:
                shown: dict[str, list[str]] = {}  # each defined name, as each relation of it
                for k in sorted(graph.defined, key=graph.spelling.__getitem__):
                    shown.setdefault(graph.spelling[k], []).append(_relation(graph, k))
                names = difflib.get_close_matches(_key(atom.name), list(shown), n=3)
                close = [text for n in names for text in shown[n]]
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            yield _warning(
                "undefined-relation",
                f"no rule or fact defines {_relation(graph, node)}{hint}: "
                f"{_show(atom, f.clause)} never holds, " + _CONSEQUENCE[effect],
                atom,
                f.clause,
            )


def _check_unused_relations(game: GameFacts) -> Iterator[Finding]:
    """A relation that is defined but that no keyword relation (role, init, next, legal,
    goal, terminal, base, input, sees, percept) depends on has no effect on the game
    (warning, once per relation, at its first definition). A description without roles is
    a plain logic program, not a game: every relation is its own purpose, nothing is
    reported."""
    graph = game.graph
    if "role" not in graph.defined:
        return
    used: set[str] = set()
    for root in _ROOTS & graph.defined:
        used |= graph.depends_on(root)
    first: dict[str, Clause] = {}
    for f in game.clauses:
        first.setdefault(graph.node(f.clause.head), f.clause)
    for node, c in first.items():
        if node in used or node in _ROOTS or node in INPUT_RELATIONS:
            continue
        line = c.pos.line if c.pos else "?"
        yield _warning(
            "unused-relation",
            f"the relation {_relation(graph, node)} (defined on line {line}) is never used: no "
            "role, init, next, legal, goal or terminal rule depends on it, so it has no "
            "effect on the game",
            c.head,
            c,
        )


#: The checks of the whole game, run after those of the clauses, in this order.
GAME_CHECKS: tuple[Callable[[GameFacts], Iterable[Finding]], ...] = (
    _check_zero_arity_relations,
    _check_arities,
    _check_prolog_arity,
    _check_and,
    _check_spellings,
    _check_essentials,
    _check_random,
    _check_keyword_dependencies,
    _check_negation_cycles,
    _check_recursion,
    _check_unproducible_inputs,
    _check_undefined_relations,
    _check_unused_relations,
)
