"""Running one task per game on local worker processes, results in input order.

Each worker is a fresh interpreter (``forkserver``/``spawn``: SWI-Prolog does not survive
a fork after start-up) that loads its own games. ``on_result`` sees each result as it
arrives (so it can be saved at once); the returned list is in the order of ``jobs``,
whatever the order of completion.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import Future
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .job import Job

Task = Callable[[Job], dict[str, Any]]
OnResult = Callable[[int, dict[str, Any]], None]

#: How often a game whose worker process died is tried again.
CRASH_RETRIES = 2


def crashed(job: Job, reason: str) -> dict[str, Any]:
    """The result of a game whose worker died every time it was tried."""
    return {
        "game": job.path,
        "verdict": "gdl2pl_error",
        "matches": 0,
        "steps_compared": 0,
        "first_divergence": None,
        "error": reason,
    }


def progress(total: int, label: str) -> Any:
    """A tqdm bar on stderr, shown only when stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total, desc=label, unit="game", file=sys.stderr, disable=not sys.stderr.isatty()
    )


def submission_order(jobs: list[Job]) -> list[int]:
    """Job indexes, biggest game (text plus trace) first: the long games start early and
    do not leave one worker busy at the end while the others idle."""
    return sorted(
        range(len(jobs)), key=lambda i: -(len(jobs[i].text) + len(jobs[i].trace_text or ""))
    )


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def run_local(
    task: Task, jobs: list[Job], workers: int, on_result: OnResult, label: str = "games"
) -> list[dict[str, Any]]:
    """Run ``task`` on each job with ``workers`` processes (in this process if 1)."""
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    with progress(len(jobs), label) as bar:

        def done(i: int, r: dict[str, Any]) -> None:
            results[i] = r
            on_result(i, r)
            bar.update(1)

        if workers <= 1:
            for i, job in enumerate(jobs):
                done(i, task(job))
        else:
            _run_pool(task, jobs, workers, done)
    return [r for r in results if r is not None]


def _run_pool(
    task: Task, jobs: list[Job], workers: int, done: Callable[[int, dict[str, Any]], None]
) -> None:
    todo = submission_order(jobs)
    crashes = dict.fromkeys(todo, 0)
    while todo:
        retry: list[int] = []
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            futures: dict[Future[dict[str, Any]], int] = {}
            for i in todo:  # submitted in this order, so started in it
                futures[pool.submit(task, jobs[i])] = i
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=futures.__getitem__):
                    i = futures[f]
                    try:
                        done(i, f.result())
                    except BrokenProcessPool:
                        crashes[i] += 1
                        if crashes[i] > CRASH_RETRIES:
                            done(i, crashed(jobs[i], "its worker process died on every try"))
                        else:
                            retry.append(i)
        order = {i: n for n, i in enumerate(submission_order(jobs))}
        todo = sorted(retry, key=order.__getitem__)
