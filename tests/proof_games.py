"""Small games made from a seed, for testing that every proof told to a library is sound.

Three families, each with the patterns a proof must not misread drawn at random:

- **counters**: a counter ``step`` that a ``terminal`` rule reads, beside a second one
  ``t`` that surely ends the game; drawn: the counter's initial fluent with another arity
  (``(step 0 go)``), a rule that advances it only on a move, a successor table that
  branches, the end written ``(terminal)`` (no terminal rule: a relation of its own), the
  counter advanced through a variable relation (``(next ?g)``);
- **boards**: roles mark the cells of a small board, in turn or all at once; drawn: a pass
  (plays without end), an erase move (cells that empty again), marks read through
  ``(true ?f)`` (bound before or after it is read) or an ``or``, cells as function terms
  (``(cell (at 1 2) a)``), a fluent of the same name and another arity, a fluent read
  through ``(does ?r ?m)``, cells no move can mark, ``or`` and ``distinct`` in the legal
  rule, marks that fall to the lowest free cell of a column, ``full`` beside ``(full)``,
  and a winner by a row (by a recursive view, or not);
- **pawns**: pawns on one file step towards the far end; drawn: a move back (plays
  without end), and which side moves.

Goals are drawn too: a winner takes 100 (the other 0, both 50 without one), or both
roles get 100 for a win of theirs (ends summing to 200, 100 or 0), or fixed values.
Every game is small enough for all its reachable states to be searched.
"""

from __future__ import annotations

import random

FAMILIES = ("counter", "board", "pawns")


def generated_game(seed: int) -> str:
    """The KIF text of the game of ``seed`` (the same text for the same seed)."""
    rng = random.Random(seed)
    family = FAMILIES[seed % len(FAMILIES)]
    make = {"counter": _counter, "board": _board, "pawns": _pawns}[family]
    return f";; generated: {family}, seed {seed}\n" + make(rng)


def _goals(rng: random.Random, roles: list[str], win: str | None) -> str:
    """Goal rules over the view ``(win ?r)`` (None: fixed goals)."""
    if win is None or len(roles) == 1:
        values = rng.choice([(100, 0), (50, 50), (100, 100)])
        return " ".join(f"(goal {r} {v})" for r, v in zip(roles, values, strict=False))
    a, b = roles
    scheme = rng.choice(["winner", "each", "winner"])
    opp = f"(opp {a} {b}) (opp {b} {a})"
    if scheme == "winner":  # constant 100 when at most one role wins
        return (
            f"{opp} (<= (goal ?r 100) (win ?r)) (<= (goal ?r 0) (opp ?r ?o) (win ?o))"
            " (<= anywin (win ?r)) (<= (goal ?r 50) (role ?r) (not anywin))"
        )
    # each role 100 for its own win, else 0: ends sum to 0, 100 or 200
    return "(<= (goal ?r 100) (win ?r)) (<= (goal ?r 0) (role ?r) (not (win ?r)))"


