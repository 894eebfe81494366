"""Well-formedness of a game, decided on its explored state graph (``StateSpace``).

Each check is a pure function of the graph and returns the states or the path that make
its verdict: a cycle of non-terminal states (termination), a non-terminal state where a
role has no legal move (playability), a terminal state where a role has not exactly one
goal value (goal definition), a state where a role has not exactly one goal value or a move that
lowers one (monotonicity), a terminal state where a role's goal is 100 (weak
winnability), and strong winnability twice: as the notes define it, one sequence of the
role's own moves, fixed in advance, that wins whatever the others do (``winning_sequence``,
a breadth-first search over the sets of states the others' moves may lead to), and as a
strategy, each move chosen after seeing the others' (the attractor of AND-OR search).
A sequence is a strategy, so the first can only be proved where the second is. On a
partial graph (the search stopped at its budget) every refutation found is still a
refutation and every witness still a witness; ``strong_winnability_bounds`` gives what
the unexplored part cannot change.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from gdl2pl.vocabulary import goal_number

from .statespace import StateSpace

WIN = "100"


def find_cycle(space: StateSpace) -> list[tuple[int, int]] | None:
    """Steps (state, joint index) ... see ``_find_cycle``; computed once per graph."""
    key = (space.expanded, space.discovered)
    cached = space.cache.get("cycle")
    if cached is None or cached[0] != key:
        cached = space.cache["cycle"] = (key, _find_cycle(space))
    return cached[1]


def _find_cycle(space: StateSpace) -> list[tuple[int, int]] | None:
    """Steps (state, joint index) from the initial state along which the last step
    leads back to a state of the path: a cycle of non-terminal states; None if the
    expanded graph has none."""
    color: dict[int, int] = {}  # 1 on the current path, 2 done
    for root in (0, *sorted(space.succ)):
        if root in color or root not in space.succ:
            continue
        path: list[tuple[int, int]] = []  # (state, next joint index to try)
        color[root] = 1
        stack = [(root, 0)]
        while stack:
            s, j = stack[-1]
            edges = space.succ.get(s, [])
            if j >= len(edges):
                color[s] = 2
                stack.pop()
                continue
            stack[-1] = (s, j + 1)
            t = edges[j]
            c = color.get(t)
            if c == 1:
                path = [(u, k - 1) for u, k in stack]
                return _rooted(space, path)
            if c is None and t in space.succ:
                color[t] = 1
                stack.append((t, 0))
            elif c is None:
                color[t] = 2
    return None


def _rooted(space: StateSpace, cycle_path: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Prefix a path that starts at some state with a shortest path from state 0."""
    first = cycle_path[0][0]
    if first == 0:
        return cycle_path
    parent = space.parents()
    prefix: list[tuple[int, int]] = []
    s = first
    while s != 0:
        p, j = parent[s]
        prefix.append((p, j))
        s = p
    return list(reversed(prefix)) + cycle_path


#: The most edges the search for a shortest cycle follows in all; past it the shortest
#: cycle found so far is the answer, not proved shortest (a large graph whose first
#: cycles are long would otherwise be searched from every state near the start).
MAX_CYCLE_EDGES = 500_000


@dataclass(frozen=True)
class Cycle:
    """A counterexample to termination: ``steps`` (state, joint index) from the initial
    state, the last leading back to a state of the path; ``shortest`` when no such path
    of the explored graph is shorter (False when the search for one stopped at its cap)."""

    steps: list[tuple[int, int]]
    shortest: bool


def shortest_cycle(
    space: StateSpace,
    max_edges: int = MAX_CYCLE_EDGES,
    passed: Callable[[], bool] = lambda: False,
) -> Cycle | None:
    """A shortest counterexample to termination in the explored graph: the fewest joint
    moves from the initial state that come back to a state already on the way (a
    shortest path to a state, then a shortest cycle through it, the sum least over all
    states); None without a cycle. Computed once per graph.

    From each state ``s`` in breadth-first order a breadth-first search looks for the
    shortest way back to ``s``, only as deep as could still beat the best found (a path
    back to ``s`` is at least one step, so the states at the best length's distance
    need no search), and at most ``max_edges`` edges in all, until ``passed()`` (a
    deadline): then the best cycle found is the answer, not known to be shortest."""
    key = (space.expanded, space.discovered)
    cached = space.cache.get("shortest cycle")
    if cached is not None and cached[0] == key:
        return cached[1]
    any_cycle = find_cycle(space)
    if any_cycle is None:
        return None
    result = _shortest_cycle(space, any_cycle, max_edges, passed)
    if result.shortest:
        space.cache["shortest cycle"] = (key, result)
    return result


