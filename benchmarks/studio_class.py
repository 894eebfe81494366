"""A class of students on one studio server (issue 53): latency percentiles and errors.

    python benchmarks/studio_class.py [--students 80] [--seconds 60] [--pace 2 6]
                                      [--baseline-games 12] [--results FILE]

The server is ``gdl2pl studio`` as a lecturer starts it (its own process, the class
defaults of ``gdl2pl.studio.limits.Limits``), on a local port. Each student is a browser
of its own (its own session cookie) that does what the page does, retries included (a
refusal that says ``retry`` is sent again after ``Retry-After``, as ``studio.js`` does):

1. *at once*: every student sends the same request at the same moment, a check of
   tic-tac-toe (front end), then a play of it (Prolog: each student loads its own game);
2. *paced*: for ``--seconds``, each student waits 2 to 6 s (``--pace``), then sends one
   request chosen as a student's page sends them: check 40 % (a pause in typing), play
   25 %, step (a move of a match it plays on) 15 %, explain 10 %, translate 5.5 %, graph
   4 %, analyze 0.5 % (one press in three minutes of each student: every analysis takes
   the server's whole budget of seconds of search and checks, about a core for 3 s).

A request's latency runs from its first sending to its final answer (retries included,
as the student waits for it); an *error* is a final answer other than 200, or none within
a minute. A request that got no answer at all (its connection reset) is sent again, as
the page sends it again, and counted apart: the server keeps a browser's idle connection
open longer than a student's pause (``serve.KEEP_ALIVE_SECONDS``), so that this is rare.
The target: no error, and a 95th percentile under 2 s in the paced phase. With
``--baseline-games N`` the paced phase runs first on a server holding only N games (the
earlier default was 12), a baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import httpx
from report import markdown_table
from report import section_main
from sysinfo import header_markdown
from sysinfo import machine_header

REPO = Path(__file__).resolve().parent.parent
TTT = (REPO / "gdl2pl" / "examples" / "ticTacToe.kif").read_text(encoding="utf-8")
SECTION = "## A class on the studio (`benchmarks/studio_class.py`)"
#: What a student's page asks, and how often (``--seconds`` phase).
MIX = {
    "check": 40.0,
    "play": 25.0,
    "step": 15.0,
    "explain": 10.0,
    "translate": 5.5,
    "graph": 4.0,
    "analyze": 0.5,
}
#: How long a request, retries included, is waited for (the page's RETRY_FOR_MS).
GIVE_UP = 60.0
#: The target of the paced phase.
TARGET_P95 = 2.0


@dataclass
class Record:
    """One request: what, its final status (0: no answer), seconds, the times it was
    told the server was busy and sent again, and the times its connection was reset."""

    endpoint: str
    status: int
    seconds: float
    retries: int
    error: str = ""
    resets: int = 0


@dataclass
class Student:
    """One browser: its client (its cookie) and the match it plays."""

    client: httpx.AsyncClient
    moves: list[list[str]] = field(default_factory=list)


async def send(s: Student, endpoint: str, body: dict, rng: random.Random) -> tuple[Record, dict]:
    """The request as the page sends it: again after ``Retry-After`` while the answer says
    ``retry``, for at most ``GIVE_UP`` seconds. Its record and its final answer."""
    start = time.monotonic()
    retries = resets = 0
    while True:
        try:
            r = await s.client.post(f"/api/{endpoint}", json=body)
            answer = r.json()
        except (httpx.HTTPError, ValueError) as e:
            said = f"{type(e).__name__}: {e}"
            if isinstance(e, httpx.TransportError) and time.monotonic() - start < GIVE_UP:
                resets += 1  # no answer (a connection reset): the page sends it again
                await asyncio.sleep(rng.uniform(0.75, 1.25))
                continue
            return Record(endpoint, 0, time.monotonic() - start, retries, said, resets), {}
        retry = r.status_code in (429, 503) and answer.get("retry")
        if r.status_code == 200 or not retry or time.monotonic() - start > GIVE_UP:
            said = "" if r.status_code == 200 else str(answer.get("error", ""))
            took = time.monotonic() - start
            return Record(endpoint, r.status_code, took, retries, said, resets), answer
        retries += 1
        after = float(r.headers.get("Retry-After", "1"))
        await asyncio.sleep(min(after * (1 + 0.5 * (retries - 1)), 5.0) * rng.uniform(0.75, 1.25))


def request(s: Student, rng: random.Random) -> tuple[str, dict]:
    """What a student's page asks next, drawn from ``MIX``, about its own match."""
    endpoint = rng.choices(list(MIX), weights=list(MIX.values()))[0]
    body: dict = {"text": TTT}
    if endpoint in ("play", "explain", "step"):
        body["moves"] = s.moves
    if endpoint == "explain":
        body["atom"] = "(legal xplayer (mark 2 2))"
    if endpoint == "step":
        body.update(chosen={}, players={"xplayer": "random", "oplayer": "random"})
    return endpoint, body


async def student_loop(
    s: Student, rng: random.Random, until: float, pace: tuple[float, float], out: list[Record]
) -> None:
    """One student until ``until``: a request every ``pace`` seconds; a step plays on its
    match (a new one once it ends)."""
    while True:
        await asyncio.sleep(rng.uniform(*pace))
        if time.monotonic() >= until:
            return
        endpoint, body = request(s, rng)
        rec, answer = await send(s, endpoint, body, rng)
        out.append(rec)
        if endpoint == "step" and rec.status == 200:
            s.moves = [] if answer["view"]["terminal"] else answer["moves"]


