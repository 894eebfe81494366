"""``analyze``: the well-formedness verdicts of a game, as a JSON-ready report.

First what the rules prove by their shape (``gdl2pl.rule_shapes``): termination from a
step counter, playability from moves legal in every state. Then exhaustive breadth-first
search (``statespace``) while the reachable graph fits the budget (states, seconds,
resident memory), and the checks of ``wellformed``; beyond the budget, the explored part
can still refute a property or prove weak winnability, random matches can too, and what
they suggest is reported, never taken as a proof. Counterexamples and witnesses are
shortest paths in the explored graph, or else the shortest random match that shows them.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gdl2pl.bridge import StateMachine
from gdl2pl.kif import parse_kif_term
from gdl2pl.rule_shapes import always_legal
from gdl2pl.rule_shapes import step_counter_bound
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.written import term_text

from . import wellformed as wf
from .deadline import Deadline
from .definitions import DEFINITIONS
from .statespace import Explorer
from .statespace import StateSpace
from .statespace import Walk
from .statespace import random_walks

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"

#: How the report names a property, where its name alone would not say enough: strong
#: winnability is decided twice, the notes' definition first.
LABELS = {
    "strong_winnability": "strong winnability (a sequence of the player's own moves, the "
    "notes' definition)",
    "strong_winnability_strategy": "strong winnability (a strategy: each move may follow "
    "the others' moves)",
}

#: The default bound on the memory an analysis adds to the process: 512 MiB.
DEFAULT_MAX_MEMORY = 512 * 2**20


@dataclass(frozen=True)
class Budget:
    max_states: int = 200_000
    seconds: float = 60.0
    walks: int = 200
    walk_depth: int = 2_000
    seed: int = 0
    max_memory: int = DEFAULT_MAX_MEMORY  # bytes the analysis may add to the process


#: The part of the time left when the analysis begins that the search may use; the
#: random matches and then the checks share the rest.
SEARCH_SHARE = 0.75
#: The time the checks after the search are expected to need: per edge of the explored
#: graph (an over-estimate of what was measured on breakthroughSmall on a busy two-core
#: machine), and at least a share of the budget (the random matches, which stop that
#: long before the deadline, may overrun it by one step).
CHECK_SECONDS_PER_EDGE = 2e-5
CHECK_SHARE = 0.05


def analyze(
    sm: StateMachine,
    budget: Budget = Budget(),
    progress: bool | None = None,
    description: Description | None = None,
    deadline: Deadline | None = None,
) -> dict:
    """The report (see ``gdl2pl analyze --json``) for a loaded game; ``description``, the
    game's rules, lets the shape of the rules prove what they can first.

    Every phase draws on one deadline: ``deadline``, else ``budget.seconds`` from now
    (a command passes the one it started when it began, so loading counts too). The
    search gets ``SEARCH_SHARE`` of the time left; random matches, played only when it
    is not exhaustive, the rest but what the checks are expected to need; the checks
    end the report, and a check the deadline stops leaves its verdict unknown. Prolog
    reads the clock between states, successors and steps, so a phase ends at most one
    such step past its time. ``report["time"]`` holds the seconds and what was cut."""
    whole = deadline or Deadline.after(budget.seconds)
    with Explorer(sm) as ex:
        shapes = _shapes(description, list(ex.space.roles))
        space = ex.run(
            budget.max_states,
            budget.seconds,
            progress=progress,
            max_memory=budget.max_memory,
            deadline=whole.share(SEARCH_SHARE),
        )
        total = 0 if space.exhaustive else budget.walks
        walks = _walks(sm, budget, total, whole, space, progress)
        return _report(sm, ex, space, walks, budget, shapes, whole, total)


def _walks(
    sm: StateMachine,
    budget: Budget,
    total: int,
    whole: Deadline,
    space: StateSpace,
    progress: bool | None,
) -> list[Walk]:
    """Up to ``total`` random matches, in batches of ten (batch ``b`` seeded ``seed +
    b``, so the matches played do not depend on the clock, only how many), until the
    time the checks need before ``whole`` is all that is left; a match still running
    then is not counted."""
    reserve = max(CHECK_SECONDS_PER_EDGE * space.edge_count, CHECK_SHARE * budget.seconds)
    until = Deadline(whole.end - reserve)
    # A random step is cheaper than expanding a state (one joint move, not all): none
    # is begun when less time is left than the search took a state, which it cannot
    # stop in the middle (amazonsTorus: 4,000 moves a state, over a second).
    state_seconds = space.seconds / max(space.expanded, 1)
    walks: list[Walk] = []
    batch = 0
    with _bar(progress, total, "random matches") as bar:
        while len(walks) < total and until.left() > state_seconds:
            n = min(10, total - len(walks))
            played = random_walks(
                sm, n, budget.walk_depth, budget.seed + batch, seconds=until.left()
            )
            walks += played
            bar.update(len(played))
            batch += 1
            if len(played) < n:
                break  # the time ran out
    return walks


def _bar(progress: bool | None, total: int, what: str) -> Any:
    """A progress bar on stderr, as ``Explorer.run`` draws it (``progress``: see there)."""
    from tqdm import tqdm

    show = (sys.stderr.isatty() if progress is None else progress) and total > 0
    return tqdm(
        total=total,
        desc=what,
        delay=1.0 if progress is None else 0.0,
        disable=not show,
        file=sys.stderr,
    )


def _shapes(d: Description | None, roles: list[str]) -> dict[str, str]:
    """The notes of what the rules prove by their shape: "termination", "playability"."""
    if d is None:
        return {}
    out = {}
    bound = step_counter_bound(d)
    if bound is not None:
        steps, counter = bound
        out["termination"] = (
            f"proved from the rules, before searching: the step counter ({counter} ...) "
            f"advances on every move and the game is terminal when it has advanced "
            f"{steps} times, so every match ends within {steps} steps"
        )
    legal = {r.lower(): m for r, m in always_legal(d).items()}
    if roles and all(r.lower() in legal for r in roles):
        moves = ", ".join(f"{r} {legal[r.lower()]}" for r in roles)
        out["playability"] = (
            f"proved from the rules, before searching: each role has a move that is legal "
            f"in every state ({moves})"
        )
    return out


def _shortest(walks: list[Walk], kind: str, keep: Any = None) -> Walk | None:
    """The shortest random match that ended as ``kind`` (and passes ``keep``)."""
    found = [w for w in walks if w.kind == kind and (keep is None or keep(w))]
    return min(found, key=lambda w: len(w.moves), default=None)


Refutation = tuple[list[list[str]], str] | None


def _decided_by(
    found: Refutation, walked: Refutation, shape: str | None, searched: str | None, unknown: str
) -> dict:
    """A property's verdict: refuted by the counterexample ``found`` in the state space
    or else ``walked`` in a random match ((moves, why)), else proved by the game's
    ``shape`` or by the whole ``searched`` space (why), else unknown (``unknown``: why)."""
    for refutation in (found, walked):
        if refutation is not None:
            return _verdict(REFUTED, *refutation)
    for proof in (shape, searched):
        if proof is not None:
            return _verdict(PROVED, None, proof)
    return _verdict(UNKNOWN, None, unknown)


def _stuck_roles(roles: list[str], space: StateSpace, state: int) -> str:
    """The roles without a legal move in ``state``."""
    return ", ".join(roles[i] for i, c in enumerate(space.counts[state]) if c == 0)


def _mono_path(ex: Explorer, mono: Any) -> list[list[str]]:
    """The moves to a monotonicity problem's state (and its step, if it has one)."""
    path = ex.path_to(mono.state)
    if mono.step is not None:
        path.append(ex.joint_move(mono.state, mono.step))
    return path


