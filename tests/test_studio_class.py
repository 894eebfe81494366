"""The studio serves a class (issue 53, item 3): bound to every address of the machine it
answers the students' browsers at the addresses it prints (and still no other name);
requests past the server's cap wait in line, first come first served, instead of being
refused at once, and a refusal for a busy server says the page may try again; the limits
are set on the command line; an exercise file opens in every student's page.

The rules are tested, not the machine's speed: work is held until the test has seen what
it checks (``benchmarks/studio_class.py`` measures a class of 80)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from prolog_env import require_module
from test_studio_limits import JSON
from test_studio_limits import MARGIN
from test_studio_limits import ask
from test_studio_limits import running

pytestmark = pytest.mark.studio

TTT = (EXAMPLES / "ticTacToe.kif").read_text(encoding="utf-8")


def _limits(**changes: Any) -> Any:
    from gdl2pl.studio.limits import Limits

    return Limits(**changes)


# -- the line: waiting for a place, first come first served -----------------------------------


def test_the_line_never_admits_more_than_its_cap_nor_loses_a_place() -> None:
    """Many requests of many sessions, each holding its place a random while, some
    giving up (cancelled) and some waiting past their time: never more in flight than
    the cap, and at the end nothing in flight nor in line."""
    from gdl2pl.studio.admission import Admission
    from gdl2pl.studio.sessions import StudioError

    async def main() -> tuple[int, dict[str, int]]:
        adm = Admission(per_session=3, overall=4)
        rng = random.Random(7)
        peak = 0
        outcomes = {"done": 0, "busy": 0, "refused": 0, "cancelled": 0}

        async def one(i: int) -> None:
            nonlocal peak
            end = time.monotonic() + rng.choice([0.0, 0.01, 0.05, 5.0])
            try:
                async with adm.enter(f"s{i % 7}", end):
                    peak = max(peak, adm.in_flight())
                    await asyncio.sleep(rng.random() * 0.01)
                outcomes["done"] += 1
            except StudioError as e:
                assert e.retry
                outcomes["busy" if e.status == 503 else "refused"] += 1

        tasks = [asyncio.create_task(one(i)) for i in range(300)]
        await asyncio.sleep(0.005)
        for t in rng.sample(tasks, 40):
            t.cancel()
        for t in tasks:
            try:
                await t
            except asyncio.CancelledError:
                outcomes["cancelled"] += 1
        assert adm.in_flight() == 0 and adm.waiting() == 0
        return peak, outcomes

    peak, outcomes = asyncio.run(main())
    assert peak <= 4
    assert outcomes["done"] > 0 and sum(outcomes.values()) == 300


def test_the_first_in_line_is_the_first_admitted() -> None:
    from gdl2pl.studio.admission import Admission

    async def main() -> list[int]:
        adm = Admission(per_session=10, overall=1)
        order: list[int] = []
        gate = asyncio.Event()

        async def one(i: int) -> None:
            async with adm.enter(f"s{i}", time.monotonic() + 60):
                order.append(i)
                if i == 0:
                    await gate.wait()

        first = asyncio.create_task(one(0))
        await asyncio.sleep(0)
        rest = []
        for i in range(1, 6):
            rest.append(asyncio.create_task(one(i)))
            await asyncio.sleep(0)  # each joins the line in this order
        assert adm.waiting() == 5
        gate.set()
        await asyncio.gather(first, *rest)
        return order

    assert asyncio.run(main()) == [0, 1, 2, 3, 4, 5]


def held_front_end(app_workers: Any) -> threading.Event:
    """Hold every front-end question whose text holds ``; hold`` until the event is set."""
    release = threading.Event()
    real = app_workers.ask

    def ask(request: dict[str, Any], seconds: float) -> dict[str, Any]:
        if "; hold" in request.get("text", ""):
            assert release.wait(120), "never released"
        return real(request, seconds)

    app_workers.ask = ask
    return release


@pytest.fixture
def studio_with(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run a studio with given limits whose front-end questions ``; hold`` wait for the
    returned event: ``with studio_with(limits) as (url, release)``."""
    from contextlib import contextmanager

    from gdl2pl.studio import app as studio_app

    @contextmanager
    def start(limits: Any) -> Any:
        made: list[Any] = []
        real = studio_app.create_app

        def create(*args: Any, **kwargs: Any) -> Any:
            made.append(real(*args, **kwargs))
            return made[-1]

        monkeypatch.setattr(studio_app, "create_app", create)
        with running(limits) as url:
            yield url, held_front_end(made[0].state.workers)

    return start


def test_a_class_at_once_waits_in_line_and_is_answered(studio_with: Any) -> None:
    """More students at once than requests in flight: the others wait in line (none is
    refused), and each is answered once the first ones end."""
    require_module("httpx")
    lim = _limits(max_requests=2, max_front_end=1, wait_seconds=300.0)
    students = 12
    with studio_with(lim) as (url, release), ThreadPoolExecutor(students) as pool:
        asked = [
            pool.submit(ask, url, "check", {"text": TTT + f"; hold {i}\n"})
            for i in range(students)
        ]
        time.sleep(1.0)
        assert not any(f.done() for f in asked), "a request was refused while the others ran"
        release.set()
        got = [f.result() for f in asked]
    assert [s for s, _, _ in got] == [200] * students


