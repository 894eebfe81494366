"""The checker over every public game in ../shared/games: no crash, and the expected verdict.

Verdicts, most specific first:

- files the tables below name: exactly the error codes given (each with its reason);
- games of ../shared/anchors/invalid-games.csv whose listed flaw is still in our copy (the
  copies are often fixed versions): an error (or warning) with the code that covers it;
- games the reference engine played (a non-empty ../shared/reference/<path>.jsonl), and
  every other file: no error at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from gdl2pl.check import Finding
from gdl2pl.check import check_description
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import And
from gdl2pl.syntax import Clause
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Literal
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Term

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GAMES = SHARED / "games"
REFERENCE = SHARED / "reference"
INVALID_CSV = SHARED / "anchors" / "invalid-games.csv"

MISSING = ["missing-goal", "missing-legal", "missing-role", "missing-terminal"]

#: Files that do not parse (gdl-validation's parenthesis tests).
SYNTAX_ERRORS = {f"conformance/gdl-validation/badparens{i}.kif" for i in range(1, 6)}

#: Files with errors, beyond the flaws invalid-games.csv lists, and why.
EXPECTED_ERRORS: dict[str, tuple[set[str], str]] = {
    # gdl-validation: ValidatorTest expects exactly these problems (test_check.py pins them)
    "conformance/gdl-validation/baseDependsOnTrue.kif": ({"keyword-dependency"}, "ValidatorTest"),
    "conformance/gdl-validation/emptyDisjunction.kif": ({"empty-disjunction"}, "ValidatorTest"),
    "conformance/gdl-validation/varInTopLevelSentence.kif": (
        {"variable-in-fact"},
        "ValidatorTest",
    ),
    **{
        f"conformance/gdl-validation/misplacedDatalogKeyword{i}.kif": (
            {"misplaced-keyword", *MISSING},
            "ValidatorTest; a single sentence, not a game",
        )
        for i in (1, 2, 3)
    },
    "conformance/gdl-validation/commentEof.kif": (set(MISSING), "only a comment"),
    **{
        f"conformance/gdl-validation/formatter{i}{when}.kif": (set(MISSING), "formatter input")
        for i in (1, 2)
        for when in ("After", "Before")
    },
    # ggp-base: StaticValidationTest expects a ValidatorException
    **{
        f"conformance/ggp-base/test_case_3{c}.kif": ({"unsafe-variable"}, "StaticValidationTest")
        for c in "bef"
    },
    "conformance/ggp-base/test_clean_not_distinct.kif": (
        {"negated-non-sentence"},
        "StaticValidationTest",
    ),
    # real games, played by the reference engine, with the flaws of listed games
    "ggp-repository/ticTacToeClassic__removed.kif": (
        {"unsafe-variable"},
        "the distinctCell rules of ggp-base's test_case_3b, which ggp-base rejects",
    ),
    "ggp-repository/ruleDepthQuadratic__removed.kif": (
        {"negated-non-sentence"},
        "listed for (<= (legal robot giveup)); also (gameOver) and (not (distinct ?b0 1))",
    ),
}

#: Games whose negation is not stratified by name but harmless on the ground level
#: (../shared/games/README.md): the checker must warn, not reject.
GROUND_STRATIFIED = [
    "queens06ug",
    "queens08lg",
    "queens08ug",
    "queens12ug",
    "queens16ug",
    "queens31lg",
    "futoshiki4",
    "futoshiki5",
    "futoshiki6",
    "hidato19",
    "hidato37",
    "hexPie",
    "majorities",
    "nineBoardTicTacToePie",
]


# -- the corpus -------------------------------------------------------------------------


def _require_shared() -> None:
    if SHARED.is_dir():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{SHARED} is missing: CI must have ../shared beside the repository")
    pytest.skip(f"{SHARED} is missing")


def _files() -> list[str]:
    if not GAMES.is_dir():
        return ["<no corpus>"]
    return sorted(str(p.relative_to(GAMES)) for p in GAMES.rglob("*.kif"))


FILES = _files()


@cache
def _text(rel: str) -> str:
    return (GAMES / rel).read_text(encoding="utf-8")


@cache
def _parsed(rel: str) -> Description | GdlSyntaxError:
    try:
        return parse_kif(_text(rel), rel)
    except GdlSyntaxError as e:
        return e


@cache
def _findings(rel: str) -> tuple[Finding, ...]:
    d = _parsed(rel)
    assert isinstance(d, Description), f"{rel}: {d}"
    return tuple(check_description(d))


def _played(rel: str) -> bool:
    ref = (REFERENCE / rel).with_suffix(".jsonl")
    return ref.is_file() and ref.stat().st_size > 0


# -- invalid-games.csv --------------------------------------------------------------------


def _normal(text: str) -> str:
    """KIF text without comments, lowercased, single-spaced, no spaces inside parentheses."""
    text = re.sub(r";[^\n]*", " ", text).casefold()
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))


def _walk_literal(lit: Literal) -> Iterator[Const | Func]:
    if isinstance(lit, (Const, Func)):
        yield lit
    elif isinstance(lit, Not):
        yield from _walk_literal(lit.body)
    elif isinstance(lit, (Or, And)):
        for sub in lit.disjuncts if isinstance(lit, Or) else lit.conjuncts:
            yield from _walk_literal(sub)


def _sentences(c: Clause, body_only: bool = False) -> Iterator[Const | Func]:
    if not body_only:
        yield c.head
    if isinstance(c, Rule):
        for lit in c.body:
            yield from _walk_literal(lit)


def _functions(t: Term) -> Iterator[Func]:
    if isinstance(t, Func):
        yield t
        for a in t.args:
            yield from _functions(a)


def _sentence_arities(d: Description, name: str) -> set[int]:
    return {
        len(s.args) if isinstance(s, Func) else 0
        for c in d.clauses
        for s in _sentences(c)
        if s.name.casefold() == name
    }


def _function_arities(d: Description, name: str) -> set[int]:
    return {
        len(f.args)
        for c in d.clauses
        for s in _sentences(c)
        if isinstance(s, Func)
        for a in s.args
        for f in _functions(a)
        if f.name.casefold() == name
    }


#: Whether a file (relative path, parsed) has a flaw.
Detector = Callable[[str, Description], bool]


@dataclass(frozen=True)
class Covered:
    """A reason the checker covers: the finding it expects, and how to tell whether our
    copy of the game still has the flaw (independently of the checker)."""

    code: str
    severity: str
    present: Detector


@cache
def _normal_text(rel: str) -> str:
    return _normal(_text(rel))


def _snippet(snippet: str) -> Detector:
    return lambda rel, d: _normal(snippet) in _normal_text(rel)


def _spelled_both(a: str, b: str) -> Detector:
    """The game's text has the symbol ``a`` and the symbol ``b`` (case-sensitively)."""

    def present(rel: str, d: Description) -> bool:
        words = set(re.findall(r"[^\s()]+", _text(rel)))
        return a in words and b in words

    return present