def _counter(rng: random.Random) -> str:
    n = rng.randint(1, 4)
    k = rng.randint(1, 6)  # the second counter always ends the game
    roles = ["r"] if rng.random() < 0.5 else ["r", "s"]
    out = [" ".join(f"(role {r})" for r in roles)]
    out.append(" ".join(f"(succ {i} {i + 1})" for i in range(max(n, k) + 2)))
    out.append(rng.choice(["(init (step 0))", "(init (step 0))", "(init (step 0 go))",
                           "(init (STEP 0))"]))
    out.append("(init (t 0)) (<= (next (t ?y)) (true (t ?x)) (succ ?x ?y))")
    advance = rng.choice(["plain", "plain", "guarded", "variable", "two"])
    if advance == "plain":
        out.append("(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))")
    elif advance == "guarded":  # only when r goes: a counter that can stall
        out.append("(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y) (does r go))")
        out.append("(<= (next (step ?x)) (true (step ?x)) (does r wait))")
    elif advance == "variable":  # advanced through (next ?g): no shape a proof reads
        out.append("(<= (bump (step ?x) (step ?y)) (succ ?x ?y))")
        out.append("(<= (next ?g) (true ?f) (bump ?f ?g))")
    else:  # the counter of two arguments advances, the one of one argument never runs
        out.append("(<= (next (step ?y go)) (true (step ?x go)) (succ ?x ?y))")
        out.append("(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))")
    if rng.random() < 0.3:
        out.append("(succ 1 3)")  # a branch: the counter may skip a value
    end = rng.choice(["terminal", "terminal", "(terminal)"])
    form = rng.choice(["(step {n})", "(step {n})", "(step {n} go)"]).format(n=n)
    out.append(f"(<= {end} (true {form}))")
    out.append(f"(<= terminal (true (t {k})))")
    out.append("(legal r go) (legal r wait)")
    out += [f"(legal {r} noop)" for r in roles[1:]]
    out.append("(<= (next moved) (does r go))")
    out.append("(<= (win r) (true moved))")
    out.append(_goals(rng, roles, "win" if len(roles) == 2 and rng.random() < 0.5 else None))
    return "\n".join(out) + "\n"


def _board(rng: random.Random) -> str:
    w, h = rng.choice([(2, 1), (3, 1), (2, 2), (4, 1), (3, 2)])
    roles = ["a"] if rng.random() < 0.25 else ["a", "b"]
    turns = len(roles) == 2 and rng.random() < 0.75
    nested = rng.random() < 0.25  # cells as function terms: (cell (at 1 2) a)

    def cell(x: str, y: str, r: str) -> str:
        return f"(cell (at {x} {y}) {r})" if nested else f"(cell {x} {y} {r})"

    out = [" ".join(f"(role {r})" for r in roles)]
    out.append(" ".join(f"(col {x})" for x in range(1, w + 1)))
    out.append(" ".join(f"(row {y})" for y in range(1, h + 1)))
    out.append(" ".join(f"(below {y} {y + 1})" for y in range(1, h)))
    out.append(" ".join(f"(right {x} {x + 1})" for x in range(1, w)))
    blocked = rng.random() < 0.25
    cells = [(x, y) for x in range(1, w + 1) for y in range(1, h + 1)]
    ok = cells[:-1] if blocked else cells  # the last cell: no move marks it
    out.append(" ".join(f"(ok {x} {y})" for x, y in ok))
    control = "(true (control ?r))" if turns else "(role ?r)"
    if turns:
        out.append(f"(init (control {roles[0]}))")
        out.append(f"(<= (next (control {roles[1]})) (true (control {roles[0]})))")
        out.append(f"(<= (next (control {roles[0]})) (true (control {roles[1]})))")
        out.append("(<= (legal ?r noop) (role ?r) (not (true (control ?r))))")
    read = rng.choice(["plain", "plain", "plain", "any-first", "any-bound", "or"])
    if read == "plain":
        out.append(f"(<= (taken ?x ?y) (true {cell('?x', '?y', '?p')}))")
    elif read == "or":
        out.append(f"(<= (taken ?x ?y) (or (true {cell('?x', '?y', 'a')})"
                   f" (true {cell('?x', '?y', 'b')})))")
    else:
        out.append(f"(<= (cellof ?x ?y {cell('?x', '?y', '?p')}) (col ?x) (row ?y) (role ?p))")
        body = "(true ?f) (cellof ?x ?y ?f)" if read == "any-first" else (
            "(cellof ?x ?y ?f) (true ?f)")
        out.append(f"(<= (taken ?x ?y) {body})")
    gravity = h > 1 and rng.random() < 0.4
    free = "(not (taken ?x ?y))" + (" (supported ?x ?y)" if gravity else "")
    if gravity:
        out.append("(<= (supported ?x 1) (col ?x))")
        out.append("(<= (supported ?x ?y) (below ?z ?y) (taken ?x ?z))")
    where = rng.choice(["(ok ?x ?y)", "(ok ?x ?y)", "(or (ok ?x ?y) (spare ?x ?y))",
                        "(ok ?x ?y) (distinct ?x 0)"])
    out.append(f"(<= (legal ?r (mark ?x ?y)) {control} {where} {free})")
    out.append(f"(<= (next {cell('?x', '?y', '?r')}) (does ?r (mark ?x ?y)))")
    frame = rng.choice(["keep", "keep", "keep", "erase"])
    if frame == "keep":
        out.append(f"(<= (next {cell('?x', '?y', '?p')}) (true {cell('?x', '?y', '?p')}))")
    else:  # a mark can be wiped out: cells empty again
        out.append(f"(<= (legal ?r (erase ?x ?y)) {control} (true {cell('?x', '?y', '?p')}))")
        out.append(f"(<= (next {cell('?x', '?y', '?p')}) (true {cell('?x', '?y', '?p')})"
                   " (not (erased ?x ?y)))")
        out.append("(<= (erased ?x ?y) (does ?r (erase ?x ?y)))")
    if rng.random() < 0.2:  # a pass: plays may go on for ever
        out.append(f"(<= (legal ?r pass) {control})")
    if rng.random() < 0.3:  # the same name with another arity: the last mark's cell
        out.append("(<= (next (cell ?x ?y)) (does ?r (mark ?x ?y)))")
    if rng.random() < 0.2:  # what was played last, read through (does ?r ?m)
        out.append("(<= (next (last ?m)) (does ?r ?m))")
    out.append("(<= open (ok ?x ?y) (not (taken ?x ?y)))")
    if rng.random() < 0.3:  # a proposition and a relation of no arguments: two relations
        out.append("(<= full (not open)) (<= (full) open) (<= terminal full)")
    else:
        out.append("(<= terminal (not open))")
    win = None
    if len(roles) == 2 and rng.random() < 0.7:
        win = "win"
        if rng.random() < 0.3:  # a row of marks, by a recursive view
            out.append(f"(<= (run ?r ?x) (role ?r) (true {cell('?x', '1', '?r')}))")
            out.append(f"(<= (run ?r ?z) (run ?r ?x) (right ?x ?z) (true {cell('?z', '1', '?r')}))")
            out.append("(<= (win ?r) (run ?r 2))")
        else:
            out.append(f"(<= (win ?r) (role ?r) (true {cell('1', '1', '?r')})"
                       f" (true {cell('2', '1', '?r')}))")
        out.append("(<= terminal (win ?r))")
    out.append(_goals(rng, roles, win))
    return "\n".join(out) + "\n"


