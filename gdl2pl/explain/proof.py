"""Why a ground atom holds in a state of a game, or why it does not: proof trees.

``explain(sm, state, atom)`` asks ``prolog/gdl_explain.pl`` (a meta-interpreter over the
game's generated module) for a justification and returns an ``Explanation``: a tree of
``Node`` objects that prints as indented text. Each node that uses a rule names both
ends of the translation: the GDL rule with its file:line, and the Prolog clause with its
line in the generated module (``gdl2pl translate GAME`` prints that module), with the
bindings of the GDL variables. An atom that does not hold is explained, for every rule
whose head matches it, by the first body literal that fails, recursively to ``depth``.

Literals are numbered as the rule is written (``written_places``), not as the Prolog
clause orders them: a rule ``p :- q & ~r`` whose clause tests ``~r`` first still calls
``q`` literal 1, and says when literals were tried before the one that fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any

from gdl2pl.bridge.errors import reasoner_error
from gdl2pl.bridge.pyform import py_of_term
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.errors import GdlError
from gdl2pl.flatten import BodyLiteral
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import relation_atom
from gdl2pl.flatten import relation_key
from gdl2pl.infix import infix_clause
from gdl2pl.infix import infix_term
from gdl2pl.infix import variable_names
from gdl2pl.kif import kif_clause
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import is_ground
from gdl2pl.syntax import variables
from gdl2pl.translate import DOES
from gdl2pl.translate import predicate_name

if TYPE_CHECKING:
    from gdl2pl.bridge.machine import StateMachine
    from gdl2pl.contract import MachineState

EXPLAIN_MODULE = "gdl_explain"


#: How the position of a syntax error in an atom given as text names its source.
ATOM_SOURCE = "<atom>"


class ExplainError(GdlError):
    """The atom cannot be explained: unknown relation, wrong arity, not ground."""


@dataclass(frozen=True)
class RuleUse:
    """One clause applied to an atom: the GDL rule and the Prolog clause it became."""

    source: str  # the GDL rule, in ``syntax``
    pos: Pos | None  # where it is in the game file
    prolog_line: int  # where its clause starts in the generated module (0: unknown)
    prolog_text: str
    bindings: dict[str, Term]  # GDL variable name (without ?) -> value
    #: for an atom that fails: the failing literal's 1-based place in the rule as written
    failing: int | None = None
    solutions: int | None = None  # how many solutions the literals tried before it have
    fact: bool = False  # the source clause is a fact
    #: each bound variable as the rule's text writes it (``?r`` in KIF, ``R`` in infix)
    variable_text: dict[str, str] = field(default_factory=dict)
    syntax: str = "kif"  # the syntax of ``source`` and of the atoms shown
    #: the places (as written) of the literals the clause tries before the failing one
    tried_before: tuple[int, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The rule use as JSON: the GDL rule (in ``syntax``), whether it is a fact, its
        place (file, line, column), the Prolog clause and its line in the translation,
        the bindings (each variable and value as ``syntax`` writes them: ``?r`` or
        ``R``), and for a rule that fails the failing literal (its place in the rule as
        written), the places of the literals tried before it and their solutions, and
        the sentence that says so (``failing_text``)."""
        show = infix_term if self.syntax == "infix" else kif_term
        return {
            "source": self.source,
            "fact": self.fact,
            "file": self.pos.file if self.pos else None,
            "line": self.pos.line if self.pos else None,
            "column": self.pos.column if self.pos else None,
            "prolog_line": self.prolog_line or None,
            "prolog_text": self.prolog_text,
            "bindings": {
                self.variable_text.get(k, "?" + k): show(v) for k, v in self.bindings.items()
            },
            "failing": self.failing,
            "failing_text": failing_text(self) if self.failing is not None else None,
            "tried_before": list(self.tried_before),
            "solutions": self.solutions,
        }