def _keyword_arity(name: str, arity: int) -> Detector:
    return lambda rel, d: bool(_sentence_arities(d, name) - {arity})


def _keyword_as_function(name: str) -> Detector:
    return lambda rel, d: any(
        f.name.casefold() == name
        for c in d.clauses
        for s in _sentences(c)
        if isinstance(s, Func)
        for a in s.args
        for f in _functions(a)
    )


def _next_in_body(rel: str, d: Description) -> bool:
    return any(s.name.casefold() == "next" for c in d.clauses for s in _sentences(c, True))


KEYWORD_ARITY = {"role": 1, "init": 1, "true": 1, "next": 1, "base": 1, "input": 2}
KEYWORD_ARITY |= {"legal": 2, "does": 2, "goal": 2, "terminal": 0}


def _classify(reason: str) -> Covered | str:
    """What the checker reports for a reason of invalid-games.csv, or why it cannot."""
    zero_arity = r"Validator: (\(.*\)) is written as a zero-arity (rule|relation|function)"
    if m := re.search(zero_arity, reason):
        # ggp-base's validator only warns about these, and so do we
        return Covered(f"zero-arity-{m[2]}", "warning", _snippet(m[1]))
    if m := re.search(r"The negation \( not (\(.*\)) \) contains a literal", reason):
        return Covered("negated-non-sentence", "error", _snippet(f"(not {m[1]})"))
    if m := re.search(r"Unsafe rule (\(.*\)): Variable", reason):
        return Covered("unsafe-variable", "error", _snippet(m[1]))
    if m := re.search(r"The (sentence|function) with the name (\S+) appears with two", reason):
        kind, name = m[1], m[2].casefold()
        if kind == "sentence" and name in KEYWORD_ARITY:
            return Covered("keyword-arity", "error", _keyword_arity(name, KEYWORD_ARITY[name]))
        arities = _sentence_arities if kind == "sentence" else _function_arities
        # ggp-base's validator only warns about these, and so do we
        return Covered("arity-mismatch", "warning", lambda rel, d: len(arities(d, name)) > 1)
    if m := re.search(r"The keyword (\S+) is being used as a function", reason):
        return Covered("keyword-as-function", "error", _keyword_as_function(m[1].casefold()))
    if "The next relation should never be in the body of a rule" in reason:
        return Covered("next-in-body", "error", _next_in_body)
    if "The input relation should have arity 2" in reason:
        return Covered("keyword-arity", "error", _keyword_arity("input", 2))
    if m := re.search(r"Capitalization issue: (\S+) vs\. (\S+?),", reason):
        # one symbol to GDL (and to us): a warning, not an error
        return Covered("mixed-case", "warning", _spelled_both(m[1], m[2]))
    for pattern, why in UNCOVERED.items():
        if re.search(pattern, reason):
            return why
    raise AssertionError(f"reason not classified: {reason}")


