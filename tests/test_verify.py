"""``gdl2pl verify`` and ``gdl2pl trace-all``: record comparison, fake engines that agree,
differ or misbehave, recorded traces, parallel workers, --out/--resume."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import REPO
from conftest import shared_dir
from hypothesis import given
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.cli import main
from gdl2pl.verify.engine import engine_argv
from gdl2pl.verify.engine import game_file_name
from gdl2pl.verify.engine import parse_output
from gdl2pl.verify.games import GameRef
from gdl2pl.verify.games import find_games
from gdl2pl.verify.games import output_name
from gdl2pl.verify.games import trace_file
from gdl2pl.verify.job import Job
from gdl2pl.verify.outfiles import append_text
from gdl2pl.verify.outfiles import write_file
from gdl2pl.verify.records import canonical
from gdl2pl.verify.records import compare
from gdl2pl.verify.report import repro_name

ENGINES = REPO / "tests" / "engines"
TTT = str(EXAMPLES / "ticTacToe.kif")
BUTTONS = str(EXAMPLES / "buttons.kif")
SELF = f"{shlex.quote(sys.executable)} -P -m gdl2pl.cli replay {{game}}"


def fake(name: str, extra: str = "") -> str:
    """The command of a fake engine in tests/engines."""
    script = shlex.quote(str(ENGINES / f"{name}.py"))
    return f"{shlex.quote(sys.executable)} {script} {{game}} {extra}".strip()


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    status = main(["verify", *argv, "--json"])
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines() if line.strip()]


def without_time(results: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in results]


# -- pure parts --------------------------------------------------------------------------


def rec(**kw: object) -> dict:
    base = {
        "match": 0,
        "step": 0,
        "state": ["(cell 1 1 b)", "(control x)"],
        "legal": {"x": ["(mark 1 1)"], "o": ["noop"]},
        "terminal": False,
        "goals": {"x": 50, "o": None},
    }
    base.update(kw)
    return base


def test_canonical_ignores_case_and_white_space() -> None:
    assert canonical("( CELL  1\t1 X )") == "(cell 1 1 x)"
    assert canonical("(f (g a) b)") == canonical("(F( G A ) B)".replace("F(", "F ("))


def test_compare_equal_records_up_to_spelling() -> None:
    theirs = rec(
        state=["(cell 1 1 B)", "( CONTROL X )"],
        legal={"X": ["(MARK 1 1)"], "O": ["NOOP"]},
    )
    assert compare(rec(), theirs) == []


def test_a_list_out_of_order_is_a_divergence_of_its_own() -> None:
    """The format lists facts sorted (by their lower-case text): an engine that does not
    is named, with the first two facts out of order."""
    diffs = compare(rec(), rec(state=["(control x)", "(CELL 1 1 b)"]))
    assert [(d.field, d.kind, d.only_engine) for d in diffs] == [
        ("state", "unsorted", ["(control x)", "(CELL 1 1 b)"])
    ]
    theirs = rec(legal={"x": ["(mark 1 2)", "(mark 1 1)"], "o": ["noop"]})
    diffs = compare(rec(legal={"x": ["(mark 1 1)", "(mark 1 2)"], "o": ["noop"]}), theirs)
    assert [(d.field, d.role, d.kind) for d in diffs] == [("legal", "x", "unsorted")]


def test_compare_reports_each_field_and_side() -> None:
    theirs = rec(
        state=["(cell 1 1 b)", "(ghost)"],
        legal={"x": [], "o": ["noop"]},
        terminal=True,
        goals={"x": 50, "o": 0},
    )
    diffs = {(d.field, d.role): (d.only_gdl2pl, d.only_engine) for d in compare(rec(), theirs)}
    assert diffs == {
        ("state", None): (["(control x)"], ["(ghost)"]),
        ("legal", "x"): (["(mark 1 1)"], []),
        ("terminal", None): (["false"], ["true"]),
        ("goals", "o"): ([], ["0"]),
    }


def test_compare_error_records_and_malformed_ones() -> None:
    from gdl2pl.verify.records import MalformedRecord

    assert compare({"error": "x"}, {"error": "y"}) == []
    assert [d.field for d in compare(rec(), {"error": "boom"})] == ["error"]
    with pytest.raises(MalformedRecord):
        compare(rec(), rec(terminal="no"))
    with pytest.raises(MalformedRecord):
        compare(rec(), rec(state="(cell 1 1 b)"))


def test_engine_command_template() -> None:
    assert engine_argv("eng --game {game} -q", "/t/ab.kif") == ["eng", "--game", "/t/ab.kif", "-q"]
    assert engine_argv("'my engine' run", "g.kif") == ["my engine", "run", "g.kif"]
    assert engine_argv("eng --in={game}", "g.kif") == ["eng", "--in=g.kif"]


def test_parse_output_stops_at_garbage() -> None:
    records, problem = parse_output('{"a": 1}\n\n[1]\n{"b": 2}\n')
    assert records == [{"a": 1}] and problem is not None and "line 3" in problem


def test_find_games_and_their_traces(tmp_path: Path) -> None:
    (tmp_path / "games" / "sub").mkdir(parents=True)
    (tmp_path / "games" / "sub" / "g.kif").write_text("(role r)")
    (tmp_path / "games" / "a.kif").write_text("(role r)")
    (tmp_path / "games" / "notes.txt").write_text("")
    (tmp_path / "traces" / "sub").mkdir(parents=True)
    (tmp_path / "traces" / "sub" / "g.jsonl").write_text("")
    games = find_games([str(tmp_path / "games"), str(tmp_path / "games" / "a.kif")])
    assert [g.rel for g in games] == ["a.kif", "sub/g.kif"]
    assert trace_file(games[1], tmp_path / "traces") == tmp_path / "traces" / "sub" / "g.jsonl"
    assert trace_file(games[0], tmp_path / "traces") is None
    one = GameRef(str(tmp_path / "games" / "sub" / "g.kif"), "g.kif")  # given as a file
    assert trace_file(one, tmp_path / "traces") == tmp_path / "traces" / "sub" / "g.jsonl"
    assert repro_name("sub/g.kif") == "sub%2Fg.kif.moves.jsonl"
    with pytest.raises(FileNotFoundError):
        find_games([str(tmp_path / "missing")])


def test_rules_whose_head_matches_a_fact() -> None:
    """The fallback when a fact cannot be explained: candidate rules with bindings."""
    require_prolog()
    from gdl2pl.bridge import StateMachine
    from gdl2pl.verify.why import matching_rules

    with StateMachine.from_file(TTT) as sm:
        found = list(matching_rules(sm, sm.term("(next (cell 1 1 x))")))
        assert any("ticTacToe.kif:30" in r and "?f=x" in r for r in found), found
        assert list(matching_rules(sm, sm.term("(next (ghost 1))"))) == []


def test_saved_results_survive_a_torn_last_line(tmp_path: Path) -> None:
    from gdl2pl.verify.report import append_result
    from gdl2pl.verify.report import read_results

    out = tmp_path / "results.jsonl"
    append_result(out, {"game": "a.kif", "verdict": "agree"})
    with out.open("a") as f:
        f.write('{"game": "b.kif", "verd')  # the run was killed while writing
    assert read_results(out) == {"a.kif": {"game": "a.kif", "verdict": "agree"}}


def test_a_game_gdl2pl_cannot_read_is_reported_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    broken = tmp_path / "broken.kif"
    broken.write_text("(role x)\n(init (p)\n")
    status, results = run_json(
        capsys, str(broken), TTT, "--engine", SELF, "--workers", "1", "--repro-dir", str(tmp_path)
    )
    assert status == 1
    assert [r["verdict"] for r in results] == ["gdl2pl_error", "agree"]
    assert "broken.kif:" in results[0]["error"]


def crash_once(job: Job) -> dict:
    """A task whose worker process dies the first time it meets this job."""
    marker = Path(job.path)
    if not marker.exists():
        marker.write_text("")
        os._exit(1)
    return {"game": job.path, "verdict": "agree"}


def always_crash(job: Job) -> dict:
    os._exit(1)


def test_a_crashed_local_worker_is_retried(tmp_path: Path) -> None:
    from gdl2pl.verify.runner import run_local

    jobs = [Job(path=str(tmp_path / "one"), text=""), Job(path=str(tmp_path / "two"), text="")]
    seen: list[int] = []
    results = run_local(crash_once, jobs, 2, lambda i, r: seen.append(i))
    assert results == [{"game": j.path, "verdict": "agree"} for j in jobs]
    assert sorted(seen) == [0, 1]
    [r] = run_local(always_crash, [Job(path="g.kif", text="")], 2, lambda i, r: None)
    assert r["verdict"] == "gdl2pl_error" and "died on every try" in r["error"]


# -- against engines ---------------------------------------------------------------------


def test_self_check_agrees(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    require_prolog()
    status, results = run_json(
        capsys, TTT, BUTTONS, "--engine", SELF, "--workers", "1", "--matches", "3",
        "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 0
    assert [r["game"] for r in results] == [TTT, BUTTONS]
    assert all(r["verdict"] == "agree" and r["matches"] == 3 for r in results)
    assert all(r["steps_compared"] > 3 for r in results)


def test_a_differing_fluent_is_the_first_divergence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    repro = tmp_path / "repro"
    status, [r] = run_json(
        capsys, TTT, "--engine", fake("differ"), "--workers", "1", "--seed", "7",
        "--repro-dir", str(repro),
    )  # fmt: skip
    assert status == 1 and r["verdict"] == "diverge"
    d = r["first_divergence"]
    assert (d["match"], d["step"], len(d["moves"])) == (0, 2, 2)
    assert r["steps_compared"] == 3  # steps 0 and 1 agree despite the upper case and spaces
    [diff] = d["differences"]
    assert diff["field"] == "state" and diff["role"] is None
    assert diff["only_engine"] == ["(GHOST 1)"]  # a symbol the game lacks: the engine's case
    assert len(diff["only_gdl2pl"]) == 1
    # gdl2pl says which rules derive its fluent (next, from the game file, with a line)
    assert "next" in diff["why"] and "ticTacToe.kif:" in diff["why"]
    assert "(next (GHOST 1)) does not hold" in diff["why"]
    assert "(does oplayer (mark" in diff["why"] or "(does xplayer (mark" in diff["why"]
    # the reproduction replays to exactly the diverging step
    assert Path(r["reproduction"]) == repro / "ticTacToe.kif.moves.jsonl"
    replayed = subprocess.run(
        [sys.executable, "-P", "-m", "gdl2pl.cli", "replay", TTT],
        input=Path(r["reproduction"]).read_text(),
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    last = json.loads(replayed[-1])
    assert last["step"] == 2 and diff["only_gdl2pl"][0] in last["state"]


def test_summary_table_and_details_on_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    status = main(
        ["verify", TTT, "--engine", fake("differ"), "--workers", "1", "--repro-dir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert "diverge" in out and "match 0 step 2: state" in out
    assert "only engine: ['(GHOST 1)']" in out and "reproduce: gdl2pl replay" in out


@pytest.mark.parametrize(
    ("engine", "verdict", "reason"),
    [
        ("garbage", "engine_error", "not JSON"),
        ("crash_halfway", "engine_error", "segmentation fault in move generator"),
        ("short", "engine_error", "records"),
        ("short middle", "engine_error", "out of step: expected match 0 step 1"),
        ("missing", "engine_error", "does not start"),
    ],
)
def test_bad_engines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, verdict: str, reason: str
) -> None:
    require_prolog()
    name, *extra = engine.split()
    command = "/nonexistent/engine {game}" if engine == "missing" else fake(name, *extra)
    status, [r] = run_json(
        capsys, TTT, "--engine", command, "--workers", "1", "--repro-dir", str(tmp_path)
    )
    assert status == 1
    assert r["verdict"] == verdict and reason in r["error"]
    assert r["first_divergence"] is None
    if engine == "crash_halfway":  # what it did answer was compared, and agreed
        assert r["steps_compared"] > 0 and "exited with status 3" in r["error"]


def test_a_hanging_engine_times_out_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    out = tmp_path / "results.jsonl"
    status, results = run_json(
        capsys, BUTTONS, TTT, "--engine", fake("hang"), "--timeout", "3", "--workers", "1",
        "--out", str(out), "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 1
    assert [r["verdict"] for r in results] == ["timeout", "agree"]
    assert "within 3 s" in results[0]["error"]
    saved = [json.loads(line) for line in out.read_text().splitlines()]
    assert without_time(saved) == without_time(results)


def test_a_timeout_stops_the_processes_the_engine_started(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An engine behind a wrapper script: the real engine, a grandchild, is stopped too."""
    require_prolog()
    pidfile = tmp_path / "engine.pid"
    inner = fake("hang", f"all {shlex.quote(str(pidfile))}")
    wrapper = f"sh -c {shlex.quote(inner.replace('{game}', '$0') + '; true')} {{game}}"
    status, [r] = run_json(
        capsys, TTT, "--engine", wrapper, "--timeout", "5", "--workers", "1",
        "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 1 and r["verdict"] == "timeout"
    assert engine_ends(int(pidfile.read_text()))


def engine_ends(pid: int, polls: int = 100) -> bool:
    """Whether process ``pid`` (the hang engine) is gone or dead within ``polls`` looks at
    /proc, 0.05 s apart: a killed process may still be tearing down for a moment after it
    closed its pipes."""
    proc = Path(f"/proc/{pid}")
    for _ in range(polls):
        try:
            if b"hang.py" not in (proc / "cmdline").read_bytes():
                return True  # gone, and the number reused by another process
            state = next(
                x for x in (proc / "status").read_text().splitlines() if x.startswith("State:")
            )
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state.split()[1] in ("Z", "X"):
            return True  # dead, not yet reaped by its new parent
        time.sleep(0.05)
    return False


def test_resume_skips_games_already_saved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    out = tmp_path / "results.jsonl"
    args = ["--workers", "1", "--out", str(out), "--repro-dir", str(tmp_path)]
    status, first = run_json(capsys, TTT, "--engine", SELF, *args)
    assert status == 0 and first[0]["verdict"] == "agree"
    # the saved game is not run again (this engine cannot even start); the new one is
    status, second = run_json(
        capsys, TTT, BUTTONS, "--engine", "/nonexistent/engine {game}", "--resume", *args
    )
    assert status == 1
    assert [r["verdict"] for r in second] == ["agree", "engine_error"]
    assert second[0] == first[0]
    assert [json.loads(line)["game"] for line in out.read_text().splitlines()] == [TTT, BUTTONS]


def test_two_workers_give_the_same_verdicts_in_the_same_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    games = [BUTTONS, TTT, str(EXAMPLES / "matchingPennies.kif")]
    args = ["--engine", fake("differ"), "--matches", "1", "--repro-dir", str(tmp_path)]
    _, one = run_json(capsys, *games, *args, "--workers", "1")
    _, two = run_json(capsys, *games, *args, "--workers", "2")
    assert [r["game"] for r in two] == games
    assert without_time(two) == without_time(one)
    assert {r["verdict"] for r in one} == {"diverge"}


def test_ray_flag_before_the_games_leaves_them_games() -> None:
    import argparse

    from gdl2pl.verify.commands import add_subcommands
    from gdl2pl.verify.main import _ray_address_is_a_game

    parser = argparse.ArgumentParser()
    add_subcommands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["verify", "--engine", "e", "--ray", TTT, BUTTONS])
    _ray_address_is_a_game(args)
    assert (args.ray, args.games) == ("", [TTT, BUTTONS])
    args = parser.parse_args(["verify", "--engine", "e", "--ray", "head:6379", TTT])
    _ray_address_is_a_game(args)
    assert (args.ray, args.games) == ("head:6379", [TTT])


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["verify", str(tmp_path / "none.kif"), "--engine", "x"]) == 2
    assert main(["verify", TTT, "--engine", "x", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "no such game file" in err and "--resume needs --out" in err


# -- against recorded traces and the shared corpus ----------------------------------------


def test_against_the_reference_traces(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    require_prolog()
    shared = shared_dir()
    games = shared / "games"
    ttt = games / "ggp-repository" / "ticTacToe.kif"
    f3 = games / "conformance" / "ggp-base" / "test_case_3f.kif"
    unplayed = tmp_path / "own.kif"
    unplayed.write_text(Path(TTT).read_text())
    status, results = run_json(
        capsys, str(ttt), str(f3), str(unplayed), "--against", str(shared / "reference"),
        "--workers", "1", "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 1
    assert [r["verdict"] for r in results] == ["agree", "diverge", "skipped"]
    assert results[0]["steps_compared"] > 20
    # the documented deviation of test_case_3f (tests/test_reference.py): the goals
    d = results[1]["first_divergence"]
    assert (d["match"], d["step"]) == (0, 0)
    assert {x["field"] for x in d["differences"]} == {"goals"}
    assert all("goal" in x["why"] for x in d["differences"])


SHARED_SAMPLE = [
    "ggp-repository/ticTacToe.kif",
    "ggp-repository/connectFour.kif",
    "ggp-repository/buttons.kif",
    "ggp-repository/hanoi.kif",
]


def test_self_check_on_shared_games_with_two_workers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    games = [str(shared_dir() / "games" / g) for g in SHARED_SAMPLE]
    status, results = run_json(
        capsys, *games, "--engine", SELF, "--workers", "2", "--repro-dir", str(tmp_path)
    )
    assert [r["verdict"] for r in results] == ["agree"] * len(games), results
    assert status == 0


def test_trace_all_writes_what_trace_prints_and_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    folder = tmp_path / "games"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "ttt.kif").write_text(Path(TTT).read_text())
    (folder / "pennies.kif").write_text((EXAMPLES / "matchingPennies.kif").read_text())
    traces = tmp_path / "traces"
    argv = [str(folder), "--out-dir", str(traces), "--matches", "2", "--seed", "5"]
    assert main(["trace-all", *argv, "--workers", "1"]) == 0
    assert "2 games traced" in capsys.readouterr().out
    written = (traces / "sub%2Fttt.kif.jsonl").read_text()
    assert main(["trace", str(folder / "sub" / "ttt.kif"), "--seed", "5", "-n", "2"]) == 0
    traced = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    digest = hashlib.sha256(Path(TTT).read_text().encode()).hexdigest()
    assert [json.loads(line) for line in written.splitlines()] == [
        {**r, "game_sha256": digest} for r in traced
    ]
    assert main(["trace-all", *argv, "--workers", "1", "--resume"]) == 0
    assert "2 already there" in capsys.readouterr().out
    status, results = run_json(
        capsys, str(folder), "--against", str(traces), "--workers", "1",
        "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 0 and [r["verdict"] for r in results] == ["agree", "agree"]
    # traces whose matches are not numbered from 0 (a subset of a bigger recording)
    renumbered = [json.loads(line) for line in written.splitlines()]
    for r in renumbered:
        r["match"] = {0: 5, 1: 7}[r["match"]]
    (traces / "sub%2Fttt.kif.jsonl").write_text("".join(json.dumps(r) + "\n" for r in renumbered))
    status, results = run_json(
        capsys, str(folder), "--against", str(traces), "--workers", "1",
        "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 0 and [r["verdict"] for r in results] == ["agree", "agree"]


def test_engine_command_refuses_unsafe_paths() -> None:
    for name in ["$(touch X).kif", "a`touch Y`b.kif", "a\nb.kif", "a b.kif", "x;rm -rf y"]:
        with pytest.raises(ValueError):
            engine_argv("sh -c 'eng {game}'", name)


@pytest.mark.parametrize(
    ("name", "seen"),
    [("$(touch X).kif", "game.kif"), ("a`b`.gdl", "game.gdl"), ("x.k$(y)", "game"), ("n", "game")],
)
def test_engine_sees_only_a_fixed_game_name(name: str, seen: str) -> None:
    assert game_file_name(name) == seen


def test_a_file_name_cannot_run_a_command_through_a_shell_template(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 23 item 1: ``sh -c "engine {game}"`` on files named with ``$(...)``, backticks
    and a newline runs nothing of the names; the engine gets GDL2PL_GAME too."""
    require_prolog()
    games = tmp_path / "games"
    games.mkdir()
    text = Path(BUTTONS).read_text(encoding="utf-8")
    names = ["$(touch PWNED1).kif", "a`touch PWNED2`b.kif", "x\ntouch PWNED3\n.kif"]
    for name in names:
        (games / name).write_text(text, encoding="utf-8")
    inner = f"{shlex.quote(sys.executable)} -P -m gdl2pl.cli replay {{game}}"
    script = inner + ' && test -f "$GDL2PL_GAME"'
    command = f"sh -c {shlex.quote(script)}"
    out = tmp_path / "cwd"
    out.mkdir()
    old = Path.cwd()
    os.chdir(out)
    try:
        status, results = run_json(
            capsys, *[str(games / n) for n in names], "--engine", command, "--workers", "1",
            "--matches", "1", "--repro-dir", str(tmp_path / "repro"),
        )  # fmt: skip
    finally:
        os.chdir(old)
    assert status == 0 and [r["verdict"] for r in results] == ["agree"] * 3, results
    assert not list(out.iterdir()) and not list(games.glob("PWNED*"))


def test_a_newline_in_a_game_name_stays_on_its_line_of_the_summary() -> None:
    from gdl2pl.verify.report import details
    from gdl2pl.verify.report import summary_table

    r = {"game": "a\nFAKE agree\x1b[2J.kif", "verdict": "engine_error", "error": "x"}
    table = summary_table([r])
    assert len(table.splitlines()) == 3 and "\x1b" not in table
    assert "\\n" in table and details(r).splitlines()[0].startswith("a\\nFAKE")


# -- an engine that prints without end (issue 23 item 11) --------------------------------


@pytest.mark.parametrize(
    ("program", "problem"),
    [
        ("while True: print('{\"a\": 1}')", "more than 16 records"),
        ("import sys\nwhile True: sys.stdout.write('x' * 65536)", "longer than 1,048,576 bytes"),
        ("print('[' * 100000)", "nested 100000 deep"),
    ],
    ids=["endless records", "endless line", "deep nesting"],
)
def test_an_engine_that_prints_without_end_is_stopped(program: str, problem: str) -> None:
    from gdl2pl.verify.engine import run_engine

    matches = [[["a"], ["b"]]]  # 3 states: at most 2 * 3 + 10 records
    run = run_engine([sys.executable, "-P", "-c", program], matches, timeout=60)
    assert run.problem is not None and problem in run.problem
    assert not run.timed_out
    assert len(run.records) <= 16


# -- --resume trusts nothing it reads (issue 23 item 12) ----------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"game": "g.kif"}', "the verdict None is none of"),
        ('{"game": "g.kif", "verdict": "agree", "first_divergence": 3}', "not an object"),
        ('{"game": "g.kif", "verdict": "agree", "matches": "2"}', "matches is not a count"),
        ('[1, 2]', "not a JSON object"),
        ("{not json", "not a saved result"),
    ],
)
def test_resume_names_a_bad_saved_line(tmp_path: Path, line: str, problem: str) -> None:
    from gdl2pl.verify.report import read_results

    out = tmp_path / "results.jsonl"
    good = '{"game": "a.kif", "verdict": "agree", "matches": 1, "steps_compared": 3}'
    out.write_text(f"{good}\n{line}\n{good}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{out}:2: not a saved result") as info:
        read_results(out)
    assert problem in str(info.value)


def test_resume_ignores_only_a_torn_last_line(tmp_path: Path) -> None:
    from gdl2pl.verify.report import read_results

    out = tmp_path / "results.jsonl"
    out.write_text('{"game": "a.kif", "verdict": "agree"}\n{"game": "b.ki', encoding="utf-8")
    assert list(read_results(out)) == ["a.kif"]


# -- output files: never written through a link ------------------------------------------


def test_output_files_replace_links_and_never_write_through_them(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.jsonl.tmp").symlink_to(victim)
    (out / "y.jsonl").symlink_to(victim)
    write_file(out / "x.jsonl", "x\n")
    write_file(out / "y.jsonl", "y\n")
    assert victim.read_text() == "keep me\n"
    assert (out / "x.jsonl").read_text() == "x\n" and not (out / "y.jsonl").is_symlink()
    assert (out / "y.jsonl").read_text() == "y\n"
    assert sorted(p.name for p in out.iterdir()) == ["x.jsonl", "x.jsonl.tmp", "y.jsonl"]
    (out / "z.jsonl").symlink_to(victim)
    with pytest.raises(OSError):
        append_text(out / "z.jsonl", "z\n")
    assert victim.read_text() == "keep me\n"
    append_text(out / "new.jsonl", "1\n")
    append_text(out / "new.jsonl", "2\n")
    assert (out / "new.jsonl").read_text() == "1\n2\n"


# Alike on purpose: the tests of the verify command begin alike (Prolog needed, files
# written in tmp_path), each readable on its own (``duplicates`` pairs their openings).
def test_trace_all_verify_out_and_repro_files_leave_a_linked_file_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    games = tmp_path / "games"
    games.mkdir()
    (games / "x.kif").write_text(Path(BUTTONS).read_text())
    traces = tmp_path / "out"
    traces.mkdir()
    for name in ("x.jsonl.tmp", "x.kif.jsonl.tmp"):  # the old fixed name, and the new one's
        (traces / name).symlink_to(victim)
    argv = ["trace-all", str(games), "--out-dir", str(traces), "--workers", "1", "--matches", "1"]
    assert main(argv) == 0
    assert (traces / "x.kif.jsonl").read_text().count("\n") > 1
    results = tmp_path / "results.jsonl"
    Path(f"{results}.tmp").symlink_to(victim)
    repro = tmp_path / "repro"
    repro.mkdir()
    for name in ("x.kif.moves.jsonl", "x.moves.jsonl"):  # whichever name it picks
        (repro / name).symlink_to(victim)
    status = main(["verify", str(games), "--engine", fake("differ"), "--workers", "1",
                   "--out", str(results), "--repro-dir", str(repro)])  # fmt: skip
    assert status == 1 and "diverge" in capsys.readouterr().out
    assert victim.read_text() == "keep me\n"
    assert json.loads(results.read_text())["verdict"] == "diverge"
    assert any(p.is_file() and not p.is_symlink() for p in repro.iterdir())
    results.unlink()
    results.symlink_to(victim)
    status = main(["verify", str(games), "--engine", fake("differ"), "--workers", "1",
                   "--out", str(results), "--resume", "--repro-dir", str(repro)])  # fmt: skip
    assert status == 2 and "symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "keep me\n"


# -- output names: one per game, and a trace only for its own game ------------------------


def test_output_names_are_one_to_one() -> None:
    rels = ["x.kif", "x.gdl", "a/b.kif", "a__b.kif", "a%2Fb.kif", "a%b.kif", "sub/g.kif"]
    names = [output_name(r) for r in rels]
    assert len(set(names)) == len(rels) and all("/" not in n for n in names)
    assert output_name("a/b.kif") == "a%2Fb.kif" and output_name("a%2Fb.kif") == "a%252Fb.kif"
    assert len({repro_name(r) for r in rels}) == len(rels)


@given(st.lists(st.text(st.sampled_from("ab/%_.2F"), min_size=1, max_size=8), unique=True))
def test_output_names_are_one_to_one_for_any_paths(rels: list[str]) -> None:
    assert len({output_name(r) for r in rels}) == len(rels)


def test_colliding_games_get_their_own_traces_and_a_foreign_trace_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    games = tmp_path / "games"
    (games / "a").mkdir(parents=True)
    texts = {
        "x.kif": Path(BUTTONS).read_text(),
        "x.gdl": Path(BUTTONS).read_text() + "\n; another copy\n",
        "a/b.kif": (EXAMPLES / "matchingPennies.kif").read_text(),
        "a__b.kif": Path(BUTTONS).read_text(),
    }
    for rel, text in texts.items():
        (games / rel).write_text(text)
    traces = tmp_path / "traces"
    argv = [str(games), "--out-dir", str(traces), "--workers", "1", "--matches", "1"]
    assert main(["trace-all", *argv]) == 0
    assert "4 games traced" in capsys.readouterr().out
    assert sorted(p.name for p in traces.iterdir()) == sorted(
        output_name(r) + ".jsonl" for r in texts
    )
    against = [str(games), "--against", str(traces), "--workers", "1",
               "--repro-dir", str(tmp_path / "repro")]  # fmt: skip
    status, results = run_json(capsys, *against)
    assert status == 0 and [r["verdict"] for r in results] == ["agree"] * 4
    # a trace of another game under this game's name: refused, with both hashes
    (traces / "x.gdl.jsonl").write_text((traces / "a%2Fb.kif.jsonl").read_text())
    status, results = run_json(capsys, *against)
    verdicts = {Path(r["game"]).name: r for r in results}
    assert status == 1 and verdicts["x.gdl"]["verdict"] == "engine_error"
    assert "recorded from another game" in verdicts["x.gdl"]["error"]
    assert [r["verdict"] for n, r in verdicts.items() if n != "x.gdl"] == ["agree"] * 3


def test_two_folders_with_the_same_game_name_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.kif").write_text(Path(BUTTONS).read_text())
    argv = [str(tmp_path / "one"), str(tmp_path / "two"), "--workers", "1"]
    assert main(["trace-all", *argv, "--out-dir", str(tmp_path / "out")]) == 2
    assert "would be one" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_name_too_long_for_one_file_fails_that_game_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    games = tmp_path / "games"
    deep = games / ("d" * 100) / ("e" * 100) / ("f" * 100)
    deep.mkdir(parents=True)
    (deep / "g.kif").write_text(Path(BUTTONS).read_text())
    (games / "short.kif").write_text(Path(BUTTONS).read_text())
    traces = tmp_path / "traces"
    argv = [str(games), "--out-dir", str(traces), "--workers", "1", "--matches", "1"]
    assert main(["trace-all", *argv]) == 1
    captured = capsys.readouterr()
    assert "1 games traced" in captured.out and "1 failed" in captured.out
    assert "g.kif: cannot write" in captured.err and "too long" in captured.err
    assert sorted(p.name for p in traces.iterdir()) == ["short.kif.jsonl"]
    status = main(["verify", str(games), "--engine", fake("differ"), "--workers", "1",
                   "--repro-dir", str(tmp_path / "repro")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1 and out.count("diverge") >= 2
    assert "cannot write the reproduction file" in out


def test_an_engine_command_without_game_is_warned_about_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    without = SELF.replace(" {game}", "")
    argv = ["verify", TTT, BUTTONS, "--engine", without, "--workers", "1"]
    assert main([*argv, "--repro-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.count("the engine command has no {game}: the game's path is appended") == 1


# -- reports in the game's spelling; duplicates are divergences (issue 26 items 1, 2) ----


def test_a_fact_listed_twice_is_a_divergence_of_its_own() -> None:
    theirs = rec(state=["(cell 1 1 b)", "(CONTROL X)", "(control x)"])
    diffs = compare(rec(), theirs)
    assert [(d.field, d.kind, d.only_engine) for d in diffs] == [
        ("state", "duplicate", ["(control x)"])
    ]
    legal = compare(rec(), rec(legal={"x": ["(mark 1 1)", "(mark 1 1)"], "o": ["noop"]}))
    assert [(d.field, d.role, d.kind) for d in legal] == [("legal", "x", "duplicate")]


def test_differences_keep_each_sides_spelling() -> None:
    mine = rec(state=["(cellHolds 1 1 white)", "(control x)"])
    theirs = rec(state=["(CELLHOLDS 2 2 WHITE)", "(CONTROL X)"])
    (d,) = compare(mine, theirs)
    assert (d.only_gdl2pl, d.only_engine) == (["(cellHolds 1 1 white)"], ["(CELLHOLDS 2 2 WHITE)"])


def test_the_report_speaks_the_games_spelling(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    game = tmp_path / "camel.kif"
    game.write_text(
        "(role white) (init (cellHolds 1 white)) (<= (legal white go) (true (cellHolds 1 white)))"
        " (<= (next (cellHolds 2 white)) (does white go)) (<= terminal (true (cellHolds 2 white)))"
        " (<= (goal white 100) (true (cellHolds 2 white)))\n",
        encoding="utf-8",
    )
    engine = tmp_path / "shout.py"
    engine.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    for step in range(len(json.loads(line)['moves']) + 1):\n"
        "        print(json.dumps({'state': ['(CELLHOLDS 3 WHITE)'], 'legal': {'WHITE': ['GO']},"
        " 'terminal': False, 'goals': {'WHITE': None}}))\n",
        encoding="utf-8",
    )
    status, results = run_json(
        capsys, str(game), "--engine", f"{shlex.quote(sys.executable)} {engine} {{game}}",
        "--workers", "1", "--repro-dir", str(tmp_path),
    )  # fmt: skip
    assert status == 1
    differences = results[0]["first_divergence"]["differences"]
    (diff,) = [x for x in differences if x["field"] == "state"]
    assert diff["only_gdl2pl"] == ["(cellHolds 1 white)"]
    assert diff["only_engine"] == ["(cellHolds 3 white)"]  # the engine's fact, game spelling


# -- --keep-going ---------------------------------------------------------------------------


def test_keep_going_finds_each_bug_once_where_it_happens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The ``bugs`` engine loses a cell at step 3 (and goes on from there), drops a legal
    move at step 5 and swaps the goals at the end: three steps diverge, and the spoiled
    states after step 3 are not reported again."""
    require_prolog()
    argv = [TTT, "--engine", fake("bugs"), "--workers", "1", "--matches", "1", "--seed", "2"]
    argv += ["--repro-dir", str(tmp_path)]
    status, [first_only] = run_json(capsys, *argv)
    assert status == 1 and first_only["first_divergence"]["step"] == 3
    assert "divergences" not in first_only
    status, [r] = run_json(capsys, *argv, "--keep-going")
    assert status == 1 and r["verdict"] == "diverge"
    assert [d["step"] for d in r["divergences"]] == [3, 5, 7]
    assert r["diverging_steps"] == 3
    # step 3: the lost cell, and the move on it the engine no longer allows
    assert r["differences_by_kind"] == {"goals": 2, "legal": 2, "state": 1}
    assert r["first_divergence"] == r["divergences"][0]
    assert (first_only["steps_compared"], r["steps_compared"]) == (4, 8)  # steps 0-3, 0-7
    lost, _ = r["divergences"][0]["differences"]
    assert lost["field"] == "state" and lost["only_engine"] == []
    legal = r["divergences"][1]["differences"]
    assert [(x["field"], x["role"]) for x in legal] == [("legal", "oplayer")]
    goals = r["divergences"][2]["differences"]
    assert sorted((x["role"], x["only_gdl2pl"], x["only_engine"]) for x in goals) == [
        ("oplayer", ["0"], ["100"]),
        ("xplayer", ["100"], ["0"]),
    ]


def test_why_in_json_is_also_a_proof_tree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    _, [r] = run_json(
        capsys, TTT, "--engine", fake("bugs"), "--workers", "1", "--matches", "1",
        "--seed", "2", "--repro-dir", str(tmp_path),
    )  # fmt: skip
    lost = r["first_divergence"]["differences"][0]
    (detail,) = lost["why_details"]
    fact = lost["only_gdl2pl"][0]
    assert detail["fact"] == fact and detail["atom"] == f"(next {fact})"
    assert detail["holds"] is True and detail["asked"].startswith("from the state of step 2")
    tree = detail["tree"]
    assert tree["text"] == f"(next {fact})" and tree["kind"] == "rule"
    rule = tree["rule"]
    assert rule["file"] == TTT and isinstance(rule["line"], int)
    assert rule["source"].startswith("(<= (next (cell ?m ?n b))")
    assert rule["prolog_text"].startswith("next(")
    assert rule["bindings"]["?m"] in "123"  # bound as the rule writes the variable
    assert [c["holds"] for c in tree["children"]] == [True] * len(tree["children"])
    assert lost["why"].splitlines()[0].startswith("from the state of step 2")


def test_keep_going_with_an_engine_that_agrees_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_prolog()
    argv = [TTT, "--engine", SELF, "--workers", "1", "--matches", "2"]
    _, [plain] = run_json(capsys, *argv)
    _, [going] = run_json(capsys, *argv, "--keep-going")
    extra = {"divergences": [], "differences_by_kind": {}, "diverging_steps": 0}
    assert without_time([going]) == without_time([{**plain, **extra}])


def test_keep_going_names_malformed_and_unsorted_records_and_goes_on(tmp_path: Path) -> None:
    require_prolog()
    from gdl2pl.verify.job import Job
    from gdl2pl.verify.job import run_verify

    engine = tmp_path / "sloppy.py"
    engine.write_text(
        "import json, subprocess, sys\n"
        "out = subprocess.run([sys.executable, '-P', '-m', 'gdl2pl.cli', 'replay', sys.argv[1]],\n"
        "    input=sys.stdin.read(), capture_output=True, text=True).stdout\n"
        "for line in out.splitlines():\n"
        "    r = json.loads(line)\n"
        "    if r['step'] == 1: r['terminal'] = 'no'\n"
        "    if r['step'] == 2: r['state'].reverse()\n"
        "    print(json.dumps(r))\n",
        encoding="utf-8",
    )
    text = Path(TTT).read_text(encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {engine} {{game}}"
    r = run_verify(Job(TTT, text, engine=command, matches=1, keep_going=True))
    assert r["verdict"] == "diverge"
    assert r["differences_by_kind"] == {"record (malformed)": 1, "state (unsorted)": 1}
    assert [d["step"] for d in r["divergences"]] == [1, 2]
    plain = run_verify(Job(TTT, text, engine=command, matches=1))
    assert plain["verdict"] == "engine_error" and "malformed record" in plain["error"]


@pytest.mark.parametrize(
    "state",
    [
        "['(' * 100_000]",  # a fluent nested past any parser's depth
        "['(f ' * 2_000 + 'x' + ')' * 2_000]",  # deep but well formed
        "[f'(junk {i})' for i in range(20_000)]",  # many fluents of no game
        "['(cell 1 1 x)\\n(forged line)', ':- halt.', 'halt']",  # lines and Prolog text
    ],
)
def test_keep_going_takes_hostile_engine_states_as_data(tmp_path: Path, state: str) -> None:
    """After a divergence gdl2pl judges from the engine's state: a state that is not made
    of the game's terms (too deep, too many, Prolog text, a newline) is a divergence and a
    note, never a crash, a run Prolog goal or a forged report line."""
    require_prolog()
    from gdl2pl.verify.job import Job
    from gdl2pl.verify.job import run_verify
    from gdl2pl.verify.report import details

    engine = tmp_path / "hostile.py"
    engine.write_text(
        "import json, subprocess, sys\n"
        "out = subprocess.run([sys.executable, '-P', '-m', 'gdl2pl.cli', 'replay', sys.argv[1]],\n"
        "    input=sys.stdin.read(), capture_output=True, text=True).stdout\n"
        "for line in out.splitlines():\n"
        "    r = json.loads(line)\n"
        f"    if r['step'] == 1: r['state'] = {state}\n"
        "    print(json.dumps(r))\n",
        encoding="utf-8",
    )
    text = Path(TTT).read_text(encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {engine} {{game}}"
    r = run_verify(Job(TTT, text, engine=command, matches=1, keep_going=True))
    assert r["verdict"] == "diverge", r.get("error")
    assert r["divergences"][0]["step"] == 1
    assert any("judged from gdl2pl's" in n for n in r.get("notes", []))
    report = details(r)
    assert not any(line.startswith("(forged line)") for line in report.splitlines())
    assert len(report) < 2_000_000
