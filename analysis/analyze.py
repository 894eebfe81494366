"""``analyze``: the well-formedness verdicts of a game, as a JSON-ready report.

Exhaustive breadth-first search (``statespace``) while the reachable graph fits the
budget, then the checks of ``wellformed``; beyond the budget, the explored part can still
refute a property or prove weak winnability, random matches can too, and what they
suggest is reported, never taken as a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge import StateMachine

from . import wellformed as wf
from .definitions import DEFINITIONS
from .statespace import Explorer
from .statespace import StateSpace
from .statespace import Walk
from .statespace import random_walks

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"


@dataclass(frozen=True)
class Budget:
    max_states: int = 200_000
    seconds: float = 60.0
    walks: int = 200
    walk_depth: int = 2_000
    seed: int = 0


def analyze(sm: StateMachine, budget: Budget = Budget(), progress: bool | None = None) -> dict:
    """The report (see ``gdl2pl analyze --json``) for a loaded game. The search gets
    three quarters of ``budget.seconds``; random matches, played only when it is not
    exhaustive, what is left (at least one batch of ten)."""
    start = time.monotonic()
    with Explorer(sm) as ex:
        space = ex.run(budget.max_states, budget.seconds * 0.75, progress=progress)
        walks: list[Walk] = []
        batch = 0
        while not space.exhaustive and len(walks) < budget.walks:
            n = min(10, budget.walks - len(walks))
            walks += random_walks(sm, n, budget.walk_depth, budget.seed + batch)
            batch += 1
            if time.monotonic() - start > budget.seconds:
                break
        return _report(sm, ex, space, walks, budget)


def _report(
    sm: StateMachine, ex: Explorer, space: StateSpace, walks: list[Walk], budget: Budget
) -> dict:
    done = space.exhaustive
    roles = list(space.roles)
    props: dict[str, Any] = {}

    def steps(path: list[tuple[int, int]]) -> list[list[str]]:
        return [ex.joint_move(s, j) for s, j in path]

    # termination
    cycle = wf.find_cycle(space)
    cycle_walk = next((w for w in walks if w.kind == "cycle"), None)
    if cycle is not None:
        props["termination"] = _verdict(REFUTED, steps(cycle), "a cycle of non-terminal states")
    elif cycle_walk is not None:
        props["termination"] = _verdict(
            REFUTED, cycle_walk.moves, "a random match came back to an earlier state"
        )
    elif done:
        props["termination"] = _verdict(PROVED, None, "no cycle in the reachable graph")
    else:
        props["termination"] = _verdict(UNKNOWN, None, _walk_note(walks, budget))

    # playability
    stuck = wf.stuck_states(space)
    stuck_walk = next((w for w in walks if w.kind == "stuck"), None)
    if stuck:
        s = stuck[0]
        who = [roles[i] for i, c in enumerate(space.counts[s]) if c == 0]
        props["playability"] = _verdict(
            REFUTED, ex.path_to(s), f"no legal move for {', '.join(who)}"
        )
    elif stuck_walk is not None:
        props["playability"] = _verdict(
            REFUTED, stuck_walk.moves, f"no legal move for {roles[stuck_walk.detail]}"
        )
    elif done:
        props["playability"] = _verdict(PROVED, None, "every role can move in every state")
    else:
        props["playability"] = _verdict(UNKNOWN, None, _walk_note(walks, budget))

    # monotonicity
    mono = wf.monotonicity_problem(space, roles)
    if mono is not None:
        path = ex.path_to(mono.state)
        if mono.step is not None:
            path.append(ex.joint_move(mono.state, mono.step))
        props["monotonicity"] = _verdict(REFUTED, path, mono.detail)
    elif done:
        props["monotonicity"] = _verdict(
            PROVED, None, "one goal value per role in every state, never decreasing"
        )
    else:
        props["monotonicity"] = _verdict(UNKNOWN, None, _walk_note(walks, budget))

    # goal definition
    bad = wf.bad_goal_states(space)
    bad_walk = next(
        (w for w in walks if w.kind == "terminal" and not all(map(wf.good_goal, w.detail))),
        None,
    )
    if bad:
        s = bad[0]
        props["goal_definition"] = _verdict(
            REFUTED, ex.path_to(s), _goal_problem(roles, space.terminal[s])
        )
    elif bad_walk is not None:
        props["goal_definition"] = _verdict(
            REFUTED, bad_walk.moves, _goal_problem(roles, bad_walk.detail)
        )
    elif done:
        props["goal_definition"] = _verdict(PROVED, None, "one goal value per role")
    else:
        props["goal_definition"] = _verdict(UNKNOWN, None, _walk_note(walks, budget))

    # weak winnability
    weak: dict[str, str] = {}
    witnesses: dict[str, list[list[str]]] = {}
    for i, role in enumerate(roles):
        wins = wf.winning_terminals(space, i)
        walk = next((w for w in walks if w.kind == "terminal" and w.detail[i] == [wf.WIN]), None)
        if wins:
            weak[role], witnesses[role] = PROVED, ex.path_to(wins[0])
        elif walk is not None:
            weak[role], witnesses[role] = PROVED, walk.moves
        else:
            weak[role] = REFUTED if done else UNKNOWN
    props["weak_winnability"] = {
        "verdict": _combine(weak.values()),
        "roles": weak,
        "witnesses": witnesses,
    }

    # strong winnability
    strong: dict[str, str] = {}
    for i, role in enumerate(roles):
        b = wf.strong_winnability_bounds(space, i)
        strong[role] = PROVED if b.proved else REFUTED if b.refuted else UNKNOWN
    props["strong_winnability"] = {"verdict": _some(strong.values()), "roles": strong}

    # well-formedness: the four properties of the definition, all of them
    parts = ["termination", "monotonicity", "playability", "weak_winnability"]
    verdicts = {name: props[name]["verdict"] for name in parts}
    nots = {
        "termination": "does not terminate",
        "monotonicity": "not monotonic",
        "playability": "not playable",
        "weak_winnability": "not weakly winnable",
    }
    failed = [nots[name] for name, v in verdicts.items() if v == REFUTED]
    open_ = [name.replace("_", " ") for name, v in verdicts.items() if v == UNKNOWN]
    well = _combine(verdicts.values())
    note = (
        "terminates, monotonic, playable and weakly winnable"
        if well == PROVED
        else ", ".join(failed)
        if failed
        else f"not known: {', '.join(open_)}"
    )
    props["well_formed"] = _verdict(well, None, note)

    for name, p in props.items():
        p["definition"] = DEFINITIONS[name]
    depth = wf.depth_range(space) if done else None
    report: dict[str, Any] = {
        "game": sm.name,
        "roles": roles,
        "exhaustive": done,
        "reachable_states": space.discovered if done else None,
        "terminal_states": len(space.terminal) if done else None,
        "explored": {
            "expanded_states": space.expanded,
            "discovered_states": space.discovered,
            "max_states": budget.max_states,
            "seconds": round(space.seconds, 3),
        },
        "depth": {"min": depth[0], "max": depth[1]} if depth else None,
        "branching": wf.branching(space),
        "properties": props,
    }
    if walks:
        report["random_matches"] = _walk_summary(walks, roles, budget)
    return report


def _verdict(verdict: str, counterexample: list[list[str]] | None, note: str) -> dict:
    return {"verdict": verdict, "counterexample": counterexample, "note": note}


def _combine(verdicts: Any) -> str:
    """For every: refuted if one is, proved if all are."""
    vs = list(verdicts)
    if REFUTED in vs:
        return REFUTED
    if vs and all(v == PROVED for v in vs):
        return PROVED
    return UNKNOWN


def _some(verdicts: Any) -> str:
    """For some: proved if one is, refuted if all are."""
    vs = list(verdicts)
    if PROVED in vs:
        return PROVED
    if vs and all(v == REFUTED for v in vs):
        return REFUTED
    return UNKNOWN


def _goal_problem(roles: list[str], goals: list[list[str]]) -> str:
    parts = []
    for role, vs in zip(roles, goals, strict=True):
        if not wf.good_goal(vs):
            parts.append(f"{role} has " + (f"goal values {', '.join(vs)}" if vs else "no goal"))
    return "; ".join(parts)


def _walk_note(walks: list[Walk], budget: Budget) -> str:
    if not walks:
        return "the search stopped at its budget"
    s = _walk_summary(walks, [], budget)
    return (
        f"search stopped at its budget; no counterexample in what was explored nor in "
        f"{s['matches']} random matches ({_walk_counts(s)}), which proves nothing"
    )


def _walk_counts(s: dict) -> str:
    ended = f"{s['terminal']} of {s['matches']} ended"
    if s["terminal"]:
        ended += f" after {s['length_min']}..{s['length_max']} steps"
    return (
        f"{ended}, {s['long']} ran past {s['max_depth']} steps, {s['cycle']} came back to "
        f"an earlier state, {s['stuck']} got stuck"
    )


def _walk_summary(walks: list[Walk], roles: list[str], budget: Budget) -> dict:
    ended = [w for w in walks if w.kind == "terminal"]
    lengths = [len(w.moves) for w in ended]
    out: dict[str, Any] = {
        "matches": len(walks),
        "terminal": len(ended),
        "stuck": sum(w.kind == "stuck" for w in walks),
        "cycle": sum(w.kind == "cycle" for w in walks),
        "long": sum(w.kind == "long" for w in walks),
        "max_depth": budget.walk_depth,
        "length_min": min(lengths) if lengths else None,
        "length_max": max(lengths) if lengths else None,
    }
    if roles:
        out["wins"] = {r: sum(w.detail[i] == [wf.WIN] for w in ended) for i, r in enumerate(roles)}
    return out


def exit_status(report: dict) -> int:
    """1 if the game breaks what GGP asks of every game, else 0: termination,
    playability, goal definition or weak winnability refuted, or strong winnability
    refuted in a one-player game (there it is weak winnability). Monotonicity, part of
    the notes' well-formedness, is reported but not asked: the notes expect most games
    not to have it (goals usually fall for the loser)."""
    props = report["properties"]
    required = ["termination", "playability", "goal_definition", "weak_winnability"]
    if len(report["roles"]) == 1:
        required.append("strong_winnability")
    return 1 if any(props[name]["verdict"] == REFUTED for name in required) else 0


def format_report(report: dict) -> str:
    """The report as text, one property a line, counterexamples as KIF joint moves."""
    lines = [f"game: {report['game']}  roles: {' '.join(report['roles'])}"]
    ex = report["explored"]
    if report["exhaustive"]:
        lines.append(
            f"reachable states: {report['reachable_states']} "
            f"({report['terminal_states']} terminal), exhaustive search"
        )
    else:
        lines.append(
            f"search stopped at its budget: {ex['expanded_states']} states expanded, "
            f"{ex['discovered_states']} discovered (not exhaustive)"
        )
    if report["depth"]:
        d = report["depth"]
        longest = d["max"] if d["max"] is not None else "unbounded (cycle)"
        lines.append(f"match length: {d['min']}..{longest} steps")
    if report["branching"]:
        b = report["branching"]
        lines.append(f"joint moves per state: {b['min']}..{b['max']} (mean {b['mean']})")
    if "random_matches" in report:
        lines.append(f"random matches: {_walk_counts(report['random_matches'])}")
    for name, p in report["properties"].items():
        label = name.replace("_", " ")
        if "roles" in p:
            per = ", ".join(f"{r}: {v}" for r, v in p["roles"].items())
            lines.append(f"{label}: {p['verdict']} ({per})")
            for role, moves in p.get("witnesses", {}).items():
                lines.append(f"  witness for {role}: {_moves(moves)}")
        else:
            lines.append(f"{label}: {p['verdict']} -- {p['note']}")
            if p["counterexample"] is not None:
                lines.append(f"  counterexample: {_moves(p['counterexample'])}")
    return "\n".join(lines)


def _moves(moves: list[list[str]]) -> str:
    return " ".join("[" + " ".join(jm) + "]" for jm in moves) if moves else "(initial state)"