def _report(
    sm: StateMachine,
    ex: Explorer,
    space: StateSpace,
    walks: list[Walk],
    budget: Budget,
    shapes: dict[str, str],
    whole: Deadline,
    wanted_walks: int,
) -> dict:
    done = space.exhaustive
    unknown = _walk_note(walks, budget, space, wanted_walks)  # the note of what is open
    cut: list[str] = []  # what the deadline left undone
    if space.stopped_by == "seconds":
        cut.append("the search")
    if len(walks) < wanted_walks:
        cut.append(f"random matches ({len(walks)} of {wanted_walks} played)")
    roles = list(space.roles)
    props: dict[str, Any] = {}

    def steps(path: list[tuple[int, int]]) -> list[list[str]]:
        return [ex.joint_move(s, j) for s, j in path]

    # termination
    cycle = wf.shortest_cycle(space, passed=whole.passed)
    cycle_walk = _shortest(walks, "cycle")
    props["termination"] = _decided_by(
        (steps(cycle.steps), _cycle_note(cycle, done)) if cycle is not None else None,
        (cycle_walk.moves, "a random match came back to an earlier state") if cycle_walk else None,
        shapes.get("termination"),
        "no cycle in the reachable graph" if done else None,
        unknown,
    )

    # playability
    stuck = wf.stuck_states(space)
    stuck_walk = _shortest(walks, "stuck")
    props["playability"] = _decided_by(
        (ex.path_to(stuck[0]), f"no legal move for {_stuck_roles(roles, space, stuck[0])}")
        if stuck
        else None,
        (stuck_walk.moves, f"no legal move for {roles[stuck_walk.detail]}") if stuck_walk else None,
        shapes.get("playability"),
        "every role can move in every state" if done else None,
        unknown,
    )

    # monotonicity
    mono = wf.monotonicity_problem(space, roles)
    props["monotonicity"] = _decided_by(
        (_mono_path(ex, mono), mono.detail) if mono is not None else None,
        None,
        None,
        "one goal value per role in every state, never decreasing" if done else None,
        unknown,
    )

    # goal definition
    bad = wf.bad_goal_states(space)
    bad_walk = _shortest(walks, "terminal", lambda w: not all(map(wf.good_goal, w.detail)))
    props["goal_definition"] = _decided_by(
        (ex.path_to(bad[0]), _goal_problem(roles, space.terminal[bad[0]])) if bad else None,
        (bad_walk.moves, _goal_problem(roles, bad_walk.detail)) if bad_walk else None,
        None,
        "one goal value per role" if done else None,
        unknown,
    )

    # weak winnability
    weak: dict[str, str] = {}
    witnesses: dict[str, list[list[str]]] = {}
    why_not: dict[str, dict[str, Any]] = {}
    for i, role in enumerate(roles):
        wins = wf.winning_terminals(space, i)
        walk = _shortest(walks, "terminal", lambda w, i=i: w.detail[i] == [wf.WIN])
        if wins:
            weak[role], witnesses[role] = PROVED, ex.path_to(wins[0])
        elif walk is not None:
            weak[role], witnesses[role] = PROVED, walk.moves
        else:
            weak[role] = REFUTED if done else UNKNOWN
            if done:
                why_not[role] = _no_win(ex, space, i)
    props["weak_winnability"] = {
        "verdict": _combine(weak.values()),
        "roles": weak,
        "witnesses": witnesses,
        "why_not": why_not,
    }

    # strong winnability: as the notes define it (one sequence of the role's own moves),
    # then by a strategy (each move chosen after seeing the others'); a sequence is a
    # strategy, so where no strategy wins no sequence does
    sequence: dict[str, str] = {}
    sequences: dict[str, list[str]] = {}
    strategy: dict[str, str] = {}
    for i, role in enumerate(roles):
        if len(roles) == 1 and role in witnesses:
            # alone in the game, the role's own moves are the joint moves: its weak
            # winnability witness is a winning sequence (and strategy)
            sequence[role] = strategy[role] = PROVED
            sequences[role] = [jm[0] for jm in witnesses[role]]
            continue
        if whole.passed():
            sequence[role] = strategy[role] = UNKNOWN
            cut.append(f"strong winnability of {role}")
            continue
        b = wf.strong_winnability_bounds(space, i)
        strategy[role] = PROVED if b.proved else REFUTED if b.refuted else UNKNOWN
        if b.refuted:
            sequence[role] = REFUTED
            continue
        def own_moves(state: int, i: int = i) -> Sequence[str]:
            return ex.legal(state)[i]

        found = wf.winning_sequence(space, i, own_moves, whole.passed)
        sequence[role] = PROVED if found.proved else REFUTED if found.refuted else UNKNOWN
        if found.proved:
            sequences[role] = list(found.moves)
        elif found.why == "the time budget":
            cut.append(f"strong winnability of {role} by a sequence")
    props["strong_winnability"] = {
        "verdict": _some(sequence.values()),
        "roles": sequence,
        "sequences": sequences,
    }
    props["strong_winnability_strategy"] = {
        "verdict": _some(strategy.values()),
        "roles": strategy,
    }

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
            "max_memory": budget.max_memory,
            "stopped_by": space.stopped_by,
            "seconds": round(space.seconds, 3),
        },
        "depth": {"min": depth[0], "max": depth[1]} if depth else None,
        "branching": wf.branching(space),
        "properties": props,
        "time": {"seconds": budget.seconds, "cut": cut},
    }
    if walks:
        report["random_matches"] = _walk_summary(walks, roles, budget)
    return report