@dataclass(frozen=True)
class Node:
    """A node of an explanation. ``kind``: state, does, rule (holds by ``rule``), fails
    (no rule derives it; ``children`` are the rules tried, each a ``rule`` node with
    ``failing`` set), not (a negation that holds), distinct, same, more (depth
    reached), no_instance (a literal with variables that has no solution). The children
    of a ``rule`` node are its body literals in the order the rule writes them, each
    with its ``place`` there (1-based)."""

    text: str  # the atom or literal, in the explanation's syntax
    holds: bool
    kind: str
    rule: RuleUse | None = None
    children: tuple[Node, ...] = ()
    note: str = ""
    place: int | None = None  # a body literal's place in its parent's rule, as written

    def lines(self, indent: str = "", marker: str = "") -> Iterator[str]:
        """The node as text lines: its first line at ``indent`` + ``marker``, what
        explains it below, indented."""
        sub = indent + " " * len(marker) + "  "
        if self.kind == "attempt" and self.rule is not None:  # one rule that fails
            yield from _rule_lines(self.rule, indent + marker, indent + " " * len(marker))
            for child in self.children:
                yield from child.lines(sub)
            return
        verdict = "holds" if self.holds else "does not hold"
        head = f"{indent}{marker}{self.text} {verdict}"
        yield head + (f": {self.note}" if self.note else "")
        if self.rule is not None:
            yield from _rule_lines(self.rule, sub, sub)
        numbered = self.kind == "rule"
        for i, child in enumerate(self.children, 1):
            yield from child.lines(sub, f"{child.place or i}. " if numbered else "- ")

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def as_json(self) -> dict[str, Any]:
        """The node as JSON: ``text``, ``holds``, ``kind``, ``note``, ``place`` (a body
        literal's place in its parent's rule, or None), ``rule`` (see
        ``RuleUse.as_json``, or None) and ``children``, each a node."""
        return {
            "text": self.text,
            "holds": self.holds,
            "kind": self.kind,
            "note": self.note,
            "place": self.place,
            "rule": self.rule.as_json() if self.rule is not None else None,
            "children": [c.as_json() for c in self.children],
        }


def _rule_lines(r: RuleUse, first: str, indent: str) -> Iterator[str]:
    where = str(r.pos) if r.pos else "?"
    what = "fact" if r.fact else "rule"
    yield f"{first}by {what} {where}: {r.source}"
    if r.prolog_line:
        clause = " ".join(r.prolog_text.split())
        yield f"{indent}   = clause at line {r.prolog_line} of the translation: {clause}"
    if r.bindings:
        show = infix_term if r.syntax == "infix" else kif_term
        yield (
            indent
            + "   with "
            + ", ".join(
                f"{r.variable_text.get(k, '?' + k)} = {show(v)}" for k, v in r.bindings.items()
            )
        )
    if r.failing is not None:
        yield f"{indent}   {failing_text(r)}:"


def failing_text(r: RuleUse) -> str:
    """Where a rule fails, numbered as it is written: ``fails at literal 2 of the rule``,
    and, when the clause tried other literals first, which and with how many solutions."""
    text = f"fails at literal {r.failing} of the rule"
    if not r.tried_before:
        return text
    if list(r.tried_before) == list(range(1, (r.failing or 0))):
        before = "the literals before it"
    else:
        places = [str(p) for p in r.tried_before]
        listed = places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]
        before = f"literal{'s' if len(places) > 1 else ''} {listed} (tried first)"
    if r.solutions == 1:
        return f"{text}, given the one solution of {before}"
    n = "1000+" if (r.solutions or 0) >= 1000 else str(r.solutions)
    return f"{text} for each of the {n} solutions of {before} (the first shown)"


@dataclass(frozen=True)
class Explanation:
    """The answer to one question: does ``atom`` hold, and why."""

    atom: Term
    holds: bool
    tree: Node
    state: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return str(self.tree)


def explain_runtime() -> Any:
    """The janus module with ``prolog/gdl_explain.pl`` loaded (once per process)."""
    return runtime_with("gdl2pl.prolog", "gdl_explain.pl")


def game_relations(sm: StateMachine) -> dict[str, int]:
    """The relations of the game (name -> arity): every head and body atom; ``(p)``,
    written with empty parentheses, is the relation ``p()``, apart from ``p``
    (``relation_key``)."""
    rels: dict[str, int] = {"true": 1, "does": 2}
    for _, r in sm.translation.origins:
        rels.setdefault(*relation_key(r.head))
        for lit in r.body:
            s = _sentence(lit)
            if s is not None:
                rels.setdefault(*relation_key(s))
    return rels


def depends_on_does(sm: StateMachine, atom: Sentence) -> bool:
    """True if atoms of the relation of ``atom`` may depend on the joint move (relations
    told apart as the translator tells them: ``relation_key``)."""
    uses: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for _, r in sm.translation.origins:
        body = {relation_key(s) for s in map(_sentence, r.body) if s is not None}
        uses.setdefault(relation_key(r.head), set()).update(body)
    relation = relation_key(atom)
    seen, todo = {relation}, [relation]
    while todo:
        for q in uses.get(todo.pop(), ()):
            if q == DOES:
                return True
            if q not in seen:
                seen.add(q)
                todo.append(q)
    return relation == DOES