def _pawns(rng: random.Random) -> str:
    h = rng.randint(3, 5)
    out = ["(role white) (role black)"]
    out.append(" ".join(f"(ahead {y} {y + 1})" for y in range(1, h)))
    out.append("(init (control white))")
    out.append("(<= (next (control black)) (true (control white)))")
    out.append("(<= (next (control white)) (true (control black)))")
    out.append("(init (pawn white 1)) (init (pawn black 2))")
    out.append("(<= (legal ?r noop) (role ?r) (not (true (control ?r))))")
    out.append("(<= (legal ?r (step ?y ?z)) (true (control ?r)) (true (pawn ?r ?y)) (ahead ?y ?z))")
    if rng.random() < 0.3:  # a way back: plays may go on for ever
        out.append("(<= (legal ?r (step ?y ?z)) (true (control ?r)) (true (pawn ?r ?y))"
                   " (ahead ?z ?y))")
    if rng.random() < 0.5:  # one side may wait: it never advances
        out.append("(<= (legal black wait) (true (control black)))")
    out.append("(<= (next (pawn ?r ?z)) (does ?r (step ?y ?z)))")
    out.append("(<= (next (pawn ?p ?y)) (true (pawn ?p ?y)) (not (moves ?p)))")
    out.append("(<= (moves ?r) (does ?r (step ?y ?z)))")
    out.append(f"(<= (win ?r) (true (pawn ?r {h})))")
    out.append("(<= terminal (win ?r))")
    out.append(_goals(rng, ["white", "black"], "win"))
    return "\n".join(out) + "\n"
