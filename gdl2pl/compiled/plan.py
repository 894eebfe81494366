"""Join plans: the order a rule's body is joined in, and where it is cut into a chain.

A rule's body is joined in an order chosen by selectivity, from the sizes of the relaxed
model (how many facts match a literal's shape, and how many distinct values each of its
variables takes there): a literal whose variables are bound is a test, the smallest
fan-out goes next. For a body of up to ten literals that starts with a generator, the
order of least estimated cost is found by dynamic programming over the subsets of the
body; other bodies take the cheapest greedy order. The order is then cut into
*segments*: before a generator where a variable of the join is needed no more (by the
head or a later literal), the distinct bindings of the variables still needed become
atoms of their own, so that "a cell is unchanged by a move elsewhere" is a chain of joins
of a few thousand rows, not one product of millions (``asp.py`` writes each segment as a
rule).

Literals are the grounder's input data (``ground.py``: ``[tag, args...]``, variables
negative integers); everything here is pure.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: the tags of a positive literal: it binds its variables (``dm``: a demand)
GENERATORS = frozenset({"s", "p", "t", "m", "dm"})

#: The largest body whose order is chosen over all its subsets.
EXACT_UP_TO = 10

INF = float("inf")

Literal = list[Any]


@dataclass(frozen=True)
class Stats:
    """What the relaxed model says of a literal's shape: how many facts match it, and
    per variable of the literal (in ``literal_vars`` order) its distinct values."""

    rows: float
    counts: tuple[int, ...]


#: the statistics of a literal (a generator): given by the grounder
StatsOf = Callable[[Literal], Stats]


@dataclass(frozen=True)
class Segment:
    """One join of a chain: the variables carried in (``carried``), the literals joined
    with them (``steps``), and the variables carried out (``out``; for the last segment
    the head's)."""

    carried: tuple[int, ...]
    steps: tuple[Literal, ...]
    out: tuple[int, ...]


def term_vars(t: Any, out: list[int]) -> None:
    """Append the variables of ``t`` not yet in ``out``, depth first, left to right."""
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, int):
            if x < 0 and x not in out:
                out.append(x)
        else:
            stack.extend(reversed(x[1:]))


def literal_vars(lit: Literal) -> list[int]:
    """The variables of a body literal, in order of first occurrence."""
    out: list[int] = []
    for a in lit[1:]:
        term_vars(a, out)
    return out


def is_generator(lit: Literal) -> bool:
    return lit[0] in GENERATORS


@dataclass
class _Info:
    index: int
    lit: Literal
    gen: bool
    vars: list[int]
    rows: float
    counts: tuple[int, ...]


def plan(body: Sequence[Literal], head_vars: Sequence[int], stats: StatsOf) -> list[Segment]:
    """The segments of ``body`` joined in its cheapest order (see the module doc). A
    demand (``dm``) whose variables other positive literals bind only filters: the rest
    is planned without it, and it is joined as soon as its variables are bound (they are
    the head's: carried to the end)."""
    bound_elsewhere = [
        set(literal_vars(x)) for x in body if x[0] in GENERATORS and x[0] != "dm"
    ]
    others = set().union(*bound_elsewhere)
    filters = [x for x in body if x[0] == "dm" and set(literal_vars(x)) <= others]
    core = [x for x in body if not any(x is f for f in filters)]
    if not filters or not core:
        return _plan(body, head_vars, stats)
    segs = _plan(core, head_vars, stats)
    for f in filters:
        segs = _with_filter(segs, f)
    return segs


def _with_filter(segs: list[Segment], f: Literal) -> list[Segment]:
    """``segs`` with the test ``f`` joined right after the step that binds the last of
    its variables."""
    need = set(literal_vars(f))
    for k, seg in enumerate(segs):
        have = set(seg.carried)
        for j, lit in enumerate(seg.steps):
            have.update(literal_vars(lit))
            if need <= have:
                steps = (*seg.steps[: j + 1], f, *seg.steps[j + 1 :])
                return [*segs[:k], Segment(seg.carried, steps, seg.out), *segs[k + 1 :]]
    last = segs[-1]  # (never reached: the variables are bound by the end)
    return [*segs[:-1], Segment(last.carried, (*last.steps, f), last.out)]


def _plan(body: Sequence[Literal], head_vars: Sequence[int], stats: StatsOf) -> list[Segment]:
    infos = [_info(i, lit, stats) for i, lit in enumerate(body)]
    steps = None
    if infos and len(body) <= EXACT_UP_TO and infos[0].gen:
        # (over all subsets only a body that starts with a generator, as the reasoner's
        # grounder chose: the greedy orders cut the others into the smaller networks)
        steps = _best_order(infos, list(head_vars))
    if steps is None:
        steps = _cheapest_order(infos, list(head_vars))
    return segments([i.lit for i in steps], list(head_vars), lambda lit: is_generator(lit))


