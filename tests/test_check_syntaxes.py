"""Every finding of the checker prints in both syntaxes (issue 53, item 1): the course's
own recursion example crashed every command on an infix game, because one finding quoted
a variable through a printer that only printed literals.

Three nets: a table with a game for every finding code ``gdl2pl/check.py`` can report (a
code without a game fails the test), each read from KIF and from infix and answered in
both, the quoted term checked; random games built of every kind of term and literal,
checked in both syntaxes; and the notes' example through each command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import canonical_variables
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.check import Finding
from gdl2pl.check import check_description
from gdl2pl.cli import main
from gdl2pl.infix import parse_infix
from gdl2pl.infix import print_infix
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.syntax import walk
from gdl2pl.vocabulary import CONNECTIVES
from gdl2pl.written import term_text

CHECK_PY = Path(__file__).resolve().parents[1] / "gdl2pl" / "check.py"

#: A small valid game each snippet is added to (``missing-role``'s snippet stands alone).
BASE = """(role r) (init (c 0))
(<= (legal r (go ?x)) (true (c ?x)))
(<= (next (c ?x)) (does r (go ?x)))
(<= terminal (true (c 1))) (goal r 100)
"""

#: For each finding code: a snippet that makes it, and what the finding's message quotes
#: of it in KIF and in infix (a variable, a function term, a negation, ``or``...).
FINDINGS: dict[str, tuple[str, str, str]] = {
    "zero-arity-rule": ("(<= (p ?x))", "(<= (p ?x)) is a rule", "p(X) :- . is a rule"),
    "defines-input": ("(<= (true (c ?x)) (does r (go ?x)))", "true is", "true is"),
    "misplaced-keyword": (
        "(<= (or ?x (f ?x)) (true (c ?x)))",
        "(or ?x (f ?x)) cannot",
        "or(X,f(X)) cannot",
    ),
    "zero-arity-relation": ("(<= (q) (true (c ?x)))", "(q) is written", "q() is written"),
    "next-in-sees": ("(<= (sees r (saw ?x)) (next (c ?x)))", "next in a", "next in a"),
    "next-in-body": ("(<= (p ?x) (next (c ?x)))", "next must", "next must"),
    "sees-in-body": ("(<= (p ?x) (sees r (c ?x)))", "sees must", "sees must"),
    "does-in-percept": (
        "(<= (sees ?r (does ?r (go ?x))) (does ?r (go ?x)))",
        "percept (does ?r (go ?x))",
        "percept does(R,go(X))",
    ),
    "sees-any-role": (
        "(<= (sees ?p (saw ?x)) (true (c ?x)))",
        "the role ?p of this sees rule",
        "the role P of this sees rule",
    ),
    "keyword-in-percept": (
        "(<= (sees r (legal r (go ?x))) (true (c ?x)))",
        "percept (legal r (go ?x))",
        "percept legal(r,go(X))",
    ),
    "keyword-as-function": (
        "(<= (p (legal ?x (f ?x))) (true (c ?x)))",
        "in (legal ?x (f ?x))",
        "in legal(X,f(X))",
    ),
    "zero-arity-function": ("(<= (p (f)) (true (c ?x)))", "(f) is written", "f() is written"),
    "negated-non-sentence": (
        "(<= (p ?x) (true (c ?x)) (not (or (q ?x) (distinct ?x 1))))",
        "(not (or (q ?x) (distinct ?x 1))) contains (or (q ?x) (distinct ?x 1))",
        "~(q(X) | distinct(X,1)) contains (q(X) | distinct(X,1))",
    ),
    "empty-disjunction": ("(<= (p ?x) (true (c ?x)) (or))", "disjunction (or)", "disjunction (|)"),
    "variable-in-fact": ("(p (f ?x) a)", "fact (p (f ?x) a) contains the variable ?x", "X"),
    "unsafe-variable": (
        "(<= (p ?x ?y) (true (c ?x)) (not (q ?y)))",
        "variable ?y in the head",
        "variable Y in the head",
    ),
    "pre-gdl-ii": ("(<= (sees (f ?x)) (true (c ?x)))", "(sees (f ?x)) has 1", "sees(f(X)) has 1"),
    "pre-gdl-2010": (
        "(<= (base ?x (f ?x)) (true (c ?x)))",
        "(base ?x (f ?x)) has 2",
        "base(X,f(X)) has 2",
    ),
    "keyword-arity": ("(<= (legal ?x) (true (c ?x)))", "in (legal ?x)", "in legal(X)"),
    "arity-mismatch": (
        "(<= (p ?x) (true (c ?x))) (<= (p ?x (f ?x)) (true (c ?x)))",
        "1 in (p ?x) (line",
        "1 in p(X) (line",
    ),
    "arity-limit": (
        "(<= (p " + " ".join(["?x"] * 1025) + ") (true (c ?x)))",
        "p has 1,025",
        "p has 1,025",
    ),
    "and-in-body": ("(<= (p ?x) (and (true (c ?x)) (not (q ?x))))", "(and ...)", "(and ...)"),
    "mixed-case": ("(<= (p ?x) (true (c ?x))) (<= (P ?x) (true (C ?x)))", "p (line", "P (line"),
    "missing-role": ("(<= (p ?x) (q ?x) (not (r ?x)))", "defines no role", "defines no role"),
    "missing-legal": ("(role r)", "defines no legal", "defines no legal"),
    "missing-goal": ("(role r)", "defines no goal", "defines no goal"),
    "missing-terminal": ("(role r)", "defines no terminal", "defines no terminal"),
    "goal-value": (
        "(<= (goal ?r (f ?x)) (role ?r) (true (c ?x)))",
        "value (f ?x) is",
        "value f(X) is",
    ),
    "unknown-role": (
        "(<= (legal bob (go ?x)) (true (c ?x)))",
        "in (legal bob (go ?x))",
        "in legal(bob,go(X))",
    ),
    "percept-random": (
        "(role random) (<= (percept random (f ?x)) (true (c ?x)))",
        "(percept random (f ?x)): the random",
        "percept(random,f(X)): the random",
    ),
    "sees-random": (
        "(role random) (<= (sees random (f ?x)) (true (c ?x)))",
        "(sees random (f ?x)): the random",
        "sees(random,f(X)): the random",
    ),
    "random-goal": (
        "(role random) (<= (goal random 0) (true (c ?x)))",
        "(goal random 0): the random",
        "goal(random,0): the random",
    ),
    "random-without-moves": ("(role random)", "declares the role random", "role random"),
    "keyword-dependency": ("(<= (init (c ?x)) (true (c ?x)))", "init must", "init must"),
    "unstratified-negation": (
        "(<= (p ?x) (true (c ?x)) (not (p ?x)))",
        "(p ?x) is negated",
        "p(X) is negated",
    ),
    "negation-cycle": (
        "(<= (goal ?r 0) (role ?r) (not (goal ?r 100)))",
        "(goal ?r 100) depends on (goal ?r 0)",
        "goal(R,100) depends on goal(R,0)",
    ),
    "recursion-restriction": (
        "(<= (p ?x ?z) (p ?x ?y) (p ?y ?z))",
        "the argument ?y of (p ?x ?y)",
        "the argument Y of p(X,Y)",
    ),
    "never-holds": (
        "(<= (p ?x) (does ?x (og ?x)))",
        "gives ?x the move (og ?x)",
        "gives X the move og(X)",
    ),
    "undefined-relation": (
        "(<= (p ?x) (true (c ?x)) (foo ?x (f ?x)))",
        "(foo ?x (f ?x)) never holds",
        "foo(X,f(X)) never holds",
    ),
    "unused-relation": ("(<= (p ?x) (true (c ?x)))", "relation p (defined", "relation p (defined"),
}

#: Codes only a KIF text can have (an infix text cannot write ``(and ...)``).
KIF_ONLY = frozenset({"and-in-body"})


def codes_in_checker() -> set[str]:
    """Every code ``gdl2pl/check.py`` can report: its code literals, with the
    ``missing-{kw}`` family spelled out for each keyword it loops over."""
    source = CHECK_PY.read_text(encoding="utf-8")
    found = set(re.findall(r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"', source))
    family = re.search(r'for kw in \(([^)]*)\):.{0,200}?f"missing-\{kw\}"', source, re.S)
    assert family, "the missing-{kw} family moved: update this test"
    found |= {f"missing-{kw}" for kw in re.findall(r'"(\w+)"', family.group(1))}
    return found


def test_every_finding_code_has_a_game() -> None:
    assert codes_in_checker() == set(FINDINGS)


#: Body literals of every kind (a zero-arity relation, a negation, distinct, or): added to
#: each rule of a snippet, so that every finding quotes a rule holding them all.
DECORATION = "(q4 ?d) (q0) (not (q1 ?d)) (distinct ?d k) (or (q2 ?d (f ?d)) (q3 k))"

#: Codes a decorated rule no longer has (a rule with an empty body has a body then).
UNDECORATED = frozenset({"zero-arity-rule"})


def game(code: str, decorated: bool = False) -> str:
    snippet = FINDINGS[code][0]
    if decorated:
        clauses = parse_kif(snippet).clauses
        snippet = " ".join(
            str(Rule(c.head, (*c.body, *parse_kif(f"(<= h {DECORATION})").clauses[0].body)))
            if isinstance(c, Rule)
            else str(c)
            for c in clauses
        )
    return snippet if code.startswith("missing-") else BASE + snippet


def read(code: str, syntax: str, decorated: bool = False) -> Description:
    kif = parse_kif(game(code, decorated), "t.kif")
    return kif if syntax == "kif" else parse_infix(print_infix(kif), "t.gdl")


def assert_written_in(f: Finding, syntax: str, d: Description) -> None:
    """The finding quotes the game in ``syntax``: its rule reads back as one of the game's
    clauses, and an infix message shows no KIF variable nor a KIF one an infix neck."""
    if f.rule:
        back = parse_infix(f.rule) if syntax == "infix" else parse_kif(f.rule)
        assert len(back.clauses) == 1, f.rule
        clauses = canonical_variables(d).clauses
        assert canonical_variables(back).clauses[0] in clauses, f.rule
    if syntax == "infix":
        assert not re.search(r"\?\w", f.message + f.rule), f.message
        assert "(<=" not in f.message + f.rule, f.message
    else:
        assert ":-" not in f.message + f.rule, f.message


READINGS = [
    (code, read_as, decorated)
    for code in sorted(FINDINGS)
    for read_as in ("kif", "infix")
    for decorated in (False, True)
    if (read_as == "kif" or code not in KIF_ONLY) and not (decorated and code in UNDECORATED)
]


@pytest.mark.parametrize(("code", "read_as", "decorated"), READINGS)
def test_each_finding_prints_in_both_syntaxes(code: str, read_as: str, decorated: bool) -> None:
    d = read(code, read_as, decorated)
    for answer, quoted in zip(("kif", "infix"), FINDINGS[code][1:], strict=True):
        findings = check_description(d, syntax=answer)
        mine = [f for f in findings if f.code == code]
        assert mine, f"{code} not found in {[f.code for f in findings]}"
        # read from infix, KIF names the variables ?X, ?Y (read from KIF, ?x, ?y)
        same = str.lower if answer == "kif" else str
        assert any(same(quoted) in same(f.message) for f in mine), [f.message for f in mine]
        for f in findings:
            assert_written_in(f, answer, d)


# -- random games of every kind of term -------------------------------------------------

#: Names that reach every check: keywords, connectives, GDL-II words, the random role,
#: goal values, and names differing only in case.
NAMES = [
    "p", "q", "P", "f", "c", "r", "random", "role", "init", "true", "next", "does", "legal",
    "goal", "terminal", "sees", "percept", "base", "input", "not", "or", "and", "distinct",
    "0", "100", "101",
]  # fmt: skip

#: Most names drawn are p or q, so that rules recurse, negate and use each other.
names = st.sampled_from(["p", "q"]) | st.sampled_from(NAMES)
relations = st.sampled_from(["p", "q"]) | names
variables_ = st.sampled_from(["x", "y", "X", "_"]).map(Var)
constants = names.map(Const)


def functions(
    args: st.SearchStrategy[Term], called: st.SearchStrategy[str] = names
) -> st.SearchStrategy[Term]:
    return st.builds(lambda n, a: Func(n, tuple(a)), called, st.lists(args, max_size=3))


terms: st.SearchStrategy[Term] = st.recursive(
    variables_ | variables_ | constants, functions, max_leaves=6
)
sentences = relations.map(Const) | functions(terms, relations) | functions(terms, relations)


def literals_of(inner: st.SearchStrategy[Literal]) -> st.SearchStrategy[Literal]:
    groups = st.lists(inner, max_size=3).map(tuple)
    return (
        inner.map(Not)
        | groups.map(Or)
        | groups.map(And)
        | st.builds(Distinct, terms, terms)
    )


literals: st.SearchStrategy[Literal] = st.recursive(sentences, literals_of, max_leaves=5)
clauses = sentences.map(Fact) | st.builds(
    lambda h, b: Rule(h, tuple(b)), sentences, st.lists(literals, max_size=4)
)


@settings(max_examples=200, deadline=None)
@given(literals | terms)
def test_every_term_and_literal_prints_in_both_syntaxes(node: Literal | Term) -> None:
    # a relation named by a connective (infix's or(a,b)) has no KIF text to read back
    assume(not any(getattr(n, "name", "").casefold() in CONNECTIVES for n in walk(node)))
    clause = Rule(Const("h"), (Func("q", (node,)) if isinstance(node, Var) else node,))
    for syntax, read in (("kif", parse_kif), ("infix", parse_infix)):
        text = term_text(node, syntax, clause)
        if isinstance(node, Var):
            text = f"q({text})" if syntax == "infix" else f"(q {text})"
        rule = f"h :- {text}" if syntax == "infix" else f"(<= h {text})"
        back = read(rule).clauses[0]
        assert canonical_variables(Description((back,))) == canonical_variables(
            Description((clause,))
        ), rule


@settings(max_examples=150, deadline=None)
@given(st.lists(clauses, min_size=1, max_size=6), st.sampled_from(["kif", "infix"]))
def test_any_game_is_checked_in_both_syntaxes(game_clauses: list, read_as: str) -> None:
    d = Description(tuple(game_clauses), None, read_as)
    for answer in ("kif", "infix"):
        for f in check_description(d, syntax=answer):
            assert f.message and isinstance(f.rule, str)
            if answer == "infix":
                assert not re.search(r"\?\w", f.message + f.rule), f.message


# -- the course notes' example through every command ------------------------------------

#: The notes' recursion rule (transitive closure) in a small infix game.
NOTES_GAME = """\
role(robot)
init(at(a))
p(a,b)
p(b,c)
r(X,Y) :- p(X,Y)
r(X,Z) :- r(X,Y) & r(Y,Z)
legal(robot,go(Y)) :- true(at(X)) & r(X,Y)
next(at(Y)) :- does(robot,go(Y))
terminal :- true(at(c))
goal(robot,100) :- true(at(c))
goal(robot,0) :- ~true(at(c))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["translate"],
        ["analyze"],
        ["play"],
        ["explain", "{game}", "legal(robot,go(c))"],
        ["model"],
        ["graph"],
    ],
    ids=lambda argv: argv[0],
)
def test_the_notes_recursion_runs_every_command(argv, tmp_path, capsys) -> None:
    require_prolog()
    path = tmp_path / "notes.gdl"
    path.write_text(NOTES_GAME, encoding="utf-8")
    args = [a.format(game=path) for a in argv]
    status = main(args if "{game}" in argv else [*args, str(path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "internal error" not in out + err and "Traceback" not in err
    if argv[0] == "check":
        assert "the argument Y of r(X,Y)" in out and "?" not in out


# -- a plain logic program, and a constant meant as a variable (issue 53, item 6) ---------

#: The notes' recursion example: a logic program, no roles.
NOTES_PROGRAM = "p(a,b) p(b,c) q(c)\nr(X,Y) :- p(X,Y)\nr(X,Z) :- r(X,Y) & r(Y,Z)\n"


def test_a_logic_program_is_checked_as_one(tmp_path, capsys) -> None:
    path = tmp_path / "notes.gdl"
    path.write_text(NOTES_PROGRAM, encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        f"{path}: note: a logic program: no roles (read as a logic program, as model reads "
        "it; a game needs role, legal, goal and terminal)"
    )
    assert "defines no" not in out and "error" not in out
    assert out.count("recursion restriction") == 2  # its own findings stay
    # a text with a legal rule but no role is a game that lacks its role
    game = tmp_path / "norole.gdl"
    game.write_text("legal(r,go)\nterminal\ngoal(r,0)\n", encoding="utf-8")
    assert main(["check", str(game)]) == 1
    out = capsys.readouterr().out
    assert "error: the game defines no role" in out and "logic program" not in out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ("infix", "(the body has the constant x: lower-case names are constants; the variable "
         "is written X)"),
        ("kif", "(the body has the constant x: a name without ? is a constant; the variable "
         "is written ?X)"),
    ],
)
def test_a_lower_case_name_meant_as_a_variable_gets_a_hint(answer: str, hint: str) -> None:
    d = parse_infix(
        "role(robot)\nlegal(robot,mark(X)) :- true(cell(x,b))\nterminal\ngoal(robot,100)\n"
    )
    (unsafe,) = [f for f in check_description(d, syntax=answer) if f.code == "unsafe-variable"]
    assert unsafe.message.endswith(hint)
    # no hint where no constant is spelled as the variable
    d = parse_infix("role(robot)\nlegal(robot,mark(X)) :- true(cell(y,b))\nterminal\n")
    (unsafe,) = [f for f in check_description(d) if f.code == "unsafe-variable"]
    assert "constant" not in unsafe.message