def parse_atom(sm: StateMachine, atom: Term | str, syntax: str = "kif") -> Sentence:
    """The atom (a term, or KIF text), checked against the game: a known relation, the
    right arity, ground; errors name a term in ``syntax``. A malformed atom text raises
    ``GdlSyntaxError`` positioned in that text (file ``ATOM_SOURCE``), not in the game."""
    t = parse_kif_term(atom, ATOM_SOURCE) if isinstance(atom, str) else atom
    show = infix_term if syntax == "infix" else kif_term
    text = atom if isinstance(atom, str) else show(atom)
    if isinstance(t, Var):
        raise ExplainError(f"{text}: a variable is not an atom")
    if not is_ground(t):
        raise ExplainError(f"{text}: not ground (has variables); give a ground atom")
    t = sm.term(kif_term(t))
    name, arity = relation_key(t)  # type: ignore[arg-type]
    rels = game_relations(sm)

    def relation(n: str) -> str:  # (p) is the relation p(), written as the answer's syntax
        return show(relation_atom((n, 0))) if n.endswith("()") else n

    if name not in rels:
        known = ", ".join(relation(n) for n in sorted(rels))
        other = name[:-2] if name.endswith("()") else name + "()"  # the other spelling
        hint = f"; did you mean {relation(other)}?" if other in rels else ""
        raise ExplainError(
            f"{text}: unknown relation {relation(name)}{hint} (the game's relations: {known})"
        )
    if rels[name] != arity:
        raise ExplainError(
            f"{text}: {relation(name)} takes {rels[name]} argument(s) in this game, not {arity}"
        )
    return t  # type: ignore[return-value]


def explain(
    sm: StateMachine,
    state: MachineState,
    atom: Term | str,
    depth: int = 3,
    joint_move: Sequence[Term | str] | None = None,
    syntax: str = "kif",
) -> Explanation:
    """Why ``atom`` holds in ``state`` (with ``joint_move`` as ``does``), or why not;
    atoms and rules written in ``syntax`` (``kif`` or ``infix``)."""
    goal = parse_atom(sm, atom)
    janus = explain_runtime()
    joint = [_py(sm.term(m) if isinstance(m, str) else m) for m in (joint_move or ())]
    if joint and len(joint) != len(sm.roles):
        raise ExplainError(f"a joint move needs {len(sm.roles)} moves, got {len(joint)}")
    fluents = [_py(f) for f in state]
    sm.is_terminal(state)  # any query installs the state (and checks it) in this thread
    try:
        with sm.using():
            raw = janus.apply_once(
                EXPLAIN_MODULE, "explain_atom", sm.module, fluents, joint, _goal_py(goal), depth
            )
    except janus.PrologError as e:  # the limit, an interrupt, or a resource error
        raise reasoner_error(f"{sm.name}: why {kif_term(goal)}", e) from None
    if syntax not in ("kif", "infix"):
        raise ExplainError(f"unknown syntax {syntax!r}: expected 'kif' or 'infix'")
    builder = _Builder(sm, syntax)
    tree = builder.node(raw, builder.show(goal))
    return Explanation(goal, tree.holds, tree, tuple(sorted(builder.show(f) for f in state)))


# -- from Prolog's answer to nodes -----------------------------------------------------------


def _py(t: Term) -> Any:
    return py_of_term(t, ExplainError)


def _goal_py(s: Sentence) -> Any:
    args = s.args if isinstance(s, Func) else ()
    if s.name in ("true", "does") and args:
        return [s.name, *(_py(a) for a in args)]
    name = predicate_name(*relation_key(s))  # (p) is the relation p() of arity 0, not p
    return [name, *(_py(a) for a in args)] if args else name


def _symbol(x: Any) -> str:
    return str(x).lower() if isinstance(x, bool) else str(x)


def _term(py: Any) -> Term:
    if isinstance(py, list):
        if py == ["$var"]:
            return Var("_")
        return Func(_symbol(py[0]), tuple(_term(a) for a in py[1:]))
    return Const(_symbol(py))


def _sentence(lit: BodyLiteral) -> Sentence | None:
    if isinstance(lit, Not):
        return _sentence(lit.body)  # type: ignore[arg-type]
    if isinstance(lit, Const | Func):
        return lit
    return None