def test_a_request_that_waited_its_time_is_told_to_try_again(studio_with: Any) -> None:
    import httpx

    lim = _limits(max_requests=1, max_front_end=1, wait_seconds=0.5)
    with studio_with(lim) as (url, release), ThreadPoolExecutor(1) as pool:
        held = pool.submit(ask, url, "check", {"text": TTT + "; hold\n"})
        time.sleep(0.5)  # it has the one place
        start = time.monotonic()
        with httpx.Client(base_url=url) as c:
            r = c.post("/api/check", content=json.dumps({"text": TTT}), headers=JSON)
        took = time.monotonic() - start
        assert r.status_code == 503 and r.json()["retry"] is True
        assert r.headers["Retry-After"] == "1"
        assert lim.wait_seconds <= took < lim.wait_seconds + MARGIN
        release.set()
        assert held.result()[0] == 200
        # the work's own limit is no reason to try again
        with httpx.Client(base_url=url) as c:
            r = c.post("/api/play", content=json.dumps({"text": "(role"}), headers=JSON)
        assert r.status_code == 422 and "retry" not in r.json()


# -- the addresses a class reaches the server at -------------------------------------------


def test_every_address_of_the_machine_is_answered_and_no_other_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_module("starlette")
    from starlette.testclient import TestClient

    from gdl2pl.studio import serve
    from gdl2pl.studio.app import LOCAL_HOSTS
    from gdl2pl.studio.app import create_app

    # a machine whose name resolves to loopback only (as Debian's does), with one card
    monkeypatch.setattr(serve, "_linux_addresses", lambda: {"203.0.113.7", "fe80::1"})
    monkeypatch.setattr(serve, "machine_names", lambda: {"classroom"})
    names = serve.host_names("0.0.0.0")
    assert "203.0.113.7" in names and "classroom" in names
    assert not any("fe80" in n for n in names)  # link-local: no URL can name it alone
    assert "http://203.0.113.7:8080/" in serve.student_urls("0.0.0.0", 8080)
    assert serve.student_urls("192.0.2.9", 8080) == ["http://192.0.2.9:8080/"]
    everywhere = create_app(allowed_hosts=names)
    assert TestClient(everywhere, base_url="http://203.0.113.7:8080").get("/").status_code == 200
    for foreign in ("http://evil.example", "http://203.0.113.8:8080"):
        r = TestClient(everywhere, base_url=foreign).get("/api/info")
        assert r.status_code == 400 and "unknown host" in r.json()["error"]
    # bound to this machine only, the machine's outside address is a foreign name
    local = create_app(allowed_hosts=LOCAL_HOSTS)
    assert TestClient(local, base_url="http://203.0.113.7:8080").get("/").status_code == 400


def test_the_command_serves_a_class_at_the_urls_it_prints(tmp_path: Path) -> None:
    """``gdl2pl studio --host 0.0.0.0`` with an exercise and a class's limits: it prints
    the URLs students open, answers there with the exercise and those limits, and
    refuses a foreign name."""
    require_module("uvicorn")
    import httpx

    exercise = tmp_path / "blue.json"
    exercise.write_text(
        json.dumps(
            {
                "gdl2pl_studio": 1,
                "title": "Let blue win",
                "syntax": "kif",
                "text": TTT,
                "properties": ["no errors", "xplayer is weakly winnable"],
            }
        ),
        encoding="utf-8",
    )
    argv = [sys.executable, "-P", "-m", "gdl2pl.cli", "studio", str(exercise), "--host",
            "0.0.0.0", "--port", "0", "--max-games", "90", "--prolog-workers", "3",
            "--front-end-workers", "2", "--max-requests", "24", "--wait-seconds", "20"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if "on this machine, open" in line:
                break
        assert lines[0] == "gdl2pl studio: students open, from their machines:", lines
        urls = [u.strip() for u in lines[1:-1]]
        assert urls and all(re.fullmatch(r"http://[^/]+:\d+/", u) for u in urls), urls
        for url in urls:
            info = httpx.get(url + "api/info", timeout=60).json()
            assert info["exercise"]["title"] == "Let blue win"
            assert info["exercise"]["properties"][1] == "xplayer is weakly winnable"
            assert info["limits"]["max_games"] == 90 and info["limits"]["max_busy"] == 3
            assert info["limits"]["max_requests"] == 24 and info["limits"]["wait_seconds"] == 20
        port = urls[0].rsplit(":", 1)[1].rstrip("/")
        r = httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": "evil.example"}, timeout=60)
        assert r.status_code == 400
    finally:
        proc.terminate()
        proc.wait(20)
        assert proc.stderr is not None
        err = proc.stderr.read()
    assert "warning: listening on 0.0.0.0" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ('{"text": "(role r)"}', '"gdl2pl_studio": 1'),
        ('{"gdl2pl_studio": 1}', '"text" must be a string'),
        ('{"gdl2pl_studio": 1, "text": "", "properties": "no errors"}', "list of sentences"),
        ('{"gdl2pl_studio": 1, "text": "", "syntax": "lisp"}', '"syntax" must be'),
    ],
)
def test_an_exercise_that_is_not_one_says_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    from gdl2pl.cli import main

    path = tmp_path / "ex.json"
    path.write_text(content, encoding="utf-8")
    assert main(["studio", str(path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["--max-games", "--prolog-workers", "--wait-seconds"])
def test_a_limit_of_nothing_is_refused(capsys: pytest.CaptureFixture[str], option: str) -> None:
    from gdl2pl.cli import main

    assert main(["studio", "--port", "0", option, "0"]) == 2
    assert f"{option} must be more than 0, not 0" in capsys.readouterr().err