def _cycle_note(cycle: wf.Cycle, exhaustive: bool) -> str:
    """What a termination counterexample is, and whether it is a shortest one."""
    note = "a cycle of non-terminal states"
    if not cycle.shortest:
        return f"{note} (the search for a shorter one stopped at its cap or deadline)"
    return f"{note} (a shortest counterexample{'' if exhaustive else ' in the explored graph'})"


def _no_win(ex: Explorer, space: StateSpace, role: int) -> dict[str, Any]:
    """Why ``role`` wins in no reachable terminal state of the complete graph: how many
    terminal states there are, and the closest to a win, the one with the role's highest
    goal value nearest the initial state (its value and the moves there), if any."""
    best: tuple[int, int] | None = None  # (goal value, state)
    for s in sorted(space.terminal):
        values = space.terminal[s][role]
        if wf.good_goal(values) and (best is None or int(values[0]) > best[0]):
            best = (int(values[0]), s)
    return {
        "goal": wf.WIN,
        "terminal_states": len(space.terminal),
        "best": None if best is None else str(best[0]),
        "best_at": None if best is None else ex.path_to(best[1]),
    }


def why_not_text(role: str, why: dict[str, Any], syntax: str = "kif") -> str:
    """Why ``role`` is not weakly winnable, as a student can act on it: ``(goal blue 100)
    holds in no reachable terminal state (3 reached); the best for blue is (goal blue 50),
    after [...]``, atoms and moves written in ``syntax``."""
    def goal(value: str) -> str:
        return term_text(Func("goal", (parse_kif_term(role), Const(value))), syntax)

    n = why["terminal_states"]
    text = f"{goal(why['goal'])} holds in no reachable terminal state"
    if not n:
        return f"{text}: no terminal state is reachable"
    text += f" ({n} reached)"
    if why["best"] is None:
        return f"{text}; none gives {role} one goal value from 0 to 100"
    after = _moves(why["best_at"], syntax)
    return f"{text}; the best for {role} is {goal(why['best'])}, after {after}"