#: Reasons of invalid-games.csv no static check can cover, and why.
UNCOVERED = {
    r"Got goal results of size": "a state with no or several goal values: needs search",
    r"Invalid goal definitions when": "goals undefined in some reachable states: needs search",
    r"Goal definitions don't account for": "goals undefined in some reachable states",
    r"When players reach 'e' simultaneously": "goals undefined in some reachable states",
}


def _invalid_rows() -> list[tuple[str, str]]:
    if not INVALID_CSV.is_file():
        return [("<no csv>", "")]
    rows = []
    for line in INVALID_CSV.read_text(encoding="utf-8").splitlines():
        if line.strip():
            path, reason = line.split(";", 1)
            rows.append((path, reason))
    return rows


ROWS = _invalid_rows()


def _matches(dresden_path: str) -> list[str]:
    """Our copies of the game a Dresden path names: same name, any case, any __suffix."""
    game = dresden_path.split("/")[1].casefold()
    return [
        rel
        for rel in FILES
        if rel.startswith("ggp-repository/") and Path(rel).stem.split("__")[0].casefold() == game
    ]


@cache
def _flawed() -> dict[str, set[tuple[str, str]]]:
    """Our files that still have a covered flaw of invalid-games.csv: (code, severity)."""
    out: dict[str, set[tuple[str, str]]] = {}
    for path, reason in ROWS:
        covered = _classify(reason)
        if not isinstance(covered, Covered):
            continue
        for rel in _matches(path):
            d = _parsed(rel)
            if isinstance(d, Description) and covered.present(rel, d):
                out.setdefault(rel, set()).add((covered.code, covered.severity))
    return out


# -- tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", FILES)
def test_verdict(rel: str) -> None:
    _require_shared()
    d = _parsed(rel)
    if rel in SYNTAX_ERRORS:
        assert isinstance(d, GdlSyntaxError)
        return
    assert isinstance(d, Description), f"{rel} does not parse: {d}"
    found = _findings(rel)
    errors = {f.code for f in found if f.is_error}
    if rel in EXPECTED_ERRORS:
        assert errors == EXPECTED_ERRORS[rel][0], EXPECTED_ERRORS[rel][1]
    elif rel in _flawed():
        flaw_errors = {code for code, severity in _flawed()[rel] if severity == "error"}
        assert errors == flaw_errors
    else:
        assert errors == set(), "\n".join(str(f) for f in found if f.is_error)


@pytest.mark.parametrize(("path", "reason"), ROWS, ids=[p for p, _ in ROWS])
def test_invalid_game_reason(path: str, reason: str) -> None:
    """Every reason is classified; where our copy still has the flaw, the checker finds it."""
    _require_shared()
    covered = _classify(reason)
    if not isinstance(covered, Covered):
        return  # listed in UNCOVERED, with why
    for rel in _matches(path):
        d = _parsed(rel)
        assert isinstance(d, Description)
        if covered.present(rel, d):
            got = {(f.code, f.severity) for f in _findings(rel)}
            assert (covered.code, covered.severity) in got, f"{rel}: {reason}"


