"""The same tasks as ``runner.run_local``, as Ray tasks on a cluster (or a local Ray).

Each task carries its game's text (and trace), so workers need gdl2pl and SWI-Prolog
installed but no shared files. At most as many tasks as the cluster has CPUs are in flight,
so a task's clock starts about when it starts; one that runs longer than ``task_timeout``
is cancelled and reported as ``timeout``. A worker that dies is retried by Ray
(``max_retries``); ``memory`` is Ray's per-task memory reservation (used for scheduling;
Ray's memory monitor kills, and then retries, the tasks of a node that runs out).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from .job import Job
from .runner import OnResult
from .runner import Task
from .runner import crashed
from .runner import progress
from .runner import submission_order

POLL_SECONDS = 1.0


def start_ray(address: str | None) -> None:
    """Connect to the Ray cluster at ``address`` (``auto``: the one running on this
    machine), or start a local instance of its own (no dashboard), even where a cluster
    runs on the machine."""
    import ray

    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(address="local", include_dashboard=False, log_to_driver=False)


def run_ray(
    task: Task,
    jobs: list[Job],
    on_result: OnResult,
    address: str | None = None,
    task_timeout: float = 600.0,
    memory_mb: int | None = None,
    retries: int = 2,
    label: str = "games",
) -> list[dict[str, Any]]:
    """Run ``task`` on each job as a Ray task; results in the order of ``jobs``."""
    import ray

    start_ray(address)
    options: dict[str, Any] = {"max_retries": retries, "num_cpus": 1}
    if memory_mb:
        options["memory"] = memory_mb * 1024 * 1024
    remote = ray.remote(task).options(**options)
    window = max(1, int(ray.cluster_resources().get("CPU", 1)))
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    queue = deque(submission_order(jobs))
    running: dict[Any, tuple[int, float]] = {}
    with progress(len(jobs), label) as bar:

        def done(i: int, r: dict[str, Any]) -> None:
            results[i] = r
            on_result(i, r)
            bar.update(1)

        while queue or running:
            while queue and len(running) < window:
                i = queue.popleft()
                running[remote.remote(jobs[i])] = (i, time.monotonic())
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_SECONDS)
            for ref in ready:
                i, _started = running.pop(ref)
                try:
                    done(i, ray.get(ref))
                except ray.exceptions.RayError as e:
                    reason = f"the Ray task failed after {retries} retries: {type(e).__name__}"
                    done(i, crashed(jobs[i], reason))
            now = time.monotonic()
            for ref, (i, started) in list(running.items()):
                if now - started > task_timeout:
                    ray.cancel(ref, force=True)
                    del running[ref]
                    r = crashed(jobs[i], f"the Ray task ran longer than {task_timeout:g} s")
                    r["verdict"] = "timeout"
                    done(i, r)
    return [r for r in results if r is not None]