def _verdict(verdict: str, counterexample: list[list[str]] | None, note: str) -> dict:
    return {"verdict": verdict, "counterexample": counterexample, "note": note}


def _decided(verdicts: Any, one: str, every: str) -> str:
    """``one`` if one verdict is, else ``every`` if all are (and there is one), else
    unknown."""
    vs = list(verdicts)
    if one in vs:
        return one
    return every if vs and all(v == every for v in vs) else UNKNOWN


def _combine(verdicts: Any) -> str:
    """For every: refuted if one is, proved if all are."""
    return _decided(verdicts, REFUTED, PROVED)


def _some(verdicts: Any) -> str:
    """For some: proved if one is, refuted if all are."""
    return _decided(verdicts, PROVED, REFUTED)


def _goal_problem(roles: list[str], goals: list[list[str]]) -> str:
    parts = []
    for role, vs in zip(roles, goals, strict=True):
        if not wf.good_goal(vs):
            parts.append(f"{role} has " + (f"goal values {', '.join(vs)}" if vs else "no goal"))
    return "; ".join(parts)


def _stop(space: StateSpace, budget: Budget) -> str:
    """Which budget stopped the search, as words."""
    if space.stopped_by == "memory":
        return f"its memory budget ({budget.max_memory // 2**20} MiB)"
    if space.stopped_by == "seconds":
        return f"its share of the time budget ({space.seconds:.1f} of {budget.seconds:g} s)"
    return f"its budget ({budget.max_states} states)"


