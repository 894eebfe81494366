"""GDL-II on both engines, in one run: CFR on Kuhn poker, a player's belief search, and a
turn of 2 x 400 x 400 joint moves.

    python benchmarks/gdl2_speed.py [--iterations 60] [--matches 20] [--seed 1]
                                    [--deadline 10] [--baseline-rev REV] [--results FILE]

1. **CFR+** (OpenSpiel's ``CFRPlusSolver``) for ``--iterations`` iterations on the GDL
   Kuhn poker (``gdl2pl/examples/kuhnPoker.kif``) through the imperfect-information
   adapter, on the reasoner and on the compiled engine (where ``sees`` is compiled
   into the network like ``next``), beside OpenSpiel's native ``kuhn_poker`` for
   scale; each with the exploitability of its average policy, so that speed is never
   bought with a wrong game.
2. **Belief search**: the GDL-II player's ``BeliefTracker`` follows every player's
   history along ``--matches`` random matches of Monty Hall and Kuhn poker (each turn
   but the last, which a player learns with ``stop``: the states consistent with the
   move played and the percepts seen, all of them expanded), on both engines; the
   table gives the turns taken in per second and the states held, which must be the
   same on both engines.
3. **A huge turn** (issue 48): the first turn of ``tests/games/gdl2/hidden_cell.kif``
   has 2 x 400 x 400 joint moves; the scout asked for a row hint and heard nothing
   (152,000 of its 160,000 joint moves agree) or yes (8,000 agree). Each way of taking
   it in runs in a process of its own, which reports its seconds, its CPU seconds and
   how far its resident memory grew above the loaded game's: every joint move expanded
   (with each child's legal moves) and then filtered, as the contract's default did
   before (the compiled engine had no other; not run on the reasoner, whose own path
   filtered in Prolog: see RESULTS.md for its figures before); ``consistent_successors``
   (percepts first, then the children of the joint moves that agree, nothing else);
   the first child in a random order (what a witness needs); a ``BeliefTracker`` update
   with ``--deadline`` seconds (what a player does: it gathers what its particles need).
   With ``--baseline-rev REV``, ``consistent_successors`` and the update are measured in
   the same run on the package of git revision REV too (laid out in a temporary folder
   and put first on ``PYTHONPATH``; the C extension is this tree's, so REV must have the
   same C files in ``gdl2pl/compiled/`` and this tree's layout, which dates from dd48eb7),
   and this tree's rows say how much less CPU they took.

The Markdown table is printed, and with ``--results`` replaces this benchmark's section
in that file (appended when absent).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from report import markdown_table
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

from gdl2pl.compiled import load_machine
from gdl2pl.ggp.belief_tracker import BeliefTracker
from gdl2pl.information import Turn

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "gdl2pl" / "examples"
SECTION = "## GDL-II on both engines (`benchmarks/gdl2_speed.py`)"
ENGINES = ("prolog", "compiled")
HIDDEN = REPO / "tests" / "games" / "gdl2" / "hidden_cell.kif"
#: The ways of taking the huge turn in, in the table's order, with what each is.
WAYS = {
    "expand": "every joint move expanded, then filtered",
    "successors": "consistent_successors",
    "witness": "first child, random order",
    "belief": "BeliefTracker update",
}
#: What the scout heard: nothing (152,000 joint moves agree) or yes (8,000).
HEARD = {"nothing": [], "yes": ["(same row)"]}


def cfr_rows(iterations: int) -> list[list[str]]:
    """CFR+ on Kuhn poker: seconds and exploitability per engine, and native."""
    import pyspiel
    from open_spiel.python.algorithms import cfr
    from open_spiel.python.algorithms import exploitability

    from gdl2pl.openspiel.imperfect import load_imperfect_game

    rows = []
    seconds: dict[str, float] = {}
    games: list[tuple[str, Any]] = [
        (engine, load_imperfect_game(EXAMPLES / "kuhnPoker.kif", engine=engine))
        for engine in ENGINES
    ]
    games.append(("OpenSpiel native kuhn_poker", pyspiel.load_game("kuhn_poker")))
    for name, game in games:
        if name in ENGINES:
            choice = game.tables.sm.engine_choice
            assert choice.engine == name, choice
        start = time.perf_counter()
        solver = cfr.CFRPlusSolver(game)
        for _ in range(iterations):
            solver.evaluate_and_update_policy()
        seconds[name] = time.perf_counter() - start
        exp = exploitability.exploitability(game, solver.average_policy())
        rows.append([name, f"{seconds[name]:.2f}", f"{exp:.5f}"])
    for row in rows:
        row.append(f"{seconds['prolog'] / seconds[row[0]]:.1f}x")
    return rows


def belief_rows(matches: int, seed: int) -> list[list[str]]:
    """The belief search along random matches, on each engine."""
    rows = []
    for game in ("montyHall.kif", "kuhnPoker.kif"):
        held: dict[str, list[int]] = {}
        for engine in ENGINES:
            with load_machine(EXAMPLES / game, engine) as sm:  # type: ignore[arg-type]
                assert sm.engine_choice.engine == engine, sm.engine_choice
                turns, sizes = 0, []
                rng = random.Random(seed)
                start = time.perf_counter()
                for _ in range(matches):
                    trackers = {
                        r: BeliefTracker(sm, r, random.Random(seed)) for r in sm.players
                    }
                    state = sm.initial_state
                    while not sm.is_terminal(state):
                        joint = sm.random_joint_move(state, rng)
                        after = sm.next_state(state, joint)
                        # a player takes in the turns of a game that goes on (the last
                        # one comes with stop, and a belief keeps no terminal state)
                        for role, tracker in trackers.items() if not sm.is_terminal(after) else ():
                            i = sm.role_index(role)
                            seen = sm.percepts(state, joint, role)
                            tracker.update(Turn(joint[i], seen), time.monotonic() + 60)
                            sizes.append(len(tracker.states))
                            turns += 1
                        state = after
                seconds = time.perf_counter() - start
            held[engine] = sizes
            rows.append(
                [game, engine, str(turns), f"{seconds:.2f}", f"{turns / seconds:,.0f}",
                 f"{max(sizes) if sizes else 0}"]
            )
        if held["prolog"] != held["compiled"]:
            raise AssertionError(f"{game}: the engines' beliefs differ")
    return rows


def _rss_mb(field: str) -> float:
    """This process's resident memory (``VmRSS``) or its peak (``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(engine: str, way: str, heard: str, deadline: float) -> dict[str, float]:
    """Take the scout's first turn in one ``way`` (in this process, which should be new):
    seconds, CPU seconds, MB of resident memory above the loaded game's, and the
    children found (or, for the belief, the states it holds)."""
    with load_machine(HIDDEN, engine) as sm:  # type: ignore[arg-type]
        assert sm.engine_choice.engine == engine, sm.engine_choice
        s, role, move, seen = sm.initial_state, "scout", "(ask row)", HEARD[heard]
        sm.all_legal_moves(s)
        before = _rss_mb("VmRSS")
        start, cpu = time.perf_counter(), time.process_time()
        if way == "expand":
            i = sm.role_index(role)
            want = [sm.term(p) for p in seen]
            found = [
                step.state
                for jm, step in sm.expand(s)
                if jm[i] == sm.term(move) and sm.percepts(s, jm, role) == want
            ]
            count = len(found)
        elif way == "successors":
            count = len(sm.consistent_successors(s, role, move, seen))
        elif way == "witness":
            stream = sm.consistent_children(s, role, move, seen, rng=random.Random(1))
            count = int(stream.next_child() is not None)
        else:
            tracker = BeliefTracker(sm, sm.term(role), random.Random(1))
            turn = Turn(sm.term(move), tuple(sm.term(p) for p in seen))
            tracker.update(turn, time.monotonic() + deadline)
            count = len(tracker.states)
        return {
            "seconds": time.perf_counter() - start,
            "cpu": time.process_time() - cpu,
            "mb": max(0.0, _rss_mb("VmHWM") - before),
            "count": count,
        }