def _match(pattern: Term, value: Term, out: dict[str, Term]) -> None:
    """Bind the variables of ``pattern`` to the parts of ``value`` (unbound parts of
    ``value`` are Var and bind nothing)."""
    if isinstance(value, Var):
        return
    if isinstance(pattern, Var):
        out.setdefault(pattern.name, value)
    elif isinstance(pattern, Func) and isinstance(value, Func):
        for p, v in zip(pattern.args, value.args, strict=False):
            _match(p, v, out)


def _subst(t: Term, b: dict[str, Term]) -> Term:
    if isinstance(t, Var):
        return b.get(t.name, t)
    if isinstance(t, Func):
        return Func(t.name, tuple(_subst(a, b) for a in t.args))
    return t


def _literal_text(lit: BodyLiteral, b: dict[str, Term], syntax: str = "kif") -> str:
    """A body literal with the bindings ``b`` applied, in ``syntax``."""
    if syntax == "infix":
        return infix_term(_subst_literal(lit, b))
    if isinstance(lit, Distinct):
        return f"(distinct {kif_term(_subst(lit.left, b))} {kif_term(_subst(lit.right, b))})"
    if isinstance(lit, Not):
        return f"(not {_literal_text(lit.body, b)})"  # type: ignore[arg-type]
    return kif_term(_subst(lit, b))  # type: ignore[arg-type]


def _subst_literal(lit: Any, b: dict[str, Term]) -> Any:
    if isinstance(lit, Distinct):
        return Distinct(_subst(lit.left, b), _subst(lit.right, b))
    if isinstance(lit, Not):
        return Not(_subst_literal(lit.body, b))
    return _subst(lit, b)


def _prolog_args(py: Any) -> list[Term]:
    """The GDL arguments of a Prolog call in py form (a fluent store call gives the
    fluent as the single argument of ``true``)."""
    if not isinstance(py, list):
        name = _symbol(py)
        return [Const(name[5:])] if name.startswith("true_") else []
    name = _symbol(py[0])
    args = [_term(a) for a in py[1:]]
    if name in ("true", "true_other"):
        return args
    if name.startswith("true_"):
        return [Func(name[5:], tuple(args))]
    return args