def _info(i: int, lit: Literal, stats: StatsOf) -> _Info:
    vs = literal_vars(lit)
    if is_generator(lit):
        s = stats(lit)
        return _Info(i, lit, True, vs, s.rows, s.counts)
    return _Info(i, lit, False, vs, 1.0, ())


# -- the best order, over all subsets -------------------------------------------------


def _best_order(infos: list[_Info], head_vars: list[int]) -> list[_Info] | None:
    """The order of least estimated cost over all orders: a subset's cost is the cheapest
    way to join it literal by literal, each prefix costing the rows it carries on (the
    join's size, or the product of the domains of the variables still needed, if fewer).
    A test counts only once its variables are bound. None for a body without a
    generator."""
    if not any(i.gen for i in infos):
        return None
    n = len(infos)
    full = (1 << n) - 1
    cost = [INF] * (full + 1)
    last = [-1] * (full + 1)
    cost[0] = 0.0
    for s in range(1, full + 1):
        if not _valid_subset(s, infos):
            continue
        rows = _subset_rows(s, infos, head_vars)
        best, best_b = INF, -1
        for info in infos:
            b = info.index
            if not s & (1 << b):
                continue
            c0 = cost[s & ~(1 << b)]
            if c0 < INF:
                c = c0 + rows
                if c < best:
                    best, best_b = c, b
        cost[s], last[s] = best, best_b
    if not cost[full] < INF:
        return None
    order: list[_Info] = []
    s = full
    while s:
        b = last[s]
        order.append(infos[b])
        s &= ~(1 << b)
    order.reverse()
    return order


def _valid_subset(s: int, infos: list[_Info]) -> bool:
    """Every test of the subset has its variables bound by its generators."""
    bound: set[int] = set()
    for i in infos:
        if i.gen and s & (1 << i.index):
            bound.update(i.vars)
    return all(
        set(i.vars) <= bound for i in infos if not i.gen and s & (1 << i.index)
    )


def _subset_rows(s: int, infos: list[_Info], head_vars: list[int]) -> float:
    join = 1.0
    doms: dict[int, int] = {}
    needed = set(head_vars)
    for i in infos:
        if s & (1 << i.index):
            join = _join_rows(i, join, doms)
        else:
            needed.update(i.vars)
    product = 1.0
    for v, d in doms.items():
        if v in needed:
            product *= d
    return min(join, product)


def _join_rows(i: _Info, join: float, doms: dict[int, int]) -> float:
    """The join's rows with ``i`` added; ``doms``: per variable its domain (the least
    count seen), updated. A variable the join already has divides the rows by the larger
    domain (the usual estimate of an equi-join)."""
    if i.gen:
        j = join * i.rows
        for v, c in zip(i.vars, i.counts, strict=True):
            if v in doms:
                c0 = doms[v]
                j /= max(1, c, c0)
                doms[v] = min(c, c0)
            else:
                doms[v] = c
        return max(j, 1.0e-6)
    if i.lit[0] == "ns":
        return join * 0.5
    return join


# -- the cheapest greedy order ----------------------------------------------------------


def _cheapest_order(infos: list[_Info], head_vars: list[int]) -> list[_Info]:
    """The order of least estimated cost among those that start with one generator and
    go on greedily."""
    starts = [i for i in infos if i.gen]
    if not starts:
        return _greedy(infos, [])
    best: tuple[float, list[_Info]] | None = None
    for s in starts:
        rest = [i for i in infos if i is not s]
        order = [s, *_greedy(rest, list(s.vars))]
        c = _plan_cost(order, head_vars)
        if best is None or c < best[0]:
            best = (c, order)
    assert best is not None
    return best[1]


def _greedy(infos: list[_Info], bound: list[int]) -> list[_Info]:
    """Greedy: a test whose variables are bound, else the generator sharing a variable
    with those bound so far of the smallest estimated fan-out, else any generator; a test
    that can never be placed comes last."""
    rest = list(infos)
    bound_set = set(bound)
    out: list[_Info] = []
    while rest:
        best: tuple[float, int] | None = None
        for i in rest:
            c = _cost(i, bound_set)
            if c is not None and (best is None or (c, i.index) < best):
                best = (c, i.index)
        pick = rest[0] if best is None else next(i for i in rest if i.index == best[1])
        rest.remove(pick)
        out.append(pick)
        bound_set.update(pick.vars)
    return out


def _cost(i: _Info, bound: set[int]) -> float | None:
    free = [v for v in i.vars if v not in bound]
    if i.gen:
        if not free:
            return 0.5  # a lookup: a test
        e = _estimate(i, bound)
        if bound and len(free) == len(i.vars):
            return 1.0e15 + e  # not connected: only if nothing else is
        return 1 + max(e, 1)
    return 0.0 if not free else None