def baseline_package(rev: str, into: Path) -> Path:
    """The gdl2pl package of git revision ``rev`` laid out in ``into`` as an installed one
    is (``gdl2pl/`` with ``prolog/`` and ``bridge/`` inside), for ``PYTHONPATH``, with this
    tree's C extension; ``SystemExit`` if ``rev``'s extension source differs."""
    import gdl2pl.compiled

    c_file = "gdl2pl/compiled/*.[ch]"
    if subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", rev, "--", c_file]).returncode:
        raise SystemExit(f"{rev} has other C files ({c_file}): its extension is not this tree's")
    tar = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "gdl2pl", "prolog", "bridge"],
        capture_output=True,
        check=True,
    ).stdout
    source = into / "source"
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(source, filter="data")
    package = into / "gdl2pl"
    shutil.copytree(source / "gdl2pl", package)
    shutil.copytree(source / "prolog", package / "prolog")
    shutil.copytree(source / "bridge", package / "bridge")
    for built in Path(gdl2pl.compiled.__file__).parent.glob("_network*.so"):
        shutil.copy(built, package / "compiled")
    return into


def _measured(
    engine: str, way: str, heard: str, deadline: float, path: Path | None
) -> dict[str, float]:
    """``measure`` in a new process (on the package at ``path`` if given)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, __file__, "--measure", engine, way, heard, "--deadline", str(deadline)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    measured: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return measured


def huge_turn_rows(deadline: float, baseline_rev: str | None) -> list[list[str]]:
    """Each way of taking the huge turn in, on each engine, each in a new process; the
    ways the baseline revision has, on it too."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_package(baseline_rev, Path(tmp)) if baseline_rev else None
        for heard in HEARD:
            for way, what in WAYS.items():
                for engine in ENGINES:
                    if way == "expand" and engine == "prolog":
                        continue  # never the reasoner's path, and gigabytes: see the doc
                    runs = [("this", None)]
                    if base is not None and way in ("successors", "belief"):
                        runs.insert(0, (baseline_rev or "", base))
                    cpu_before = None
                    for revision, path in runs:
                        m = _measured(engine, way, heard, deadline, path)
                        count = f"{m['count']:,.0f}" + (" states" if way == "belief" else "")
                        less = ""
                        if path is not None:
                            cpu_before = m["cpu"]
                        elif cpu_before is not None:
                            less = f"{cpu_before / max(m['cpu'], 1e-3):,.1f}x"
                        rows.append([
                            heard, what, engine, revision, count, f"{m['seconds']:.2f}",
                            f"{m['cpu']:.2f}", f"{m['mb']:,.0f}", less,
                        ])
    return rows


