"""``--ray``: the same verdicts as local runs, games travelling with the tasks, retries of
crashed workers, per-task time limits. One local Ray instance (2 CPUs) for the module."""

from __future__ import annotations

import importlib
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from conftest import EXAMPLES
from conftest import REPO
from prolog_env import require_prolog
from prolog_env import start_local_ray

from gdl2pl.cli import main
from gdl2pl.verify.job import Job
from gdl2pl.verify.job import run_verify

TTT = str(EXAMPLES / "ticTacToe.kif")
GAMES = [str(EXAMPLES / "buttons.kif"), TTT]
SELF = f"{shlex.quote(sys.executable)} -P -m gdl2pl.cli replay {{game}}"
DIFFER = f"{shlex.quote(sys.executable)} {shlex.quote(str(REPO / 'tests/engines/differ.py'))}"
BUGS = f"{shlex.quote(sys.executable)} {shlex.quote(str(REPO / 'tests/engines/bugs.py'))}"


def require_module(name: str) -> ModuleType:
    """Import ``name``; skip without it, except in CI (``CI=true``), where that fails."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(name)
    return pytest.importorskip(name)


@pytest.fixture(scope="module")
def ray() -> Iterator[ModuleType]:
    ray = require_module("ray")
    require_prolog()
    start_local_ray(ray, num_cpus=2)
    try:
        yield ray
    finally:
        ray.shutdown()


def results_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, list[dict]]:
    status = main(argv)
    lines = capsys.readouterr().out.splitlines()
    return status, [
        {k: v for k, v in json.loads(line).items() if k != "seconds"} for line in lines if line
    ]


def test_ray_verdicts_equal_the_local_ones(
    ray: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["verify", *GAMES, "--engine", DIFFER, "--json", "--repro-dir", str(tmp_path)]
    local_status, local = results_of(capsys, [*args, "--workers", "1"])
    ray_status, remote = results_of(capsys, [*args, "--ray"])
    assert (ray_status, remote) == (local_status, local)
    assert [r["game"] for r in remote] == GAMES
    assert {r["verdict"] for r in remote} == {"diverge"}


def test_ray_keep_going_finds_what_local_workers_find(
    ray: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["verify", TTT, "--engine", BUGS, "--keep-going", "--matches", "1", "--seed", "2"]
    args += ["--json", "--repro-dir", str(tmp_path)]
    local_status, local = results_of(capsys, [*args, "--workers", "1"])
    ray_status, remote = results_of(capsys, [*args, "--ray"])
    assert (ray_status, remote) == (local_status, local)
    assert remote[0]["differences_by_kind"] == {"goals": 2, "legal": 2, "state": 1}


def test_ray_trace_all_equals_the_local_one(
    ray: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["trace-all", *GAMES, "--matches", "2", "--seed", "3"]
    assert main([*argv, "--out-dir", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert main([*argv, "--out-dir", str(tmp_path / "ray"), "--ray"]) == 0
    for name in ("buttons.kif.jsonl", "ticTacToe.kif.jsonl"):
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()
    capsys.readouterr()


def test_the_game_travels_with_the_task(ray: ModuleType) -> None:
    """The worker needs no copy of the game file: the engine gets a temporary one."""
    from gdl2pl.verify.ray_runner import run_ray

    job = Job(path="/not/on/any/worker/ticTacToe.kif", text=Path(TTT).read_text(), engine=SELF)
    [r] = run_ray(run_verify, [job], lambda i, r: None)
    assert r["verdict"] == "agree" and r["steps_compared"] > 5


def test_a_crashed_worker_is_retried(ray: ModuleType, tmp_path: Path) -> None:
    from gdl2pl.verify.ray_runner import run_ray

    marker = tmp_path / "crashed-once"

    def crash_once(job: Job) -> dict:
        if not marker.exists():
            marker.write_text("")
            os._exit(1)  # the worker process dies
        return {"game": job.path, "verdict": "agree"}

    jobs = [Job(path="g.kif", text="")]
    assert run_ray(crash_once, jobs, lambda i, r: None, retries=1) == [
        {"game": "g.kif", "verdict": "agree"}
    ]
    marker.unlink()

    def always_crash(job: Job) -> dict:
        os._exit(1)

    [r] = run_ray(always_crash, jobs, lambda i, r: None, retries=0)
    assert r["verdict"] == "gdl2pl_error" and "Ray task failed" in r["error"]


def test_a_task_over_its_time_limit_is_a_timeout(ray: ModuleType) -> None:
    from gdl2pl.verify.ray_runner import run_ray

    def slow(job: Job) -> dict:
        time.sleep(120)
        return {"game": job.path, "verdict": "agree"}

    seen: list[int] = []
    [r] = run_ray(slow, [Job(path="g.kif", text="")], lambda i, r: seen.append(i), task_timeout=1)
    assert r["verdict"] == "timeout" and "longer than 1 s" in r["error"] and seen == [0]


def test_a_memory_reservation_per_task(ray: ModuleType) -> None:
    """``--memory``: each task reserves that much of Ray's memory resource."""
    from gdl2pl.verify.ray_runner import run_ray

    def reserved(job: Job) -> dict:
        import ray as worker_ray

        return {
            "game": job.path,
            "memory": worker_ray.get_runtime_context().get_assigned_resources(),
        }

    [r] = run_ray(reserved, [Job(path="g.kif", text="")], lambda i, r: None, memory_mb=64)
    assert r["memory"].get("memory") == 64 * 1024 * 1024
