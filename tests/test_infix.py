"""Infix GDL: the examples of the founding documents, the syntax users write, error positions,
printing, speed, and loading files in either syntax."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import shared_dir

from gdl2pl.errors import GdlSyntaxError
from gdl2pl.infix import infix_term
from gdl2pl.infix import parse_infix
from gdl2pl.infix import parse_infix_term
from gdl2pl.infix import print_infix
from gdl2pl.infix import variable_names
from gdl2pl.kif import parse_kif
from gdl2pl.load import detect_syntax
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Var


def f(name: str, *args: str | Func) -> Func:
    """``Func`` from short strings: uppercase-initial or '_' args are variables."""
    return Func(name, tuple(_arg(a) for a in args))


def _arg(a: str | Func) -> Var | Const | Func:
    if isinstance(a, Func):
        return a
    return Var(a) if a[0].isupper() or a[0] == "_" else Const(a)


def clauses(text: str) -> tuple:
    return parse_infix(text).clauses


def body(text: str) -> tuple:
    (rule,) = clauses(text)
    assert isinstance(rule, Rule)
    return rule.body


# -- the infix examples of the seed documents --------------------------------------------------


_FENCE = re.compile(r"\s*(?:-\s*)?```\w*\s*")  # some fences open inside a list item: "  - ```"


def fenced_blocks(text: str) -> tuple[list[list[str]], str]:
    """The ``` fenced blocks (as lists of lines), and the text outside them."""
    blocks: list[list[str]] = []
    outside: list[str] = []
    inside = False
    for line in text.splitlines():
        if _FENCE.fullmatch(line):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
        else:
            outside.append(line)
    return blocks, "\n".join(outside)


def fenced_infix_runs(text: str) -> list[str]:
    """The infix parts of the ``` fenced blocks: runs of lines that are not KIF (a KIF line
    starts with '('; one block mixes both, to show that case is lost between them)."""
    runs: list[str] = []
    for block in fenced_blocks(text)[0]:
        current: list[str] = []
        for line in block:
            if line.strip().startswith("("):
                if any(s.strip() for s in current):
                    runs.append("\n".join(current))
                current = []
            else:
                current.append(line)
        if any(s.strip() for s in current):
            runs.append("\n".join(current))
    return runs


def indented_note_lines(text: str) -> list[str]:
    """Indented lines of plain-text notes (outside fenced blocks) that begin like a sentence,
    ``name(...``, without the note-taker's trailing remarks (after '...', '---', or words
    after the last ')')."""
    found = []
    for line in fenced_blocks(text)[1].splitlines():
        if not re.match(r"[ \t]+[a-z]\w*\s*\(", line):
            continue
        code = re.split(r"\s+(?:\.{3,}|---)\s", line.strip())[0]
        m = re.fullmatch(r"(.*\))\s+[A-Za-z][A-Za-z ]*", code)
        found.append(m.group(1) if m else code)
    return found


def latex_rules(text: str) -> list[str]:
    """Display-math rules (``$$ ... :- ... $$``) as plain infix; schematic ones (with
    ``\\dots``) and sets of sentences are left out."""
    found = []
    for math in re.findall(r"^\$\$(.*):-(.*)\$\$$", text, re.M):
        src = ":-".join(math)
        if "\\dots" in src or "\\{" in src or "(<=" in src:
            continue
        for latex, plain in [
            ("\\begin{aligned}", ""),
            ("\\end{aligned}", ""),
            ("\\\\", "\n"),
            ("\\text{ :- }", " :- "),
            ("&:-", ":-"),
            ("\\&", "&"),
            ("\\sim", "~"),
            ("\\ ", " "),
        ]:
            src = src.replace(latex, plain)
        found.append(src)
    return found


def backtick_infix(text: str) -> str:
    """Lines that are one `code` span holding infix (not KIF), joined: a rule continued on the
    next span (a line starting with the sign for 'or') stays one rule."""
    spans = re.findall(r"^`([^`]+)`[ \t]*$", text, re.M)
    return "\n".join(s for s in spans if not s.lstrip().startswith("("))


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    folder = shared_dir() / "seeds"
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))}
    assert texts, f"no seed documents in {folder}"
    return texts


def test_every_fenced_infix_block_of_the_seeds_parses(seeds: dict[str, str]) -> None:
    runs = [(name, run) for name, text in seeds.items() for run in fenced_infix_runs(text)]
    assert len(runs) >= 60
    total = 0
    for name, run in runs:
        try:
            total += len(parse_infix(run, name).clauses)
        except GdlSyntaxError as e:  # pragma: no cover - the message says which block
            pytest.fail(f"{name}: {e}\nin block:\n{run}")
    assert total >= 300


def test_every_indented_rule_of_the_notes_parses(seeds: dict[str, str]) -> None:
    lines = [line for text in seeds.values() for line in indented_note_lines(text)]
    assert len(lines) >= 15
    for line in lines:
        (clause,) = parse_infix(line).clauses
        assert isinstance(clause, (Fact, Rule)), line
    # 'r (X,Z) :- ...' has a space before its arguments
    spaced = [parse_infix(x).clauses[0] for x in lines if x.startswith("r (")]
    assert spaced and spaced[0].head == f("r", "X", "Z")


def test_every_display_math_rule_of_the_slides_parses(seeds: dict[str, str]) -> None:
    rules = [r for text in seeds.values() for r in latex_rules(text)]
    assert len(rules) >= 10
    for text in rules:
        parsed = parse_infix(text).clauses
        assert parsed and all(isinstance(c, Rule) for c in parsed), text
    ra = parse_infix("\n".join(rules))
    negated = [c for c in ra.clauses if c.head.name == "ra"]
    assert negated[0].body == (f("a", "X", "Y"), Not(f("p", "X", "Y")))


def test_buttons_and_lights_in_logic_notation_parses(seeds: dict[str, str]) -> None:
    text = "\n".join(backtick_infix(t) for t in seeds.values())
    d = parse_infix(text)
    heads = [c.head for c in d.clauses]
    assert f("legal", "robot", "a") in heads and Const("terminal") in heads
    nxt = [c for c in d.clauses if c.head == f("next", "p")]
    assert nxt[0].body == (
        Or(
            (
                And((f("does", "robot", "a"), Not(f("true", "p")))),
                And((f("does", "robot", "b"), f("true", "q"))),
            )
        ),
    )


def test_seed_variants_mean_what_they_say(seeds: dict[str, str]) -> None:
    runs = [run for text in seeds.values() for run in fenced_infix_runs(text)]
    first = parse_infix(next(r for r in runs if "-open" in r))
    assert Rule(Const("terminal"), (Not(Const("open")),)) in first.clauses
    frame = next(c for c in first.clauses if isinstance(c, Rule) and len(c.body) == 3)
    assert frame.body[2] == Distinct(Var("Z"), Const("b"))  # Z!=b
    assert Rule(f("legal", "x", "noop"), (f("true", f("control", "o")),)) in first.clauses
    rules = parse_infix(next(r for r in runs if "base(cell(M,N,Z))" in r))
    zero = next(c for c in rules.clauses if c.head == f("next", f("cell", "M", "N", "0")))
    assert zero.head.args[0].args[2] == Const("0")  # '0' where 'o' was meant: still a constant
    facts = [c.head for c in rules.clauses if isinstance(c, Fact)]
    i = facts.index(f("index", "1"))
    assert facts[i : i + 2] == [f("index", "1"), f("filler", "x")]  # two facts on one line


# -- the syntax -------------------------------------------------------------------------------


def test_names_variables_and_constants() -> None:
    (fact,) = clauses("p(X, _, _y, a, 1, bB_2, 'CELL', 'not-filled', 'it\\'s', 'a\\\\b')")
    assert fact.head.args == (
        Var("X"),
        Var("_"),
        Var("_y"),
        Const("a"),
        Const("1"),
        Const("bB_2"),
        Const("CELL"),
        Const("not-filled"),
        Const("it's"),
        Const("a\\b"),
    )


def test_propositions_and_zero_argument_relations_differ() -> None:
    assert clauses("terminal p() q ( )") == (
        Fact(Const("terminal")),
        Fact(Func("p", ())),
        Fact(Func("q", ())),
    )


@pytest.mark.parametrize("neg", ["~", "-", "\u00ac", "~ "])
def test_negation_signs(neg: str) -> None:
    assert body(f"p :- q & {neg}r(a)") == (Const("q"), Not(f("r", "a")))


def test_double_negation_and_negated_groups() -> None:
    assert body("p :- ~~q & ~(a & b)") == (Not(Not(Const("q"))), Not(And((Const("a"), Const("b")))))


def test_distinct_two_ways() -> None:
    assert body("p :- q(X,Y) & X != Y & distinct(X, f(Y)) & X\u2260a") == (
        f("q", "X", "Y"),
        Distinct(Var("X"), Var("Y")),
        Distinct(Var("X"), f("f", "Y")),
        Distinct(Var("X"), Const("a")),
    )
    assert body("p :- 'distinct'(a, b)") == (f("distinct", "a", "b"),)  # quoted: a relation
    assert clauses("distinct(a, b)") == (Fact(f("distinct", "a", "b")),)  # heads are relations


def test_or_and_grouping() -> None:
    a, b, c, d = map(Const, "abcd")
    assert body("p :- a | b") == (Or((a, b)),)
    assert body("p :- a & b | c") == (Or((And((a, b)), c)),)
    assert body("p :- (a & b) | c") == (Or((And((a, b)), c)),)
    assert body("p :- a & (b | c) & d") == (a, Or((b, c)), d)
    assert body("p :- (a) & ((b))") == (a, b)
    assert body("p :- (a | (b | c))") == (Or((a, Or((b, c)))),)
    assert body("p :- (a & b)") == (And((a, b)),)
    assert body("p :- (a |) & (b &) & (|) & (&)") == (Or((a,)), And((b,)), Or(()), And(()))


def test_rule_operators_and_empty_body() -> None:
    assert body("p :- q") == body("p <= q") == (Const("q"),)
    assert clauses("p :- .") == (Rule(Const("p"), ()),)


def test_clause_layout() -> None:
    text = """
    % facts may share a line; rules may span lines; the final '.' is optional
    index(1)    filler(x)  index(2).
    legal(P, mark(X,Y)) :-
        true(cell(X,Y,b)) &   % a comment inside a rule
        true(control(P))
    terminal :- ~open.  next(p) :- q
    """
    d = parse_infix(text)
    assert [c.head.name for c in d.clauses] == [
        "index",
        "filler",
        "index",
        "legal",
        "terminal",
        "next",
    ]
    assert len(d.clauses[3].body) == 2
    assert d.clauses[3].pos.line == 4 and d.clauses[3].body[1].pos.line == 6


def test_comment_sign_inside_a_quoted_name_is_not_a_comment() -> None:
    assert clauses("p('50%') % real comment 'x") == (Fact(f("p", "50%")),)


def test_crlf_tabs_and_no_break_spaces() -> None:
    d = parse_infix("p(a) :-\r\n\tq(a) &\u00a0r\r\nz")
    assert d == parse_infix("p(a) :- q(a) & r\nz")
    assert d.clauses[1].pos.line == 3


def error_of(text: str) -> GdlSyntaxError:
    with pytest.raises(GdlSyntaxError) as info:
        parse_infix(text, "g.gdl")
    assert info.value.file == "g.gdl"
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("p(a", 1, 4, "expected ')'"),
        ("p(a,)", 1, 5, "expected a term"),
        ("role(x)\np :- q &\n", 2, 9, "expected a literal"),
        ("p :- q &\n\nr :- s", 3, 3, "':-' must follow a rule head"),  # 'q & r', then ':-'?
        ("p :- q r(X)", 1, 8, "'&' missing"),
        ("p :- q\n  ~r", 2, 3, "negation"),
        ("X :- p", 1, 1, "variable"),
        ("p :- Foo(a)", 1, 6, "variable"),
        ("p :- X", 1, 6, "variable 'X' alone"),
        ("(role x)", 1, 1, "KIF"),
        ("p := q", 1, 3, ":="),
        ("p :- distinct(a)", 1, 16, "expected ','"),
        ("p('abc)", 1, 3, "quoted"),
        ("p :- (a & b", 1, 12, "expected ')'"),
        ("p :- a & & b", 1, 10, "expected a literal"),
        ("q(a)\n  p)", 2, 4, "unbalanced ')'"),
        ("p :- a !=", 1, 10, "expected a term"),
        # Prolog's habits: ',' between literals, 'not' and '\\+' for negation.
        ("win(X) :- move(X,Y), not win(Y).", 1, 20, "with '&' and negation with '~'"),
        ("win(X) :- move(X,Y) & not win(Y).", 1, 23, "'not' is not negation"),
        ("p :- q &\n  not r", 2, 3, "write '~'"),
        ("win(X) :- move(X,Y) & \\+ win(Y).", 1, 23, "'~' for 'not' and '\\+'"),
        ("p :- cannot q", 1, 13, "'&' missing"),
    ],
)
def test_syntax_errors_say_where(text: str, line: int, column: int, words: str) -> None:
    e = error_of(text)
    assert (e.line, e.column) == (line, column), str(e)
    assert words in e.message
    assert e.excerpt.splitlines()[-1] == " " * (column - 1) + "^"


def test_term_reading() -> None:
    assert parse_infix_term(" mark(X, 'B c') ") == Func("mark", (Var("X"), Const("B c")))
    assert parse_infix_term("noop") == Const("noop")
    with pytest.raises(GdlSyntaxError):
        parse_infix_term("a b")


# -- printing ---------------------------------------------------------------------------------


def test_print_reads_back_to_the_same_description() -> None:
    text = (EXAMPLES / "ticTacToe.gdl").read_text(encoding="utf-8")
    d = parse_infix(text)
    printed = print_infix(d)
    assert parse_infix(printed) == d
    assert "next(cell(M,N,b)) :-" in printed and "(distinct(M,J) | distinct(N,K))" in printed


def test_kif_names_are_printed_validly() -> None:
    (rule,) = parse_kif("(<= (Cell ?x ?X ?1 ?a-b) (p ?x ?X ?1 ?a-b) (not-filled +))").clauses
    printed = print_infix(Description((rule,)))
    assert printed == "'Cell'(X_2,X,V1,A_b) :- p(X_2,X,V1,A_b) & 'not-filled'('+')\n"
    assert variable_names(["x", "X", "1", "a-b"]) == {"x": "X_2", "X": "X", "1": "V1", "a-b": "A_b"}


def test_term_printing() -> None:
    assert infix_term(f("cell", "1", "X", "b")) == "cell(1,X,b)"
    assert infix_term(Not(Distinct(Var("x"), Const("A")))) == "~distinct(X,'A')"
    assert infix_term(Func("distinct", (Const("a"), Const("b")))) == "'distinct'(a,b)"
    with pytest.raises(ValueError):
        infix_term(Const("two\nlines"))


def test_long_rules_wrap_one_literal_per_line() -> None:
    (rule,) = clauses("p(X) :- " + " & ".join(f"q{i}(X)" for i in range(12)))
    printed = print_infix(Description((rule,)))
    assert printed.count("\n") == 13 and printed.splitlines()[1] == "    q0(X) &"


def test_a_40kb_file_parses_well_under_a_second() -> None:
    game = (EXAMPLES / "ticTacToe.gdl").read_text(encoding="utf-8")
    copies = []
    n = 0
    while sum(map(len, copies)) < 40_000:
        copies.append(re.sub(r"\b([a-z]\w*)\(", rf"\g<1>{n}(", game))
        n += 1
    text = "\n".join(copies)
    start = time.process_time()  # CPU time: a busy machine does not make it fail
    d = parse_infix(text)
    elapsed = time.process_time() - start
    assert len(d.clauses) == 41 * n
    assert elapsed < 1.0, f"{len(text)} characters took {elapsed:.2f} s"


# -- loading files in either syntax -----------------------------------------------------------


def test_syntax_detection() -> None:
    assert detect_syntax("  ; comment\n(role x)") == "kif"
    assert detect_syntax("% comment\nrole(x)") == "infix"
    assert detect_syntax("(role x)", "game.gdl") == "kif"  # infix never starts with "("
    assert detect_syntax("terminal (role x)", "game.kif") == "kif"
    assert detect_syntax("terminal (role x)") == "infix"
    assert detect_syntax("", "game.gdl") == "infix"
    assert detect_syntax("; only a comment", "game.kif") == "kif"
    assert parse_game("(role x)") == parse_game("role(x)") == parse_game("role(x)", "infix")
    with pytest.raises(ValueError):
        parse_game("role(x)", "prolog")  # type: ignore[arg-type]


def test_read_game_encodings_line_ends_and_errors(tmp_path: Path) -> None:
    utf8 = tmp_path / "utf8.kif"
    utf8.write_bytes("; Spiel für zwei\r\n(role weiß)\r\n".encode())
    assert read_game(utf8).clauses == (Fact(f("role", "weiß")),)
    latin = tmp_path / "latin.kif"
    latin.write_bytes("; Spiel für zwei\r\n(role weiß)\r\n".encode("latin-1"))
    with pytest.raises(GdlSyntaxError) as not_utf8:
        read_game(latin)
    assert (not_utf8.value.line, not_utf8.value.column) == (1, 10)
    assert "byte 0xFC is not UTF-8" in not_utf8.value.message
    bom = tmp_path / "bom.gdl"
    bom.write_bytes("\ufeffrole(x)\n".encode())
    assert read_game(bom).clauses == (Fact(f("role", "x")),)
    bad = tmp_path / "bad.hrf"
    bad.write_text("role(x)\np :- \n", encoding="utf-8")
    with pytest.raises(GdlSyntaxError) as info:
        read_game(bad)
    assert info.value.file == str(bad) and info.value.line == 2
    with pytest.raises(OSError) as missing:
        read_game(tmp_path / "missing.kif")
    assert missing.value.filename == str(tmp_path / "missing.kif")