def _estimate(i: _Info, bound: set[int]) -> float:
    """Estimated rows per binding: the facts matching the literal's shape, divided by the
    distinct values of each of its variables that is bound."""
    e = i.rows
    for v, c in zip(i.vars, i.counts, strict=True):
        if c > 0 and v in bound:
            e /= c
    return e


def _plan_cost(order: list[_Info], head_vars: list[int]) -> float:
    """The estimated cost of an order: the rows of every step's join, where the rows
    carried on after a cut are at most the product of the live variables' domains."""
    bound: set[int] = set()
    rows, cost = 1.0, 0.0
    for k, i in enumerate(order):
        if i.gen:
            rows1 = rows * max(_estimate(i, bound), 1.0e-3)
        elif i.lit[0] == "ns":
            rows1 = rows * 0.5
        else:
            rows1 = rows
        cost += rows1
        bound.update(i.vars)
        later = order[k + 1 :]
        if later:
            needed = set(head_vars)
            for j in later:
                needed.update(j.vars)
            product = 1.0
            for v in bound & needed:
                ds = [
                    c
                    for j in (i, *later)
                    if j.gen
                    for w, c in zip(j.vars, j.counts, strict=True)
                    if w == v
                ]
                product *= min(ds) if ds else 1.0e6
            rows = min(rows1, product)
        else:
            rows = rows1
    return cost


# -- segments ---------------------------------------------------------------------------


def segments(
    steps: Sequence[Literal],
    head_vars: Sequence[int],
    generator: Callable[[Literal], bool] = is_generator,
    dead: int = 1,
) -> list[Segment]:
    """Cut ``steps`` before a generator where ``dead`` carried variables or more are
    needed no more (a test is joined before the cut): the distinct bindings of the rest
    go on from there. A test is first moved to just after the generator that binds the
    last of its variables (a rule as written may test a variable before its binder: a
    segment must not carry a variable none of its generators binds)."""
    steps = tests_when_bound(steps, generator)
    out: list[Segment] = []
    carried: list[int] = []
    acc: list[Literal] = []
    for k, lit in enumerate(steps):
        acc.append(lit)
        later = steps[k + 1 :]
        if not later or not generator(later[0]):
            continue
        have = list(carried)
        for x in acc:
            for a in x[1:]:
                term_vars(a, have)
        needed: list[int] = list(head_vars)
        for x in later:
            for a in x[1:]:
                term_vars(a, needed)
        live = [v for v in have if v in needed]
        if len(live) <= len(have) - dead:
            out.append(Segment(tuple(carried), tuple(acc), tuple(live)))
            carried, acc = live, []
    out.append(Segment(tuple(carried), tuple(acc), tuple(head_vars)))
    return out


def tests_when_bound(
    steps: Sequence[Literal], generator: Callable[[Literal], bool] = is_generator
) -> list[Literal]:
    """``steps`` with each test (not a generator) right after the generator that binds
    the last of its variables, the rest in their order; a test whose variables no
    generator binds comes last, where the grounder refuses it as unsafe."""
    out: list[Literal] = []
    waiting: list[Literal] = []
    bound: set[int] = set()
    for lit in steps:
        if not generator(lit):
            (out if set(literal_vars(lit)) <= bound else waiting).append(lit)
            continue
        out.append(lit)
        bound.update(literal_vars(lit))
        ready = [x for x in waiting if set(literal_vars(x)) <= bound]
        out += ready
        waiting = [x for x in waiting if not any(x is r for r in ready)]
    return out + waiting


def estimate(
    segments: Sequence[Segment], stats: StatsOf
) -> tuple[float, float, float]:
    """Estimated (whole-body instances, rows of the chain's segments, atoms carried
    between them), by the same model as the order's cost."""
    infos = {id(lit): _info(0, lit, stats) for seg in segments for lit in seg.steps}
    whole = 1.0
    bound: set[int] = set()
    for seg in segments:
        for lit in seg.steps:
            i = infos[id(lit)]
            if i.gen:
                whole *= max(_estimate(i, bound), 1.0e-3)
            elif lit[0] == "ns":
                whole *= 0.5
            bound.update(i.vars)
    rows, chain, atoms = 1.0, 0.0, 0.0
    bound = set()
    for k, seg in enumerate(segments):
        bound = set(seg.carried)
        for lit in seg.steps:
            i = infos[id(lit)]
            if i.gen:
                rows *= max(_estimate(i, bound), 1.0e-3)
            elif lit[0] == "ns":
                rows *= 0.5
            bound.update(i.vars)
        chain += rows
        if k < len(segments) - 1:
            near = [infos[id(x)] for s in segments[k:] for x in s.steps]
            product = 1.0
            for v in seg.out:
                ds = [
                    c
                    for j in near
                    if j.gen
                    for w, c in zip(j.vars, j.counts, strict=True)
                    if w == v
                ]
                product *= min(ds) if ds else 1.0e6
            rows = min(rows, product)
            atoms += rows
    return whole, chain, atoms
