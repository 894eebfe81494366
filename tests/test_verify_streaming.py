"""``gdl2pl verify`` against engines that misbehave as processes: children that escape the
engine's session, output too large to keep, a log line before the records (issue 32
items 5 and 6, issue 36 item 9). Records are judged as they arrive and the engine's
time is on the clock."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.verify import engine as engine_module
from gdl2pl.verify.engine import run_engine
from gdl2pl.verify.job import Job
from gdl2pl.verify.job import run_verify
from gdl2pl.verify.report import details
from gdl2pl.verify.report import read_results
from gdl2pl.verify.report import summary_table

TTT = str(EXAMPLES / "ticTacToe.kif")

#: A fake engine's beginning: gdl2pl's own records for the matches on stdin, in ``records``.
HONEST = (
    "import json, subprocess, sys\n"
    "out = subprocess.run([sys.executable, '-P', '-m', 'gdl2pl.cli', 'replay', sys.argv[1]],\n"
    "    input=sys.stdin.read(), capture_output=True, text=True).stdout\n"
    "records = [json.loads(line) for line in out.splitlines()]\n"
)


def engine_command(tmp_path: Path, body: str) -> str:
    """The command of a fake engine that runs ``HONEST`` then ``body``."""
    script = tmp_path / "engine.py"
    script.write_text(HONEST + body, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{game}}"


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(x for x in status.splitlines() if x.startswith("State:"))
    return state.split()[1] not in ("Z", "X")


def ends(pid: int, seconds: float = 5.0) -> bool:
    """Whether ``pid`` is dead within ``seconds`` (a killed process may take a moment to
    tear down)."""
    until = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > until:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture()
def escaped(tmp_path: Path) -> Iterator[Path]:
    """The file where an engine writes the number of the process it leaves behind; that
    process is killed after the test whatever happened."""
    pidfile = tmp_path / "escaped.pid"
    yield pidfile
    if pidfile.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


# -- item 5: a child that escapes the engine's session ------------------------------------

ESCAPING = """#!/bin/sh
setsid sleep 300 &
echo $! > "$1"
sleep 0.3  # the child is in its own session now
cat > /dev/null
echo '{{"a": 1}}'
{after}
"""


def escaping_engine(tmp_path: Path, after: str = "") -> list[str]:
    script = tmp_path / "escaping.sh"
    script.write_text(ESCAPING.format(after=after), encoding="utf-8")
    script.chmod(0o755)
    return [str(script), str(tmp_path / "escaped.pid")]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_child_that_escaped_the_session_is_killed_when_the_engine_exits(
    tmp_path: Path, escaped: Path
) -> None:
    """``setsid sleep 300 &`` holds the engine's output open after the engine exits: it
    is found by the pipe it holds and killed, and the run ends at once, complete."""
    start = time.monotonic()
    run = run_engine(escaping_engine(tmp_path), [[["a"]]], timeout=20)
    assert time.monotonic() - start < 10
    assert run.problem is None and run.records == [{"a": 1}]
    assert ends(int(escaped.read_text()))


def test_reading_stops_on_the_clock_whatever_holds_the_output(
    tmp_path: Path, escaped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the escaped child cannot be found (no ``/proc``, another user's process),
    the run still ends at its timeout, as a timeout: it never waits for the end of the
    output."""
    monkeypatch.setattr(engine_module, "_left_behind", lambda sid, pipes: [])
    start = time.monotonic()
    run = run_engine(escaping_engine(tmp_path), [[["a"]]], timeout=3)
    took = time.monotonic() - start
    assert 3 <= took < 8, took
    assert run.timed_out and "within 3 s" in (run.problem or "")
    assert run.records == [{"a": 1}]  # what it printed before is kept


