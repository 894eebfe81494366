"""The benchmark scripts (``benchmarks/``): the set they read, the medians and targets they
report, and the results document they write. Speed itself is never asserted here."""

from __future__ import annotations

import csv
import dataclasses
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import baseline
import run
from loops import Count
from reference import Reference
from reference import game_path
from reference import read_references
from report import rate

HANOI = Reference("hanoi", 100.0, 10.0, 10.0)
CHESS = Reference("chess", 10.0, 0.1, 100.0)


def row(ref: Reference, mode: str, states_per_s: float) -> run.Row:
    return run.Row(ref, mode, Count(states=int(states_per_s * 10), playouts=10, seconds=10.0))


def test_the_benchmark_set_is_read_from_the_anchors_table(shared: Path) -> None:
    refs = read_references(shared / "anchors" / "this-machine.md")
    assert len(refs) == 20
    assert len({r.game for r in refs}) == 20
    for r in refs:
        assert r.states_per_s > 0 and r.playouts_per_s > 0, r
        assert game_path(r.game, shared / "games" / "ggp-repository").is_file(), r.game


def test_median_rows_take_the_median_run_and_name_the_spread() -> None:
    rounds = [[row(HANOI, "a", v)] for v in (300.0, 100.0, 200.0)]
    [median] = run.median_rows(rounds)
    assert median.count is not None
    assert median.count.states_per_s == pytest.approx(200.0)
    assert median.ratio == pytest.approx(2.0)
    assert "median of 3 runs, 100.0 to 300.0 states/s" in median.count.note


def test_an_error_in_any_round_is_reported_instead_of_a_median() -> None:
    failed = run.Row(HANOI, "a", error="GameError: boom")
    [median] = run.median_rows([[row(HANOI, "a", 100.0)], [failed], [row(HANOI, "a", 300.0)]])
    assert median.count is None and median.error == "GameError: boom"


def test_summary_checks_the_median_and_the_lowest_ratio_against_the_targets() -> None:
    [(mode, median, lowest)] = [t for t in run.TARGETS if t[0] == "a"]
    low = 1.2 * (lowest or 1.0)  # above the lowest allowed
    high = 2 * median * 1.2 - low  # so that the median of the two is 1.2 x the target
    passing = [row(HANOI, mode, 100.0 * low), row(CHESS, mode, 10.0 * high)]
    [line] = run.summary(passing, [mode])
    assert f"median ratio {(low + high) / 2:.1f}x" in line and f"lowest {low:.2f}x (hanoi)" in line
    assert line.endswith("PASS")

    slow = 0.5 * (lowest or median / 4)  # one game far below the bound
    one_slow = [row(HANOI, mode, 100.0 * slow), row(CHESS, mode, 10.0 * 4 * median)]
    [line] = run.summary(one_slow, [mode])
    assert line.endswith("FAIL")


def test_the_results_document_keeps_the_hand_written_sections() -> None:
    previous = (
        "# Benchmark results\n\nold table\n\n"
        f"{run.HAND_WRITTEN}\n\n| change | effect |\n\n## Targets\n\nmet.\n"
    )
    text = run.results_document("new table\n", "python benchmarks/run.py --quick", previous)
    assert "old table" not in text
    assert text.index("new table") < text.index(run.HAND_WRITTEN)
    assert text.endswith(f"{run.HAND_WRITTEN}\n\n| change | effect |\n\n## Targets\n\nmet.\n")
    assert "Produced by `python benchmarks/run.py --quick`" in text

    fresh = run.results_document("new table\n", "python benchmarks/run.py")
    assert fresh.rstrip().endswith(
        "_To be filled in: each engine change and the ratios before and after it._"
    )


def test_a_short_run_writes_its_tables_and_results(shared: Path, tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(f"# old\n\n{run.HAND_WRITTEN}\n\nkept by hand\n", encoding="utf-8")
    argv = [
        "--games",
        "ticTacToe",
        "--seconds",
        "0.3",
        "--warmup",
        "0.05",
        "--repeats",
        "2",
        "--out",
        str(tmp_path / "out"),
        "--results",
        str(results),
    ]
    assert run.main(argv) == 0

    [md] = (tmp_path / "out").glob("run-*.md")
    [csv_path] = (tmp_path / "out").glob("run-*.csv")
    table = md.read_text(encoding="utf-8")
    for mode in ("a (in-Prolog playouts)", "b (Python step API)", "c (Python + node cache)"):
        assert f"| ticTacToe | {mode} |" in table
    assert "median of 2 runs" in table
    with csv_path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["mode"] for r in rows] == ["a", "b", "c"]
    for r in rows:
        assert r["error"] == "" and float(r["states_per_s"]) > 0, r
    text = results.read_text(encoding="utf-8")
    assert text.endswith(f"{run.HAND_WRITTEN}\n\nkept by hand\n")
    assert "--repeats 2" in text and "| ticTacToe |" in text