def _shortest_cycle(
    space: StateSpace,
    first: list[tuple[int, int]],
    max_edges: int,
    passed: Callable[[], bool] = lambda: False,
) -> Cycle:
    parent = space.parents()
    dist = _distances(space)
    best = first
    left = max_edges
    for s, d in sorted(dist.items(), key=lambda item: item[1]):
        if s not in space.succ:
            continue  # terminal, or not expanded
        if d + 1 >= len(best):
            return Cycle(best, True)
        loop, followed = _way_back(space, s, len(best) - d - 1, left)
        left -= followed
        if loop is not None:
            best = _path_to(parent, s) + loop
        if left <= 0 or passed():
            return Cycle(best, False)
    return Cycle(best, True)


def _distances(space: StateSpace) -> dict[int, int]:
    """Each state's distance from the initial state, in joint moves."""
    dist = {0: 0}
    queue = deque([0])
    while queue:
        s = queue.popleft()
        for t in space.succ.get(s, ()):
            if t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    return dist


def _way_back(
    space: StateSpace, start: int, longest: int, max_edges: int
) -> tuple[list[tuple[int, int]] | None, int]:
    """A shortest path from ``start`` back to it of at most ``longest`` steps (None if
    there is none, or none found within ``max_edges`` edges), and the edges followed."""
    came: dict[int, tuple[int, int]] = {start: (-1, -1)}
    level = [start]
    followed = 0
    for _ in range(longest):
        following: list[int] = []
        for u in level:
            for j, t in enumerate(space.succ.get(u, ())):
                followed += 1
                if t == start:
                    return [*_path_back(came, u), (u, j)], followed
                if t not in came:
                    came[t] = (u, j)
                    following.append(t)
            if followed >= max_edges:
                return None, followed
        level = following
        if not level:
            break
    return None, followed


def _path_back(came: dict[int, tuple[int, int]], state: int) -> list[tuple[int, int]]:
    """The steps ``came`` records from the search's start to ``state``."""
    steps: list[tuple[int, int]] = []
    while came[state][0] != -1:
        u, j = came[state]
        steps.append((u, j))
        state = u
    return steps[::-1]


def _path_to(parent: dict[int, tuple[int, int]], state: int) -> list[tuple[int, int]]:
    """A shortest path (steps) from the initial state to ``state``."""
    steps: list[tuple[int, int]] = []
    while state != 0:
        p, j = parent[state]
        steps.append((p, j))
        state = p
    return steps[::-1]


def stuck_states(space: StateSpace) -> list[int]:
    """Expanded non-terminal states where some role has no legal move, in BFS order."""
    return sorted(s for s, counts in space.counts.items() if 0 in counts)


def bad_goal_states(space: StateSpace) -> list[int]:
    """Expanded terminal states where some role has not exactly one integer goal value
    in 0..100."""
    return sorted(s for s, goals in space.terminal.items() if not all(map(good_goal, goals)))


def good_goal(values: Sequence[str]) -> bool:
    number = goal_number(values[0]) if len(values) == 1 else None
    return number is not None and number <= 100


def goals_of(space: StateSpace, state: int) -> Sequence[Sequence[str]]:
    """Each role's goal values in an expanded state."""
    return space.terminal[state] if state in space.terminal else space.goals[state]


@dataclass(frozen=True)
class MonotonicityProblem:
    """Why the game is not monotone: in ``state`` some role has not exactly one goal
    value (``step`` None), or the joint move number ``step`` of ``state`` lowers a role's
    goal value."""

    state: int
    step: int | None
    detail: str


def monotonicity_problem(space: StateSpace, roles: list[str]) -> MonotonicityProblem | None:
    """The first problem (breadth-first order) with monotonicity in the expanded graph:
    every role has exactly one goal value in every reachable state, and goal values
    never decrease along a move; None if there is none."""
    for s in sorted(set(space.terminal) | set(space.goals)):
        goals = goals_of(space, s)
        for role, vs in zip(roles, goals, strict=True):
            if not good_goal(vs):
                what = f"goal values {', '.join(vs)}" if vs else "no goal value"
                return MonotonicityProblem(s, None, f"{role} has {what}")
        for j, t in enumerate(space.succ.get(s, ())):
            if t not in space.terminal and t not in space.goals:
                continue  # not expanded: unknown
            after = goals_of(space, t)
            for role, before_v, after_v in zip(roles, goals, after, strict=True):
                if good_goal(after_v) and int(after_v[0]) < int(before_v[0]):
                    return MonotonicityProblem(
                        s, j, f"{role}'s goal value falls from {before_v[0]} to {after_v[0]}"
                    )
    return None