def test_a_verify_timeout_ends_on_the_clock_with_an_escaped_child(
    tmp_path: Path, escaped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduction of issue 32 item 5 through ``run_verify``: an engine that leaves
    ``setsid sleep 300 &`` behind and hangs gets ``timeout`` after its 5 s, and the
    child it left is killed."""
    require_prolog()
    script = tmp_path / "hang.sh"
    script.write_text(
        f"#!/bin/sh\nsetsid sleep 300 &\necho $! > {shlex.quote(str(escaped))}\nsleep 600\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    text = Path(TTT).read_text(encoding="utf-8")
    start = time.monotonic()
    r = run_verify(Job(TTT, text, engine=f"{script} {{game}}", matches=1, timeout=5))
    took = time.monotonic() - start
    assert r["verdict"] == "timeout" and "within 5 s" in r["error"]
    assert took < 5 + 30, took  # loading the game and playing its match, then 5 s
    if Path("/proc/self/fd").is_dir():
        assert ends(int(escaped.read_text()))


# -- item 6: output too large to keep --------------------------------------------------------

#: Each record padded with 80,000 short strings (0.9 MB of JSON, 5 MB once parsed):
#: compare ignores fields it does not know, so the records still agree.
PADDED = "for r in records:\n    r['pad'] = ['abcdefg'] * 80_000\n    print(json.dumps(r))\n"


@pytest.mark.parametrize("keep_going", [False, True])
def test_large_records_are_judged_as_they_arrive(tmp_path: Path, keep_going: bool) -> None:
    """An engine that prints about 1 MB per record: gdl2pl holds one record at a time,
    not the whole output parsed (which, kept, cost 14 times the output). Peak Python
    memory while verifying stays under a bound a handful of records would break."""
    require_prolog()
    text = Path(TTT).read_text(encoding="utf-8")
    job = Job(TTT, text, engine=engine_command(tmp_path, PADDED), matches=3, keep_going=keep_going)
    tracemalloc.start()
    try:
        r = run_verify(job)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r["verdict"] == "agree", r["error"]
    assert r["steps_compared"] >= 15  # 15 records and more: 75 MB and more parsed
    assert peak < 40 << 20, f"{peak / 2**20:.0f} MiB at the peak"


def test_the_first_divergence_stops_the_engine(tmp_path: Path) -> None:
    """Without ``--keep-going`` nothing after the first divergence is needed: the engine
    is stopped there instead of waited for."""
    require_prolog()
    body = (
        "records[1]['terminal'] = not records[1]['terminal']\n"
        "for r in records[:3]:\n    print(json.dumps(r), flush=True)\n"
        "import time\ntime.sleep(600)\n"
    )
    text = Path(TTT).read_text(encoding="utf-8")
    start = time.monotonic()
    r = run_verify(Job(TTT, text, engine=engine_command(tmp_path, body), matches=1, timeout=60))
    assert time.monotonic() - start < 40
    assert r["verdict"] == "diverge" and r["error"] is None
    assert r["first_divergence"]["step"] == 1 and r["steps_compared"] == 2


# -- issue 36 item 9: a log line before the records --------------------------------------------

RECORDS = "for r in records:\n    print(json.dumps(r))\n"
LOGGING = "print('loading game ...')\n" + RECORDS


def test_a_log_line_on_stdout_is_a_protocol_fault_with_its_text(tmp_path: Path) -> None:
    require_prolog()
    text = Path(TTT).read_text(encoding="utf-8")
    r = run_verify(Job(TTT, text, engine=engine_command(tmp_path, LOGGING), matches=1))
    assert r["verdict"] == "engine_error"
    assert "protocol fault: line 1" in r["error"] and "'loading game ...'" in r["error"]
    assert "stderr" in r["error"]  # where logs belong


def test_keep_going_skips_a_log_line_and_compares_every_step(tmp_path: Path) -> None:
    """Under ``--keep-going`` the line is reported and skipped: every step is compared
    (here they agree), and the report has no count of diverging steps when none did."""
    require_prolog()
    text = Path(TTT).read_text(encoding="utf-8")
    engine = engine_command(tmp_path, LOGGING)
    r = run_verify(Job(TTT, text, engine=engine, matches=2, keep_going=True))
    honest = run_verify(Job(TTT, text, engine=engine_command(tmp_path, RECORDS), matches=2))
    assert honest["verdict"] == "agree"
    assert r["verdict"] == "engine_error" and "1 protocol fault" in r["error"]
    assert r["steps_compared"] == honest["steps_compared"] > 0
    assert r["diverging_steps"] == 0 and r["differences_by_kind"] == {}
    assert r["protocol_faults"] == [
        "protocol fault: line 1 of its output is not JSON "
        "(Expecting value: line 1 column 1 (char 0)): 'loading game ...'"
    ]
    report = details(r)
    assert "steps diverge" not in report
    assert "'loading game ...' (skipped)" in report
    assert "engine_error" in summary_table([r])


def test_keep_going_goes_on_past_a_log_line_to_the_divergences(tmp_path: Path) -> None:
    require_prolog()
    body = "records[2]['terminal'] = True\n" + LOGGING
    text = Path(TTT).read_text(encoding="utf-8")
    r = run_verify(
        Job(TTT, text, engine=engine_command(tmp_path, body), matches=1, keep_going=True)
    )
    assert r["verdict"] == "diverge"
    assert r["diverging_steps"] == 1 and r["differences_by_kind"] == {"terminal": 1}
    assert len(r["protocol_faults"]) == 1
    assert "1 steps diverge, with differences in: terminal 1" in details(r)


def test_saved_results_name_steps_and_differences(tmp_path: Path) -> None:
    """``--resume`` reads the two counts under their names and checks each."""
    out = tmp_path / "results.jsonl"
    good = (
        '{"game":"g.kif","verdict":"diverge","diverging_steps":2,"differences_by_kind":{"state":3}}'
    )
    out.write_text(good + "\n", encoding="utf-8")
    assert read_results(out)["g.kif"]["diverging_steps"] == 2
    out.write_text(good.replace("2", '"2"', 1) + "\n{}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="diverging_steps is not a count"):
        read_results(out)


# -- laws of the reader ------------------------------------------------------------------------

#: Prints the bytes of argv[1] (a file) in pieces of the sizes in argv[2:], flushing each.
CHUNKED = (
    "import sys\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "sizes = [int(x) for x in sys.argv[2:]] or [len(data) or 1]\n"
    "i = k = 0\n"
    "while i < len(data):\n"
    "    n = sizes[k % len(sizes)]; k += 1\n"
    "    sys.stdout.buffer.write(data[i : i + n]); sys.stdout.buffer.flush(); i += n\n"
)

line_kinds = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "step"]), st.integers(0, 9), max_size=3).map(
        lambda d: json.dumps(d)
    ),
    st.text(alphabet='loading game.[]{}"xyz 0123456789', min_size=1, max_size=30),
)


@settings(max_examples=15, deadline=None)
@given(
    lines=st.lists(line_kinds, max_size=12),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=5),
)
def test_skipping_faults_keeps_exactly_the_records_in_order(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], sizes: list[int]
) -> None:
    """Law: with ``skip_faults``, the records are the lines that are JSON objects, in
    order, and the faults are the other non-blank lines, however the output is cut into
    pieces on its way."""
    folder = tmp_path_factory.mktemp("chunked")
    out = folder / "out.txt"
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    program = folder / "chunked.py"
    program.write_text(CHUNKED, encoding="utf-8")
    argv = [sys.executable, str(program), str(out), *map(str, sizes)]
    run = run_engine(argv, [[["a"]] * 20], timeout=30, skip_faults=True)
    expected, faults = [], 0
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            expected.append(value)
        elif line.strip():
            faults += 1
    assert run.problem is None, run.problem
    assert run.records == expected and run.received == len(expected)
    assert len(run.faults) == faults and all(f.startswith("protocol fault") for f in run.faults)


def test_keep_going_keeps_a_bounded_report_of_huge_diverging_states(tmp_path: Path) -> None:
    """Every step of the engine's adds 500 fluents of no game: each step diverges, and
    each listed divergence keeps the first facts of each side with a note saying how many
    there were, so the report's memory does not grow with the engine's states."""
    require_prolog()
    from gdl2pl.verify.keep_going import MAX_FACTS

    body = (
        "for r in records:\n"
        "    r['state'] = sorted(r['state'] + [f'(junk {i})' for i in range(500)])\n"
        "    print(json.dumps(r))\n"
    )
    text = Path(TTT).read_text(encoding="utf-8")
    job = Job(TTT, text, engine=engine_command(tmp_path, body), matches=1, keep_going=True)
    r = run_verify(job)
    assert r["verdict"] == "diverge", r["error"]
    assert r["diverging_steps"] == r["steps_compared"] == len(r["divergences"]) > 3
    for d in r["divergences"]:
        for x in d["differences"]:
            assert len(x["only_engine"]) <= MAX_FACTS and len(x["only_gdl2pl"]) <= MAX_FACTS
    assert any("500 only the engine has" in n for n in r["notes"])