def test_a_run_with_a_process_per_game_reads_each_game_back(shared: Path, tmp_path: Path) -> None:
    argv = ["--games", "ticTacToe", "--engine", "both", "--modes", "a,b", "--seconds", "0.3"]
    argv += ["--warmup", "0.05", "--out", str(tmp_path / "out"), "--process-per-game"]
    assert run.main(argv) == 0
    [md] = (tmp_path / "out").glob("run-*.md")
    table = md.read_text(encoding="utf-8")
    assert "each game in a fresh Python process" in table
    for mode in ("a (in-Prolog playouts)", "b (Python step API)"):
        assert f"| ticTacToe | {mode} |" in table
        assert f"| ticTacToe | {mode}, compiled |" in table
    assert "| error |" not in table


def test_a_worker_process_that_fails_gives_error_rows(shared: Path) -> None:
    args = run.parse_args(["--games", "ticTacToe", "--modes", "a,b", "--engine", "both"])
    ref = args.refs[0]
    rows = run.run_game_in_process(ref, args, ["--games", "no-such-game"])
    assert [(r.engine, r.mode) for r in rows] == [
        ("prolog", "a"),
        ("prolog", "b"),
        ("compiled", "a"),
        ("compiled", "b"),
    ]
    assert all(r.count is None and "worker process failed" in r.error for r in rows)