def _walk_note(walks: list[Walk], budget: Budget, space: StateSpace, wanted: int) -> str:
    short = (
        f"; the time budget ran out after {len(walks)} of {wanted} random matches"
        if len(walks) < wanted
        else ""
    )
    if not walks:
        return f"the search stopped at {_stop(space, budget)}{short}"
    s = _walk_summary(walks, [], budget)
    return (
        f"search stopped at {_stop(space, budget)}{short}; no counterexample in what was "
        f"explored nor in {s['matches']} random matches ({_walk_counts(s)}), which "
        f"proves nothing"
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


def format_report(report: dict, definitions: bool = False, syntax: str = "kif") -> str:
    """The report as text, one property a line, counterexamples as joint moves written in
    ``syntax`` (``kif`` or ``infix``); with ``definitions``, each verdict followed by the
    course notes' definition it decides."""
    lines = [f"game: {report['game']}  roles: {' '.join(report['roles'])}"]
    ex = report["explored"]
    if report["exhaustive"]:
        lines.append(
            f"reachable states: {report['reachable_states']} "
            f"({report['terminal_states']} terminal), exhaustive search"
        )
    else:
        why = {"memory": "memory ", "seconds": "time "}.get(ex.get("stopped_by") or "", "")
        lines.append(
            f"search stopped at its {why}budget: {ex['expanded_states']} states expanded, "
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
    if report["time"]["cut"]:
        lines.append(
            f"time budget ({report['time']['seconds']:g} s) cut: {', '.join(report['time']['cut'])}"
        )
    for name, p in report["properties"].items():
        label = LABELS.get(name, name.replace("_", " "))
        if "roles" in p:
            per = ", ".join(f"{r}: {v}" for r, v in p["roles"].items())
            lines.append(f"{label}: {p['verdict']} ({per})")
            for role, moves in p.get("witnesses", {}).items():
                lines.append(f"  witness for {role}: {_moves(moves, syntax)}")
            for role, why in p.get("why_not", {}).items():
                lines.append(f"  why not for {role}: {why_not_text(role, why, syntax)}")
            for role, own in p.get("sequences", {}).items():
                lines.append(f"  sequence for {role}: {_moves([[m] for m in own], syntax)}")
        else:
            lines.append(f"{label}: {p['verdict']} -- {p['note']}")
            if p["counterexample"] is not None:
                lines.append(f"  counterexample: {_moves(p['counterexample'], syntax)}")
        if definitions and p.get("definition"):
            lines.append(
                textwrap.fill(
                    p["definition"], 92, initial_indent="  definition: ", subsequent_indent="    "
                )
            )
    return "\n".join(lines)


def _moves(moves: list[list[str]], syntax: str = "kif") -> str:
    if not moves:
        return "(initial state)"
    return " ".join("[" + " ".join(_move(m, syntax) for m in jm) + "]" for jm in moves)


def _move(move: str, syntax: str) -> str:
    """A move of a report (KIF) in ``syntax``."""
    return move if syntax == "kif" else term_text(parse_kif_term(move), syntax)
