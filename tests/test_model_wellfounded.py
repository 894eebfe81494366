"""gdl2pl model on programs whose negation is not stratified: the three-valued
well-founded model (true, undefined, false), and when it is two-valued."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.analysis.model import relations
from gdl2pl.analysis.wellfounded import well_founded_model
from gdl2pl.cli import main
from gdl2pl.kif import parse_kif
from gdl2pl.pipeline import compile_game

GAMES = Path(__file__).resolve().parent / "games" / "analysis"
WIN = "(<= (win ?x) (move ?x ?y) (not (win ?y)))\n"


@pytest.fixture(autouse=True)
def prolog() -> None:
    require_prolog()


def written(folder: Path, name: str, text: str) -> str:
    """The path of a new file ``name`` in ``folder`` holding ``text``."""
    path = folder / name
    path.write_text(text)
    return str(path)


def model_json(capsys, *argv: str) -> dict:
    assert main(["model", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_chain_is_two_valued(capsys) -> None:
    # a -> b -> c: c has no move (lost), so b is won and a is lost
    m = model_json(capsys, str(GAMES / "win_chain.kif"))
    assert m["semantics"] == "well-founded" and m["two_valued"] is True
    assert m["true"]["win"] == ["(win b)"]
    assert m["undefined"] == {"move": [], "win": []}


def test_cycle_is_undefined(capsys) -> None:
    m = model_json(capsys, str(GAMES / "win_cycle.kif"))
    assert m["two_valued"] is False
    assert m["true"]["win"] == []
    assert m["undefined"]["win"] == ["(win a)", "(win b)"]


def test_mixed(capsys) -> None:
    # a <-> b undefined; c <-> d with d -> e: e lost, d won, c lost
    m = model_json(capsys, str(GAMES / "win_mixed.kif"))
    assert m["true"]["win"] == ["(win d)"]
    assert m["undefined"]["win"] == ["(win a)", "(win b)"]
    assert len(m["true"]["move"]) == 5


def test_text_output(capsys) -> None:
    assert main(["model", str(GAMES / "win_mixed.kif")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("% negation not stratified: the well-founded model")
    assert lines[1] == "% it is three-valued: 2 atoms undefined, marked so"
    at = lines.index("% win/1: 1 atom true, 2 undefined")
    assert lines[at + 1 :] == ["(win d)", "(win a)  % undefined", "(win b)  % undefined"]


def test_two_valued_statement(capsys) -> None:
    assert main(["model", str(GAMES / "win_chain.kif")]) == 0
    out = capsys.readouterr().out
    assert "% it is two-valued (no atom is undefined): the program's one stable model" in out
    assert "undefined" not in out.replace("no atom is undefined", "")


def test_stratified_output_unchanged(capsys) -> None:
    # a stratified program keeps the minimal-model output: no well-founded header
    assert main(["model", str(GAMES / "open_program.kif")]) == 0
    out = capsys.readouterr().out
    assert not out.startswith("% negation") and "undefined" not in out


def test_infix_answers(capsys, tmp_path) -> None:
    program = written(tmp_path, "win.gdl", "move(a,b)\nmove(b,a)\nwin(X) :- move(X,Y) & ~win(Y)\n")
    assert main(["model", program]) == 0
    out = capsys.readouterr().out
    assert "win(a)  % undefined" in out and "move(a,b)" in out
    m = model_json(capsys, program, "--answer-syntax", "kif")
    assert m["undefined"]["win"] == ["(win a)", "(win b)"]


def test_input_model_and_no_state_machine(capsys, tmp_path) -> None:
    program = written(tmp_path, "win.kif", WIN)
    facts = written(tmp_path, "moves.kif", "(move a b) (move b c)\n")
    m = model_json(capsys, program, "--input", facts)
    assert m["true"] == {"win": ["(win b)"]} and m["undefined"] == {"win": []}
    assert main(["model", program, "--state", "((cell a))"]) == 2
    assert "not stratified" in capsys.readouterr().err


def test_unsafe_still_refused(capsys, tmp_path) -> None:
    program = written(
        tmp_path, "bad.kif", "(move a b)\n(<= (win ?x) (move ?x ?y) (not (win ?z)))\n"
    )
    assert main(["model", program]) == 2
    err = capsys.readouterr().err
    assert "bad.kif:2:" in err and "unsafe" in err


def test_infinite_program_is_bounded(capsys, tmp_path) -> None:
    program = written(
        tmp_path,
        "nat.kif",
        "(nat z)\n(<= (nat (s ?x)) (nat ?x) (not (odd ?x)))\n"
        "(<= (odd ?x) (nat ?x) (not (odd ?x)))\n",
    )
    assert main(["model", program]) == 2
    assert "too large to compute" in capsys.readouterr().err


def test_names_of_builtins_are_only_names(capsys, tmp_path) -> None:
    # relations named like Prolog builtins are data: nothing runs, the model is computed
    program = written(
        tmp_path,
        "builtins.kif",
        "(halt a b) (halt b a) (halt b c)\n"
        "(<= (shell ?x) (halt ?x ?y) (not (shell ?y)))\n"
        "(<= (tnot ?x) (halt ?x ?y) (not (tnot ?y)))\n",
    )
    m = model_json(capsys, program)
    assert m["true"]["shell"] == ["(shell b)"] and m["undefined"]["shell"] == []
    assert m["true"]["tnot"] == ["(tnot b)"] and m["two_valued"] is True


def _win_model(edges: list[tuple[int, int]]) -> tuple[set[str], set[str]]:
    text = "".join(f"(move n{a} n{b})\n" for a, b in edges) + WIN
    d = compile_game(parse_kif(text), translate=False).normalized
    wf = well_founded_model(d, list(relations(d)))
    return set(wf.true[("win", 1)]), set(wf.undefined[("win", 1)])


def _game_values(edges: list[tuple[int, int]]) -> tuple[set[str], set[str]]:
    """Won and drawn positions by retrograde analysis: a position is won if a move
    leads to a lost one, lost if every move leads to a won one, else drawn."""
    nodes = {n for e in edges for n in e}
    succ = {n: {b for a, b in edges if a == n} for n in nodes}
    won: set[int] = set()
    lost: set[int] = set()
    changed = True
    while changed:
        changed = False
        for n in nodes - won - lost:
            if succ[n] & lost:
                won.add(n)
                changed = True
            elif succ[n] <= won:
                lost.add(n)
                changed = True
    drawn = nodes - won - lost
    return {f"(win n{n})" for n in won}, {f"(win n{n})" for n in drawn if succ[n]}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12))
@example([(0, 1), (0, 3), (0, 4), (1, 0), (2, 1), (4, 4)])  # tnot/1 once made (win n2) undefined
@example([(0, 0), (0, 4), (0, 2), (3, 1), (4, 4), (0, 1), (1, 0)])
def test_win_is_the_game_value(edges: list[tuple[int, int]]) -> None:
    """The law behind the course's example: in the well-founded model of win/move, win
    is true exactly at won positions, undefined exactly at drawn ones."""
    assert _win_model(edges) == _game_values(edges)


@pytest.mark.parametrize("name", ["ticTacToe.kif", "buttons.kif"])
def test_stratified_programs_well_founded_model_is_their_minimal_model(capsys, name) -> None:
    """For a stratified program the well-founded model is two-valued and is the
    minimal (stratified) model that ``model`` prints."""
    path = Path(__file__).resolve().parents[1] / "gdl2pl" / "examples" / name
    minimal = model_json(capsys, str(path))
    d = compile_game(parse_kif(path.read_text(encoding="utf-8")), translate=False).normalized
    wf = well_founded_model(d, list(relations(d)))
    assert wf.two_valued
    assert {name: atoms for (name, _), atoms in wf.true.items()} == minimal


def mutual_negation(constants: int, arity: int = 4) -> str:
    """Two relations of ``arity`` over ``constants`` constants, each the other's
    negation: ``constants ** arity`` undefined atoms each (80 constants: 41 million)."""
    vs = " ".join(f"?a{i}" for i in range(arity))
    ns = " ".join(f"(n ?a{i})" for i in range(arity))
    facts = " ".join(f"(n c{i})" for i in range(constants))
    return f"{facts}\n(<= (p {vs}) {ns} (not (q {vs})))\n(<= (q {vs}) {ns} (not (p {vs})))\n"


def test_a_model_past_its_memory_is_refused_and_its_memory_is_reused() -> None:
    from gdl2pl.analysis.model import ModelError
    from gdl2pl.bridge.swipl import allocated_megabytes

    d = compile_game(parse_kif(mutual_negation(80)), translate=False).normalized
    before = allocated_megabytes()
    for _ in range(2):  # the second finds the first's memory freed, not held
        with pytest.raises(ModelError, match="needs more than 100 MB"):
            well_founded_model(d, relations(d), megabytes=100)
        assert allocated_megabytes() < before + 60
    small = compile_game(parse_kif(mutual_negation(3, 2)), translate=False).normalized
    m = well_founded_model(small, relations(small), megabytes=100)  # still answers
    assert len(m.undefined[("p", 2)]) == 9 and not m.true[("p", 2)]


def test_the_cli_refuses_a_model_too_large_instead_of_aborting(tmp_path) -> None:
    # 80 constants and two mutually negated rules of arity 4: SWI aborted the process
    # with "Could not allocate memory" (SIGABRT) under a 6 GB limit
    import resource
    import subprocess
    import sys

    program = tmp_path / "mutual.kif"
    program.write_text(mutual_negation(80))
    cap = 3 * 2**30

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-P", "-m", "gdl2pl.cli", "model", str(program)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the model is too large to compute" in done.stderr
    assert "Could not allocate" not in done.stderr