def report(args: argparse.Namespace) -> str:
    cfr_table = markdown_table(
        ["Kuhn poker", "seconds", "exploitability", "vs the reasoner"], cfr_rows(args.iterations)
    )
    belief_table = markdown_table(
        ["game", "engine", "turns taken in", "seconds", "turns/s", "most states held"],
        belief_rows(args.matches, args.seed),
    )
    huge_table = markdown_table(
        ["heard", "taken in by", "engine", "revision", "children", "seconds", "CPU s",
         "MB more", "less CPU"],
        huge_turn_rows(args.deadline, args.baseline_rev),
    )
    return "\n".join([
        SECTION,
        "",
        header_markdown(machine_header()),
        "",
        f"CFR+, {args.iterations} iterations (OpenSpiel's solver through `gdl_ii`):",
        "",
        cfr_table,
        "",
        f"The belief search of every player along {args.matches} random matches "
        f"(seed {args.seed}), every turn but the last (which a player learns with `stop`); "
        "the states held are the same on both engines:",
        "",
        belief_table,
        "",
        "The scout's first turn of `tests/games/gdl2/hidden_cell.kif` (2 x 400 x 400 joint "
        "moves; it asked for a row hint), each way in a process of its own: seconds, CPU "
        "seconds (the machine is shared: CPU is the steadier figure), and how far resident "
        f"memory grew above the loaded game's. The belief update has {args.deadline:g} s"
        + (f"; revision {args.baseline_rev} is the baseline, measured in the same run" if
           args.baseline_rev else "")
        + ":",
        "",
        huge_table,
        "",
    ])


def main() -> int:
    if sys.argv[1:2] == ["--measure"]:  # one measurement, in a process of its own
        engine, way, heard = sys.argv[2:5]
        deadline = float(sys.argv[sys.argv.index("--deadline") + 1])
        print(json.dumps(measure(engine, way, heard, deadline)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=10.0)
    ap.add_argument("--baseline-rev", default=None, help="measure this git revision too")
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    sys.exit(main())