async def at_once(students: list[Student], endpoint: str, rng: random.Random) -> list[Record]:
    """Every student sends ``endpoint`` (tic-tac-toe) at the same moment."""
    body = {"text": TTT}
    done = await asyncio.gather(*(send(s, endpoint, body, rng) for s in students))
    return [rec for rec, _ in done]


async def a_class(url: str, n: int, seconds: float, pace: tuple[float, float], seed: int,
                  bursts: bool) -> dict[str, list[Record]]:
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    timeout = httpx.Timeout(120.0)
    clients = [httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) for _ in range(n)]
    students = [Student(c) for c in clients]
    phases: dict[str, list[Record]] = {}
    try:
        if bursts:
            rng = random.Random(seed)
            phases["at once: check"] = await at_once(students, "check", rng)
            phases["at once: play"] = await at_once(students, "play", rng)
        paced: list[Record] = []
        until = time.monotonic() + seconds
        rngs = [random.Random(seed * 1000 + i) for i in range(n)]
        await asyncio.gather(*(student_loop(s, rngs[i], until, pace, paced)
                               for i, s in enumerate(students)))
        phases["paced"] = paced
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    return phases


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def row(name: str, recs: list[Record]) -> list[str]:
    times = [r.seconds for r in recs]
    errors = sum(r.status != 200 for r in recs)
    kinds = Counter(r.status for r in recs if r.status != 200)
    said = ", ".join(f"{k or 'reset'}: {v}" for k, v in kinds.items())
    what = f"{errors} ({said})" if errors else "0"
    return [
        name,
        str(len(recs)),
        what,
        str(sum(r.retries for r in recs)),
        str(sum(r.resets for r in recs)),
        *(f"{percentile(times, p):.2f}" for p in (50, 90, 95, 99)),
        f"{max(times):.2f}" if times else "-",
    ]


def start_server(extra: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    """``gdl2pl studio`` on a free port, its standard error in ``log``; its URL."""
    argv = [sys.executable, "-P", "-m", "gdl2pl.cli", "studio", "--port", "0", *extra]
    with log.open("w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = line.split("open ", 1)[1].split(" ", 1)[0]
    return proc, url.rstrip("/")


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(args: argparse.Namespace, extra: list[str], bursts: bool) -> tuple[dict, str]:
    """The class's phases on a server started with ``extra`` options, and what became of
    the server (its memory at the end, or how it ended and its last words)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.err"
        proc, url = start_server(extra, log)
        try:
            httpx.post(url + "/api/check", json={"text": TTT}, timeout=120)  # workers up
            phases = asyncio.run(a_class(url, args.students, args.seconds, tuple(args.pace),
                                         args.seed, bursts))
            ended = proc.poll()
            state = (f"{resident_mb(proc.pid):.0f} MB resident at the end" if ended is None
                     else f"ENDED with status {ended}: " + " / ".join(
                         log.read_text(errors="replace").strip().splitlines()[-3:]))
        finally:
            proc.terminate()
            proc.wait(30)
    return phases, state


def report(args: argparse.Namespace) -> str:
    header = ["phase", "requests", "errors", "busy, tried again", "reset, sent again", "p50 s",
              "p90 s", "p95 s", "p99 s", "max s"]
    rows: list[list[str]] = []
    notes: list[str] = []
    errors_of: list[tuple[str, Record]] = []
    if args.baseline_games:
        phases, state = run(args, ["--max-games", str(args.baseline_games)], bursts=False)
        rows.append(row(f"paced, {args.baseline_games} games held (baseline)", phases["paced"]))
        notes.append(f"baseline server: {state}")
        errors_of += [("baseline", r) for r in phases["paced"]]
    phases, state = run(args, [], bursts=True)
    for name, recs in phases.items():
        rows.append(row(name + (" (class defaults)" if name == "paced" else ""), recs))
    paced = phases["paced"]
    by_kind: dict[str, list[Record]] = {}
    for r in paced:
        by_kind.setdefault(r.endpoint, []).append(r)
    kinds = [row(f"paced: {k}", by_kind[k]) for k in MIX if k in by_kind]
    p95 = percentile([r.seconds for r in paced], 95)
    errors = sum(r.status != 200 for recs in phases.values() for r in recs)
    verdict = "met" if not errors and p95 < TARGET_P95 else "NOT met"
    notes.append(f"class-defaults server: {state}")
    errors_of += [("class defaults", r) for recs in phases.values() for r in recs]
    said = Counter(
        f"{server}: {r.endpoint} {r.status or 'no answer'}: {r.error}"
        for server, r in errors_of
        if r.status != 200
    )
    notes += [f"{n} x {what}" for what, n in said.most_common(5)]
    return "\n".join([
        SECTION,
        "",
        header_markdown(machine_header()),
        f"- students: {args.students}, paced phase {args.seconds:g} s, one request every "
        f"{args.pace[0]:g}-{args.pace[1]:g} s each; seed {args.seed}",
        "",
        markdown_table(header, rows),
        "",
        "The paced phase by request (class defaults):",
        "",
        markdown_table(header, kinds),
        "",
        f"Target (no error, paced p95 < {TARGET_P95:g} s): **{verdict}** "
        f"(p95 {p95:.2f} s, {errors} errors). " + "; ".join(notes) + ".",
        "",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=80)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--pace", type=float, nargs=2, default=[2.0, 6.0], metavar=("MIN", "MAX"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--baseline-games", type=int, default=0,
                    help="first run the paced phase on a server holding this many games")
    return section_main(ap, report, SECTION)


if __name__ == "__main__":
    sys.exit(main())