def winning_terminals(space: StateSpace, role: int) -> list[int]:
    """Expanded terminal states where ``role``'s goal is 100 (its only value)."""
    return sorted(s for s, goals in space.terminal.items() if goals[role] == [WIN])


def attractor(
    space: StateSpace, role: int, unexplored_wins: bool, stop_at: int | None = None
) -> set[int]:
    """The states from which ``role`` can force a terminal state where its goal is 100,
    whatever the other roles do (least fixed point; a cycle never counts as a win).
    States discovered but not expanded count as won if ``unexplored_wins``, else lost.
    With ``stop_at``, the fixed point stops as soon as that state is known to be won (the
    answer then holds it, but maybe not every other won state)."""
    win: set[int] = set(winning_terminals(space, role))
    if unexplored_wins:
        known = set(space.terminal) | set(space.counts)
        win |= {t for ts in space.succ.values() for t in ts if t not in known}
        if 0 not in known:
            win.add(0)  # not even the initial state was expanded
    preds, template, width = _moves_graph(space, role)
    # need[s][m]: successors of s under role's move m not yet known to be won
    need = {s: list(v) for s, v in template.items()}
    queue = deque(win)
    while queue and (stop_at is None or stop_at not in win):
        t = queue.popleft()
        for code in preds.get(t, ()):
            s, m = divmod(code, width)
            left = need[s]
            left[m] -= 1
            if left[m] == 0 and s not in win:
                win.add(s)
                queue.append(s)
    return win