def test_flaws_of_listed_games_are_found_in_these_copies() -> None:
    """The copies that still have a listed flaw (most were fixed before being copied): if
    this changes, the corpus or the detectors did."""
    _require_shared()
    assert sorted(_flawed()) == [
        "ggp-repository/blockerSerial.kif",
        "ggp-repository/blocksWorldSerial.kif",
        "ggp-repository/ruleDepthQuadratic__removed.kif",
        "ggp-repository/wargame01.kif",
        "ggp-repository/wargame02.kif",
    ]


def test_the_table_names_existing_files() -> None:
    _require_shared()
    assert set(EXPECTED_ERRORS) <= set(FILES)
    assert set(FILES) >= SYNTAX_ERRORS


@pytest.mark.parametrize("name", GROUND_STRATIFIED)
def test_ground_stratified_negation_is_a_warning(name: str) -> None:
    _require_shared()
    rel = f"ggp-repository/{name}.kif"
    assert _played(rel)
    found = _findings(rel)
    assert "negation-cycle" in {f.code for f in found if not f.is_error}
    assert not [f for f in found if f.is_error]


def test_no_played_game_is_rejected_for_its_negation() -> None:
    _require_shared()
    rejected = [
        rel
        for rel in FILES
        if rel not in SYNTAX_ERRORS
        and _played(rel)
        and any(f.code == "unstratified-negation" for f in _findings(rel))
    ]
    assert rejected == []


def test_games_spelling_a_symbol_in_several_cases_are_warned_about() -> None:
    """The corpus games that spell one symbol in several cases: among them, those on which
    the case-sensitive reference engine reads other symbols than GDL does."""
    _require_shared()
    from test_reference import CASE_SENSITIVE

    warned = {
        rel
        for rel in FILES
        if isinstance(_parsed(rel), Description)
        and any(f.code == "mixed-case" for f in _findings(rel))
    }
    assert warned == {
        "ggp-repository/alexChess.kif",
        "ggp-repository/wargame01.kif",
        "ggp-repository/wargame02.kif",
        "ggp-repository/wargame03.kif",
        "ggp-repository/wargame03__v1.kif",
    }
    assert CASE_SENSITIVE.issubset(warned)


#: Every literal of a real game that the lints say can never hold, each read by hand: a
#: relation no rule defines (speedChess's coords, a test's squee; test_case_3a's open2,
#: since only (open2), another relation, is defined: ggp-base's prover plays it so), and
#: a move no legal rule gives (the only legal draw has two rows). Files without roles are
#: programs whose undefined relations are input: not reported.
NEVER_HOLDS = {
    ("conformance/ggp-base/test_case_3a.kif", "undefined-relation", 1),
    ("conformance/ggp-base/test_case_3c.kif", "undefined-relation", 1),
    ("conformance/ggp-base/test_case_5b.kif", "never-holds", 1),
    ("ggp-repository/speedChess.kif", "undefined-relation", 1),
}


def test_lints_of_literals_that_never_hold_find_only_real_flaws() -> None:
    """On the real games, the never-holds and undefined-relation lints report only these
    (read by hand), and the unused-relation lint reports dead helpers in a stable number
    of files: if this changes, the corpus or a lint did."""
    _require_shared()
    found: dict[tuple[str, str], int] = {}
    unused: set[str] = set()
    for rel in FILES:
        if rel in SYNTAX_ERRORS:
            continue
        for f in _findings(rel):
            assert not (f.is_error and f.code in ("never-holds", "undefined-relation"))
            if f.code in ("never-holds", "undefined-relation"):
                found[rel, f.code] = found.get((rel, f.code), 0) + 1
            elif f.code == "unused-relation":
                assert not f.is_error
                unused.add(rel)
    assert {(rel, code, n) for (rel, code), n in found.items()} == NEVER_HOLDS
    assert len(unused) == 63
    assert "conformance/ggp-base/test_case_3a.kif" in unused  # (open2): no rule uses it
    assert "ggp-repository/checkers.kif" in unused  # adjacent: defined, never used