def test_memory_over_loads_samples_every_load_and_judges_the_growth(capsys) -> None:
    import memory
    from conftest import EXAMPLES

    status = memory.main(["--game", str(EXAMPLES / "ticTacToe.kif"), "--loads", "3",
                          "--every", "1", "--threshold-mb", "100"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "| loads | RSS MB |" in out and "ticTacToe.kif, 3 loads" in out
    assert [line.split("|")[1].strip() for line in out.splitlines()
            if line.startswith("| ") and line[2].isdigit()] == ["0", "1", "2", "3"]
    assert "to the last (3): " in out and "PASS" in out


# --- --baseline-cmd: a reference engine measured in the same run ----------------------

FAKE_BASELINE = """\
import json, sys
game, warmup, seconds, log = sys.argv[1:5]
with open(log, "a", encoding="utf-8") as f:
    f.write(f"baseline {game} {warmup} {seconds}\\n")
print("JIT warming up")  # chatter before the JSON line is allowed
print(json.dumps({"states": %(states)s, "playouts": %(playouts)s, "seconds": 2.0}))
sys.exit(%(status)s)
"""


def fake_baseline(tmp_path: Path, states: int = 500, playouts: int = 50, status: int = 0) -> str:
    """A --baseline-cmd template running a script that logs its arguments and prints
    states/2 states/s (never a real engine)."""
    script = tmp_path / "fake_baseline.py"
    script.write_text(
        FAKE_BASELINE % {"states": states, "playouts": playouts, "status": status},
        encoding="utf-8",
    )
    log = tmp_path / "order.log"
    return f"{sys.executable} {script} {{game}} {{warmup}} {{seconds}} {log}"


def fake_run_game(log: Path, states_per_s: float):
    """run.run_game's stand-in: logs the game and returns one fixed count per mode."""

    def run_game(ref: Reference, args) -> list[run.Row]:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"game {ref.game}\n")
        count = Count(states=int(states_per_s), playouts=10, seconds=1.0)
        return [run.Row(ref, m, count=dataclasses.replace(count)) for m in args.modes]

    return run_game


def test_the_baseline_command_runs_before_each_game_in_every_round_and_is_the_ratios_base(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "order.log"
    monkeypatch.setattr(run, "run_game", fake_run_game(log, 1000.0))
    cmd = fake_baseline(tmp_path, states=500)  # 500 states in 2 s: 250 states/s
    argv = ["--games", "ticTacToe,connectFour", "--modes", "a,b", "--repeats", "2"]
    argv += ["--seconds", "3", "--warmup", "0.5", "--out", str(tmp_path / "out")]
    assert run.main([*argv, "--baseline-cmd", cmd]) == 0

    games = shared / "games" / "ggp-repository"
    tic, c4 = games / "ticTacToe.kif", games / "connectFour.kif"
    expected = [f"baseline {tic} 0.5 3", "game ticTacToe"]
    expected += [f"baseline {c4} 0.5 3", "game connectFour"]
    assert log.read_text(encoding="utf-8").splitlines() == expected * 2

    [md] = (tmp_path / "out").glob("run-*.md")
    table = md.read_text(encoding="utf-8")
    assert "| baseline states/s |" in table and "| ref states/s |" not in table
    assert "| ticTacToe | a (in-Prolog playouts) | 1,000 | 10.00 | 100.0 | 250.0 | 4.00x |" in table
    assert "baseline measured in this run before each game" in table
    assert f"`{cmd}` on each game right before the game's own runs" in table
    assert "4 measurements" in table and "The anchors table was not used" in table
    assert "median ratio 4.00x" in table
    [csv_path] = (tmp_path / "out").glob("run-*.csv")
    with csv_path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {(r["ref_states_per_s"], r["ref_playouts_per_s"], r["ratio"]) for r in rows} == {
        ("250.0", "25.0", "4.0")
    }


def test_without_a_baseline_command_the_anchors_table_is_the_baseline_and_says_so(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "order.log"
    monkeypatch.setattr(run, "run_game", fake_run_game(log, 1000.0))
    argv = ["--games", "ticTacToe", "--modes", "b", "--out", str(tmp_path / "out")]
    assert run.main(argv) == 0
    [md] = (tmp_path / "out").glob("run-*.md")
    table = md.read_text(encoding="utf-8")
    anchor = read_references(shared / "anchors" / "this-machine.md")[0]
    assert anchor.game == "ticTacToe"
    assert "| ref states/s |" in table and "baseline: the anchors table" in table
    assert f"| {rate(anchor.states_per_s)} | {1000.0 / anchor.states_per_s:.2f}x |" in table
    assert "this-machine.md); indicative only" in table


def test_a_failing_baseline_leaves_the_figures_without_a_ratio_and_fails_the_target(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "run_game", fake_run_game(tmp_path / "order.log", 1000.0))
    cmd = fake_baseline(tmp_path, status=3)
    argv = ["--games", "ticTacToe", "--modes", "a", "--out", str(tmp_path / "out")]
    assert run.main([*argv, "--baseline-cmd", cmd]) == 0
    [md] = (tmp_path / "out").glob("run-*.md")
    table = md.read_text(encoding="utf-8")
    assert "| ticTacToe | a (in-Prolog playouts) | 1,000 | 10.00 | 100.0 | error |  |" in table
    assert "baseline: baseline command exited 3 on ticTacToe.kif" in table
    assert "no measurement succeeded; 0 measurements" in table
    assert "- a (in-Prolog playouts, prolog engine): no baseline" in table


def test_a_process_per_game_run_measures_the_baseline_once_per_game_in_the_parent(
    shared: Path, tmp_path: Path
) -> None:
    cmd = fake_baseline(tmp_path, states=20)  # 10 states/s: any real engine is faster
    argv = ["--games", "ticTacToe", "--modes", "a", "--seconds", "0.3", "--warmup", "0.05"]
    argv += ["--out", str(tmp_path / "out"), "--process-per-game", "--baseline-cmd", cmd]
    assert run.main(argv) == 0
    [line] = (tmp_path / "order.log").read_text(encoding="utf-8").splitlines()
    assert line.startswith("baseline ") and line.endswith("ticTacToe.kif 0.05 0.3")
    [csv_path] = (tmp_path / "out").glob("run-*.csv")
    with csv_path.open(encoding="utf-8", newline="") as f:
        [row] = list(csv.DictReader(f))
    assert row["error"] == "" and row["ref_states_per_s"] == "10.0"
    assert float(row["ratio"]) == pytest.approx(float(row["states_per_s"]) / 10.0, rel=1e-2)


def test_the_median_over_rounds_is_taken_on_the_ratio_to_each_rounds_baseline() -> None:
    def measured_row(states_per_s: float, base: float) -> run.Row:
        return row(Reference("hanoi", base, 1.0, 10.0), "a", states_per_s)

    # ratios 2x, 1x, 4x: the median run is the first (100 states/s), not the median speed
    runs = [(100.0, 50.0), (300.0, 300.0), (200.0, 50.0)]
    rounds = [[measured_row(speed, base)] for speed, base in runs]
    [median] = run.median_rows(rounds)
    assert median.count is not None and median.count.states_per_s == pytest.approx(100.0)
    assert median.ratio == pytest.approx(2.0)
    assert "100.0 to 300.0 states/s" in median.count.note
    assert "baseline 50.00 to 300.0 states/s" in median.count.note


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("prover {seconds}", "has no {game} placeholder"),
        ("prover {game} {secs}", "unknown placeholder(s) {secs}"),
        ("prover {game} {}", "unknown placeholder(s) {}"),
        ("prover '{game}", "No closing quotation"),
        ("prover {game", "word '{game': expected '}' before end of string (literal braces"),
        ("", "empty"),
    ],
)
def test_a_bad_baseline_template_is_a_usage_error(
    template: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        run.parse_args(["--games", "ticTacToe", "--baseline-cmd", template])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_each_word_of_the_template_is_filled_in_and_stays_one_argument() -> None:
    game = Path("/games dir/a;b $(x).kif")
    words = baseline.command_line("perf --game={game} {warmup} x{seconds}", game, 1.0, 2.5)
    assert words == ["perf", "--game=/games dir/a;b $(x).kif", "1", "x2.5"]
    assert baseline.command_line("echo '{{\"a\": 1}}' {game}", Path("g.kif"), 0, 1) == [
        "echo",
        '{"a": 1}',
        "g.kif",
    ]


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ("", "printed nothing"),
        ('{"states": 1, "playouts": 1, "seconds": 1}\nbye\n', "last line is not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"playouts": 1, "seconds": 1}', "'states' must be a count, got None"),
        ('{"states": -1, "playouts": 1, "seconds": 1}', "'states' must be a count, got -1"),
        ('{"states": 1, "playouts": true, "seconds": 1}', "'playouts' must be a count"),
        ('{"states": 1.5, "playouts": 1, "seconds": 1}', "'states' must be a count"),
        ('{"states": 1, "playouts": 1, "seconds": 0}', "'seconds' must be > 0, got 0"),
        ('{"states": 1, "playouts": 1, "seconds": "2"}', "'seconds' must be > 0"),
    ],
)
def test_baseline_output_that_is_not_the_json_line_is_refused(stdout: str, message: str) -> None:
    with pytest.raises(baseline.BaselineError, match=re.escape(message)):
        baseline.parse_output(stdout)


def test_the_last_json_line_of_the_baseline_output_is_read() -> None:
    out = 'loading\n{"states": 7}\n{"states": 30, "playouts": 3, "seconds": 1.5, "x": 1}\n\n'
    assert baseline.parse_output(out) == (30, 3, 1.5)


def test_a_baseline_command_that_cannot_start_or_overruns_is_a_baseline_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(baseline.BaselineError, match="could not start"):
        baseline.measure(str(tmp_path / "no-such-program") + " {game}", Path("g.kif"), 0, 1)
    monkeypatch.setattr(baseline, "SLACK_SECONDS", 0.5)
    sleeper = f"{sys.executable} -P -c 'import time; time.sleep(60)' {{game}}"
    with pytest.raises(baseline.BaselineError, match=r"ran over 0\.6 s on g\.kif"):
        baseline.measure(sleeper, Path("g.kif"), 0, 0.1)


def test_the_batch_benchmark_writes_its_table_and_verdicts(shared: Path, tmp_path: Path) -> None:
    """``benchmarks/batch.py`` (issue 45) in a smoke run: a row per game with every
    loop's rate, the verdicts of the issue's targets named (whatever they are: speed is
    not asserted)."""
    from adapters_support import require_module

    require_module("pyspiel")
    require_module("pettingzoo")
    import batch

    out = tmp_path / "batch.md"
    argv = ["--quick", "--games", "ticTacToe", "--sizes", "1", "64", "--out", str(out)]
    assert batch.main(argv) == 0
    text = out.read_text(encoding="utf-8")
    header = "| game | playouts | batch 1 | batch 64 | native | native+obs | per-state | note |"
    assert header in text
    [row] = [line for line in text.splitlines() if line.startswith("| ticTacToe |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert all(float(c.replace(",", "")) > 0 for c in cells[1:7]), row
    assert "ticTacToe: batch 64 / playouts = " in text
    assert "ticTacToe: batch 64 / native = " in text


def test_the_proofs_benchmark_checks_each_proof_against_random_matches(
    shared: Path, tmp_path: Path
) -> None:
    """``benchmarks/proofs.py`` in a smoke run: each game in a process of its own, its
    proofs and the matches against them in a row of the section it writes."""
    import proofs

    results = tmp_path / "RESULTS.md"
    argv = ["--games-dir", str(shared / "games" / "ggp-repository"), "--games", "ticTacToe",
            "connectFour", "--matches", "2", "--results", str(results)]
    assert proofs.main(argv) == 0
    text = results.read_text(encoding="utf-8")
    assert text.lstrip().startswith(proofs.SECTION)
    assert "**0 violated** by a random match" in text
    [row] = [line for line in text.splitlines() if line.startswith("| connectFour |")]
    assert "| 48 (filling) |" in row and "| 100 (goal rules of one body) |" in row