def _moves_graph(
    space: StateSpace, role: int
) -> tuple[dict[int, array[int]], dict[int, list[int]], int]:
    """For the attractor of ``role``: each state's predecessors, each with the role's
    move index that leads there, coded ``s * width + m`` (8 bytes an edge); for each
    expanded state the number of successors under each of the role's moves; and
    ``width``. Computed once per graph and role."""
    key = (space.expanded, space.discovered)
    cached = space.cache.get(("moves", role))
    if cached is not None and cached[0] == key:
        return cached[1]
    width = max((c[role] for c in space.counts.values()), default=1) or 1
    template: dict[int, list[int]] = {}
    preds: dict[int, array[int]] = {}
    for s, succs in space.succ.items():
        if not succs:
            continue
        counts = space.counts[s]
        stride = 1
        for c in counts[role + 1 :]:
            stride *= c
        mine = counts[role]
        template[s] = [len(succs) // mine] * mine
        base = s * width
        for j, t in enumerate(succs):
            code = base + (j // stride) % mine
            into = preds.get(t)
            if into is None:
                preds[t] = array("q", (code,))
            else:
                into.append(code)
    result = (preds, template, width)
    space.cache[("moves", role)] = (key, result)
    return result


@dataclass(frozen=True)
class Bounds:
    """What the explored graph says about a role's strong winnability: ``proved`` if it
    wins even when every unexplored state is lost, ``refuted`` if it loses even when
    every unexplored state is won (both exact when the graph is complete)."""

    proved: bool
    refuted: bool


def strong_winnability_bounds(space: StateSpace, role: int) -> Bounds:
    proved = 0 in attractor(space, role, unexplored_wins=False, stop_at=0)
    if space.exhaustive or proved:
        result = Bounds(proved, not proved)
    else:
        result = Bounds(proved, 0 not in attractor(space, role, True, stop_at=0))
    space.cache.pop(("moves", role), None)  # as large as the graph; asked once a role
    return result


def depth_range(space: StateSpace) -> tuple[int, int | None] | None:
    """(shortest, longest) number of steps from the initial state to a terminal state in
    a complete graph; longest is None when the graph has a cycle; None without terminal
    states."""
    if not space.terminal:
        return None
    dist = {0: 0}
    queue = deque([0])
    shortest = None
    while queue:
        s = queue.popleft()
        if s in space.terminal:
            shortest = dist[s]
            break
        for t in space.succ.get(s, ()):
            if t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    if shortest is None:
        return None
    if find_cycle(space) is not None:
        return shortest, None
    longest: dict[int, int] = {}
    for s in _postorder(space):
        if s in space.terminal:
            longest[s] = 0
        else:
            below = [longest[t] for t in space.succ.get(s, ()) if longest.get(t, -1) >= 0]
            longest[s] = 1 + max(below) if below else -1
    return shortest, longest.get(0, shortest)


def _postorder(space: StateSpace) -> list[int]:
    """States reachable from 0, each after all its successors (the graph is acyclic)."""
    order: list[int] = []
    seen = {0}
    stack = [(0, iter(space.succ.get(0, ())))]
    while stack:
        s, it = stack[-1]
        for t in it:
            if t not in seen:
                seen.add(t)
                stack.append((t, iter(space.succ.get(t, ()))))
                break
        else:
            stack.pop()
            order.append(s)
    return order


def branching(space: StateSpace) -> dict[str, float] | None:
    """Joint moves per expanded non-terminal state: min, mean and max."""
    sizes = [len(v) for v in space.succ.values() if v]
    if not sizes:
        return None
    return {"min": min(sizes), "mean": round(sum(sizes) / len(sizes), 2), "max": max(sizes)}


#: The most sets of states the search for a winning sequence visits, and the most states
#: they hold in all: past either it stops, undecided (a game where the others' moves
#: spread the sets wide, chess, would otherwise fill the memory).
MAX_SEQUENCE_SETS = 20_000
MAX_SEQUENCE_STATES = 400_000


@dataclass(frozen=True)
class SequenceVerdict:
    """Strong winnability of one role by a sequence of its own moves: ``proved`` with the
    shortest such ``moves`` (KIF), ``refuted`` (no sequence wins), or neither (undecided:
    ``why`` says what stopped the search)."""

    proved: bool
    refuted: bool
    moves: tuple[str, ...] = ()
    why: str = ""


def winning_sequence(
    space: StateSpace,
    role: int,
    moves_of: Callable[[int], Sequence[str]],
    passed: Callable[[], bool] = lambda: False,
    max_sets: int = MAX_SEQUENCE_SETS,
    max_states: int = MAX_SEQUENCE_STATES,
) -> SequenceVerdict:
    """Whether one sequence of ``role``'s moves, fixed in advance, reaches a terminal
    state where its goal is 100 whatever the others do: each move legal in every state
    the others' moves may have led to, and every match it allows ending so.

    Breadth-first over the sets of states a prefix of the sequence may lead to (so the
    first sequence found is a shortest); a set of states met before is not searched
    again, so the search ends on any finite graph. ``moves_of(s)`` is ``role``'s legal
    moves in state ``s``, sorted as the joint moves are numbered (``Explorer.legal``).
    A set holding a state the search did not expand, the deadline (``passed``) or the
    caps leave the verdict undecided unless a sequence was found."""
    start: frozenset[int] = frozenset({0})
    parent: dict[frozenset[int], tuple[frozenset[int], str] | None] = {start: None}
    queue = deque([start])
    held = 1
    unexplored = False
    while queue:
        if passed():
            return SequenceVerdict(False, False, why="the time budget")
        if len(parent) > max_sets or held > max_states:
            return SequenceVerdict(False, False, why=f"its cap ({max_sets:,} sets of states)")
        states = queue.popleft()
        if any(s not in space.terminal and s not in space.counts for s in states):
            unexplored = True  # a state the graph search did not expand
            continue
        if any(space.terminal[s][role] != [WIN] for s in states if s in space.terminal):
            continue  # some match it allows ends without the win
        live = [s for s in states if s not in space.terminal]
        if not live:
            return SequenceVerdict(True, False, _sequence(parent, states))
        common: set[str] | None = None
        for k, s in enumerate(live):
            if k % 64 == 63 and passed():  # each state may ask Prolog for its moves
                return SequenceVerdict(False, False, why="the time budget")
            legal = set(moves_of(s))
            common = legal if common is None else common & legal
            if not common:
                break
        for move in sorted(common or ()):
            after = frozenset(t for s in live for t in _successors(space, s, role, moves_of, move))
            if after not in parent:
                parent[after] = (states, move)
                held += len(after)
                queue.append(after)
    if unexplored:
        return SequenceVerdict(False, False, why="states the search did not expand")
    return SequenceVerdict(False, True)


def _successors(
    space: StateSpace, state: int, role: int, moves_of: Callable[[int], Sequence[str]], move: str
) -> list[int]:
    """The states ``state`` leads to when ``role`` plays ``move``, whatever the others
    play."""
    index = list(moves_of(state)).index(move)
    counts = space.counts[state]
    stride = 1
    for c in counts[role + 1 :]:
        stride *= c
    return [t for j, t in enumerate(space.succ[state]) if (j // stride) % counts[role] == index]


def _sequence(
    parent: dict[frozenset[int], tuple[frozenset[int], str] | None], end: frozenset[int]
) -> tuple[str, ...]:
    moves: list[str] = []
    step = parent[end]
    while step is not None:
        before, move = step
        moves.append(move)
        step = parent[before]
    return tuple(reversed(moves))