class _Builder:
    def __init__(self, sm: StateMachine, syntax: str = "kif") -> None:
        self.sm = sm
        self.syntax = syntax
        self.show = infix_term if syntax == "infix" else kif_term
        self.by_line = {line: rule for line, rule in sm.translation.origins}
        self.lines = sm.translation.text.split("\n")

    def clause_text(self, line: int) -> str:
        out = []
        for text in self.lines[line - 1 :]:
            out.append(text)
            if text.rstrip().endswith("."):
                break
        return "\n".join(out)

    def bindings(self, rule: FlatRule, head: Any, lits: list[Any]) -> dict[str, Term]:
        b: dict[str, Term] = {}
        head_args = rule.head.args if isinstance(rule.head, Func) else ()
        for p, v in zip(head_args, _prolog_args(head), strict=False):
            _match(p, v, b)
        for lit, py in zip(rule.body, lits, strict=False):
            if isinstance(py, list) and py and py[0] == "\\+\\+":
                py = py[1]  # a positive literal proved once (ground when called)
            if isinstance(lit, Const | Func):
                for p, v in zip(
                    lit.args if isinstance(lit, Func) else (), _prolog_args(py), strict=False
                ):
                    _match(p, v, b)
        names = _var_order(rule)
        return {n: b[n] for n in names if n in b}

    def rule_use(
        self,
        line: int,
        head: Any,
        lits: list[Any],
        failing: int | None = None,
        n: int | None = None,
    ) -> tuple[RuleUse, FlatRule | None]:
        rule = self.by_line.get(line)
        if rule is None:
            return RuleUse("?", None, line, self.clause_text(line) if line else "", {}), None
        b = self.bindings(rule, head, lits)
        places = written_places(rule)
        tried: tuple[int, ...] = ()
        if failing is not None:
            tried = tuple(sorted(set(places[: failing - 1])))
            failing = places[failing - 1]
        infix = self.syntax == "infix"
        src = " ".join((infix_clause(rule.source) if infix else kif_clause(rule.source)).split())
        names = [
            v.name for part in (rule.source.head, *_body(rule.source)) for v in variables(part)
        ]
        shown = variable_names(names) if infix else {n: "?" + n for n in names}
        use = RuleUse(
            src,
            rule.source.pos,
            line,
            self.clause_text(line),
            b,
            failing,
            n,
            fact=not isinstance(rule.source, Rule),
            variable_text={k: shown[k] for k in b if k in shown},
            syntax=self.syntax,
            tried_before=tried,
        )
        return use, rule

    def node(self, raw: Any, text: str) -> Node:
        kind = _symbol(raw[0])
        if kind == "state":
            return Node(self.input_atom(raw), True, kind, note="in the state")
        if kind == "no_state":
            return Node(self.input_atom(raw), False, kind, note="not in the state")
        if kind == "does":
            return Node(self.input_atom(raw), True, kind, note="in the joint move")
        if kind == "no_does":
            return Node(self.input_atom(raw), False, kind, note="not in the joint move")
        if kind == "rule":
            _, line, head, lits, subs = raw
            use, rule = self.rule_use(line, head, lits)
            texts = self.literal_texts(rule, use.bindings, len(subs))
            places = written_places(rule) if rule is not None else list(range(1, len(subs) + 1))
            # a guard before a recursive call is asked twice (``order_body``): once shown
            once = {(p, t): s for s, t, p in zip(subs, texts, places, strict=True)}
            written = sorted(
                (replace(self.node(s, t), place=p) for (p, t), s in once.items()),
                key=lambda kid: kid.place or 0,
            )
            return Node(text, True, kind, use, tuple(written))
        if kind == "fails":
            _, _atom, attempts = raw
            kids = tuple(self.attempt(a, text) for a in attempts)
            note = "no rule derives it" if kids else "no rule has a matching head"
            return Node(text, False, kind, None, kids, note)
        if kind == "not":
            inner = self.node(raw[1], _strip_not(text))
            return Node(text, True, kind, children=(inner,))
        if kind == "holds":
            inner = self.node(raw[1], _strip_not(text))
            return Node(text, False, kind, children=(inner,))
        if kind == "distinct":
            return Node(text, True, kind, note="the two terms differ")
        if kind == "same":
            return Node(text, False, kind, note="the two terms are identical")
        if kind == "no_instance":
            return Node(text, False, kind, note="no instance holds")
        if kind == "more":
            return Node(text, False, kind, note="(not explained further: --depth)")
        raise ExplainError(f"unexpected explanation node {kind}")

    def attempt(self, raw: Any, text: str) -> Node:
        _, line, head, lits, k, n, sub = raw
        use, rule = self.rule_use(line, head, lits, k, n)
        texts = self.literal_texts(rule, use.bindings, len(lits))
        child = self.node(sub, texts[k - 1])
        return Node(text, False, "attempt", use, (child,))

    def literal_texts(self, rule: FlatRule | None, b: dict[str, Term], n: int) -> list[str]:
        if rule is None:
            return ["?"] * n
        return [_literal_text(lit, b, self.syntax) for lit in rule.body]

    def input_atom(self, raw: Any) -> str:
        """The atom of true (a fluent of the state) or does (a move) in ``raw``."""
        name = "does" if _symbol(raw[0]).endswith("does") else "true"
        return self.show(Func(name, tuple(_term(a) for a in raw[1:])))


def written_places(rule: FlatRule) -> list[int]:
    """For each literal of the flat clause's body (as the Prolog clause orders it), its
    1-based place in the body of the rule as written; a literal inside an ``or`` or an
    ``and`` takes the place of that group."""
    leaves: dict[Any, list[int]] = {}
    for place, lit in enumerate(_body(rule.source), 1):
        for leaf in _leaves(lit):
            leaves.setdefault(leaf, []).append(place)
    taken: dict[Any, int] = {}
    out: list[int] = []
    for i, lit in enumerate(rule.body, 1):
        found = leaves.get(lit, [])
        k = taken.get(lit, 0)
        taken[lit] = k + 1
        out.append(found[k] if k < len(found) else found[-1] if found else i)
    return out


def _leaves(lit: Any) -> Iterator[Any]:
    """The literals a flat body may hold of ``lit``: itself, or those of its group."""
    if isinstance(lit, Or):
        for d in lit.disjuncts:
            yield from _leaves(d)
    elif isinstance(lit, And):
        for c in lit.conjuncts:
            yield from _leaves(c)
    else:
        yield lit


def _strip_not(text: str) -> str:
    if text.startswith("(not ") and text.endswith(")"):
        return text[5:-1]
    return text[1:] if text.startswith("~") else text


def _body(c: Any) -> tuple[Any, ...]:
    return tuple(c.body) if isinstance(c, Rule) else ()


def _var_order(rule: FlatRule) -> list[str]:
    names = {v.name: None for part in (rule.head, *rule.body) for v in variables(part)}
    return list(names)
