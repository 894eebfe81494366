"""The reachable state graph of a game, explored breadth-first inside Prolog.

``explore(sm, max_states, seconds)`` returns a ``StateSpace``: states are numbered in
order of discovery (0 is the initial state); for every *expanded* state it holds whether
it is terminal, its goal values, the number of legal moves of each role
and the successor of each joint move (non-terminal states). States discovered but not
expanded (the search stopped at its budget) have no entry. ``random_walks`` plays random
matches inside Prolog and reports how each ended. Joint moves are found back from a joint
index (``joint_move``) by asking Prolog for the legal moves of that one state.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge.errors import reasoner_error
from gdl2pl.bridge.pyform import symbol_of_py
from gdl2pl.bridge.pyform import term_of_py
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.kif import kif_term

from .deadline import Deadline

SEARCH_MODULE = "gdl_search"
_sessions = itertools.count(1)


def search_runtime() -> Any:
    """The janus module with ``analysis/gdl_search.pl`` loaded (once per process)."""
    return runtime_with("gdl2pl.analysis", "gdl_search.pl")


py_term = term_of_py


def ask(sm: StateMachine, predicate: str, *args: Any) -> Any:
    """The answer of ``gdl_search:predicate(args..., Answer)`` about the game of ``sm``;
    a Prolog error is raised as the bridge raises its own (``QueryInterrupted`` when the
    query was stopped from another thread: Ctrl-C, a server's watchdog)."""
    janus = search_runtime()
    with sm.using():
        try:
            return janus.apply_once(SEARCH_MODULE, predicate, *args)
        except janus.PrologError as e:
            raise reasoner_error(sm.name, e) from None


def resident_bytes() -> int | None:
    """The resident memory of this process (Prolog's stacks and tables included), from
    ``/proc/self/statm``; None where there is no such file."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


#: What the random matches and the checks after the search (``wellformed``) take on
#: top of the search, per edge and per discovered state of the graph, an over-estimate
#: of what was measured: 91 MB on connectFour (418,000 edges, 200,000 states), 71 MB on
#: breakthroughSmall (494,000 edges, 200,000 states).
CHECK_BYTES_PER_EDGE = 150
CHECK_BYTES_PER_STATE = 250


def checks_bytes(space: StateSpace) -> int:
    """The memory the checks are expected to need on ``space`` (see the constants)."""
    return CHECK_BYTES_PER_EDGE * space.edge_count + CHECK_BYTES_PER_STATE * space.discovered


@dataclass
class StateSpace:
    """What a breadth-first search found (see the module docstring)."""

    roles: tuple[str, ...]
    discovered: int = 1
    terminal: dict[int, list[list[str]]] = field(default_factory=dict)  # id -> goals per role
    counts: dict[int, tuple[int, ...]] = field(default_factory=dict)  # id -> legal per role
    succ: dict[int, list[int]] = field(default_factory=dict)  # id -> successor per joint
    #: id -> goals per role of an expanded non-terminal state (monotonicity asks of those)
    goals: dict[int, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    seconds: float = 0.0
    edge_count: int = 0  # successors listed in succ
    stopped_by: str | None = None  # "states", "seconds" or "memory" when not exhaustive
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)  # derived data

    @property
    def expanded(self) -> int:
        return len(self.terminal) + len(self.counts)

    @property
    def exhaustive(self) -> bool:
        """True if every reachable state was expanded."""
        return self.expanded == self.discovered

    def edges(self, state: int) -> list[int]:
        return self.succ.get(state, [])

    def role_move_index(self, state: int, joint: int, role: int) -> int:
        """The index, among ``role``'s sorted legal moves, of its move in joint move
        number ``joint`` of ``state`` (joint moves in lexicographic order)."""
        counts = self.counts[state]
        stride = 1
        for c in counts[role + 1 :]:
            stride *= c
        return (joint // stride) % counts[role]

    def parents(self) -> dict[int, tuple[int, int]]:
        """For each state but the initial one, (the state it was discovered from, the
        joint index leading there): shortest paths from the initial state."""
        key = (self.expanded, self.discovered)
        cached = self.cache.get("parents")
        if cached is not None and cached[0] == key:
            return cached[1]
        parent: dict[int, tuple[int, int]] = {}
        for s in sorted(self.succ):
            for j, t in enumerate(self.succ[s]):
                if t != 0 and t not in parent:
                    parent[t] = (s, j)
        self.cache["parents"] = (key, parent)
        return parent


class Explorer:
    """A search session over a loaded game (the state machine's Prolog module)."""

    def __init__(self, sm: StateMachine) -> None:
        self.sm = sm
        self.janus = search_runtime()
        self.session = f"gdl_search_{next(_sessions)}"
        self.space = StateSpace(tuple(kif_term(r) for r in sm.roles))
        ask(sm, "search_open", sm.module, self.session)
        self._legal: dict[int, list[list[str]]] = {}

    def close(self) -> None:
        self.janus.query_once(f"{SEARCH_MODULE}:search_close(S)", {"S": self.session})

    def __enter__(self) -> Explorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        max_states: int,
        seconds: float,
        batch: int = 20,
        progress: bool | None = None,
        max_memory: int | None = None,
        deadline: Deadline | None = None,
    ) -> StateSpace:
        """Expand states until all are expanded, ``max_states`` were discovered,
        ``seconds`` have passed or ``deadline`` (if sooner; the clock is read before
        each state, so the search ends at most one state's work past it), or the
        memory the search added to the process, with what the checks will need after
        it (``checks_bytes``), reached ``max_memory`` bytes (the resident memory, read
        from ``/proc/self/statm`` when the search starts and after each batch; where it
        cannot be read, states and seconds bound the search alone); ``space.stopped_by``
        says which. A progress bar on stderr when ``progress`` (at once), or by default
        when stderr is a terminal (after one second). Batches start at ``batch``
        states and grow or shrink so that each takes about a tenth of a second: a game
        whose states are slow to expand still stops near its time."""
        from tqdm import tqdm

        show = sys.stderr.isatty() if progress is None else progress
        space = self.space
        shared: dict[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]] = {}
        start = time.monotonic()
        until = Deadline.after(seconds, start)
        if deadline is not None and deadline.end < until.end:
            until = deadline
        baseline = resident_bytes()
        with tqdm(
            desc="states",
            unit=" states",
            delay=1.0 if progress is None else 0.0,
            disable=not show,
            file=sys.stderr,
        ) as bar:
            while True:
                began = time.monotonic()
                if until.passed():
                    space.stopped_by = "seconds"
                    break
                records, discovered = self._expand(max_states, batch, until.left())
                space.discovered = discovered
                for sid, term, goals, counts, succs in records:
                    if term:
                        space.terminal[sid] = [[symbol_of_py(v) for v in vs] for vs in goals]
                    else:
                        vector = tuple(tuple(symbol_of_py(v) for v in vs) for vs in goals)
                        space.goals[sid] = shared.setdefault(vector, vector)  # few distinct
                        space.counts[sid] = tuple(counts)
                        space.succ[sid] = succs
                        space.edge_count += len(succs)
                bar.update(len(records))
                bar.set_postfix(found=discovered, refresh=False)
                now = time.monotonic()
                if space.exhaustive:
                    space.stopped_by = None
                    break
                if not records:
                    space.stopped_by = "seconds" if until.passed() else "states"
                    break
                if now >= until.end:
                    space.stopped_by = "seconds"
                    break
                rss = resident_bytes()
                if (
                    max_memory is not None
                    and rss is not None
                    and baseline is not None
                    and rss - baseline + checks_bytes(space) >= max_memory
                ):
                    space.stopped_by = "memory"
                    break
                took = max(now - began, 1e-4)
                batch = max(1, min(20_000, int(batch * min(4.0, 0.1 / took))))
        space.seconds = time.monotonic() - start
        return space

    def _expand(self, max_states: int, batch: int, seconds: float) -> tuple[list[Any], int]:
        """The records of the next ``batch`` states expanded (``search_expand``; fewer if
        ``seconds`` pass first) and how many states are discovered."""
        records, discovered, _ = ask(
            self.sm, "search_expand", self.sm.module, self.session, max_states, batch, seconds
        )
        return records, discovered

    def legal(self, state: int) -> list[list[str]]:
        """Each role's sorted legal moves in ``state``, as KIF strings."""
        if state not in self._legal:
            raw = ask(self.sm, "search_legal", self.sm.module, self.session, state)
            self._legal[state] = [[kif_term(py_term(m)) for m in ms] for ms in raw]
        return self._legal[state]

    def fluents(self, state: int) -> list[str]:
        raw = self.janus.apply_once(SEARCH_MODULE, "search_fluents", self.session, state)
        return [kif_term(py_term(f)) for f in raw]

    def joint_move(self, state: int, joint: int) -> list[str]:
        """Joint move number ``joint`` of ``state`` (KIF strings, role order)."""
        legal = self.legal(state)
        return [legal[r][self.space.role_move_index(state, joint, r)] for r in range(len(legal))]

    def path_to(self, state: int) -> list[list[str]]:
        """A shortest list of joint moves from the initial state to ``state``."""
        parent = self.space.parents()
        steps: list[tuple[int, int]] = []
        while state != 0:
            s, j = parent[state]
            steps.append((s, j))
            state = s
        return [self.joint_move(s, j) for s, j in reversed(steps)]


@dataclass(frozen=True)
class Walk:
    """One random match: how it ended (terminal, stuck, cycle, long), its joint moves
    (KIF strings; empty for long), and the detail (goals per role, the stuck role's index,
    or the step at which the repeated state first occurred)."""

    kind: str
    moves: list[list[str]]
    detail: Any


#: Seconds that stand for no time limit (a year).
FOREVER = 365 * 24 * 3600.0


def random_walks(
    sm: StateMachine,
    count: int,
    max_depth: int,
    seed: int = 0,
    inferences: int = 10**9,
    seconds: float = FOREVER,
) -> list[Walk]:
    """Up to ``count`` random matches from the initial state (inside Prolog), each
    ending terminal, stuck, cycle or long; those still running when ``seconds`` pass
    are left out (the clock is read before each step)."""
    raw = ask(sm, "search_walks", sm.module, count, max_depth, seed, inferences, seconds)
    walks = []
    for kind, moves, detail in raw:
        if kind == "stopped":
            continue
        joint = [[kif_term(py_term(m)) for m in jm] for jm in moves]
        if kind == "terminal":
            detail = [[symbol_of_py(v) for v in vs] for vs in detail]
        walks.append(Walk(str(kind), joint, detail))
    return walks
