"""Why gdl2pl answered as it did, for one differing fact: the rules that can derive it.

A stand-in for the analysis package's explanation trees, easy to swap: ``why_text`` is the
one entry point. It names the rules (file:line) whose head matches the fact, with the
bindings the match gives; it does not evaluate their bodies, and says so.
"""

from __future__ import annotations

from collections.abc import Iterator

from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const, Func, Term, Var

from .oracle_link import MachineState, StateMachine
from .records import Difference

MAX_RULES = 5


def match(pattern: Term, ground: Term, bindings: dict[str, Term]) -> bool:
    """Extend ``bindings`` so that ``pattern`` equals ``ground`` (symbols compared
    case-insensitively); False (bindings then undefined) if impossible."""
    if isinstance(pattern, Var):
        bound = bindings.get(pattern.name)
        if bound is None:
            bindings[pattern.name] = ground
            return True
        return kif_term(bound).lower() == kif_term(ground).lower()
    if isinstance(pattern, Const):
        return isinstance(ground, Const) and pattern.name.lower() == ground.name.lower()
    if isinstance(pattern, Func) and isinstance(ground, Func):
        return (
            pattern.name.lower() == ground.name.lower()
            and len(pattern.args) == len(ground.args)
            and all(match(p, g, bindings) for p, g in zip(pattern.args, ground.args, strict=True))
        )
    return False


def matching_rules(sm: StateMachine, goal: Term) -> Iterator[str]:
    """``file:line (head) with ?x=..`` for each rule of the game whose head matches ``goal``."""
    for _line, rule in sm.translation.origins:
        bindings: dict[str, Term] = {}
        if not match(rule.head, goal, bindings):
            continue
        pos = getattr(rule.source, "pos", None)
        where = f"{pos.file or sm.name}:{pos.line}" if pos is not None else sm.name
        kind = "fact" if not rule.body else "rule"
        shown = " ".join(f"?{k}={kif_term(v)}" for k, v in bindings.items())
        yield f"{kind} {where} {kif_term(rule.head)}" + (f" with {shown}" if shown else "")


def _goal_for(sm: StateMachine, diff: Difference, fact: str, step: int) -> Term | None:
    try:
        term = sm.term(fact) if diff.field in ("state", "legal", "goals") else None
    except Exception:  # the engine's fact is not a KIF term: nothing to match
        return None
    if diff.field == "state" and term is not None:
        return Func("init" if step == 0 else "next", (term,))
    if diff.field == "legal" and term is not None and diff.role is not None:
        return Func("legal", (sm.term(diff.role), term))
    if diff.field == "goals" and term is not None and diff.role is not None:
        return Func("goal", (sm.term(diff.role), term))
    if diff.field == "terminal":
        return Const("terminal")
    return None


def _rules_text(sm: StateMachine, goal: Term) -> str:
    rules = list(matching_rules(sm, goal))
    if not rules:
        return f"no rule or fact of the game has a head matching {kif_term(goal)}"
    more = f"; and {len(rules) - MAX_RULES} more" if len(rules) > MAX_RULES else ""
    return "candidates: " + "; ".join(rules[:MAX_RULES]) + more


def _when(step: int, move: list[str] | None) -> str:
    if step == 0:
        return "in the initial state"
    return f"after the joint move {move} at step {step - 1}"


def why_text(
    sm: StateMachine,
    diff: Difference,
    step: int,
    move: list[str] | None,
    state: MachineState | None = None,
) -> str:
    """gdl2pl's reason for its answer on ``diff`` at ``step`` (whose state is ``state``,
    reached by the joint move ``move``)."""
    when = _when(step, move) if diff.field == "state" else f"in the state of step {step}"
    parts = []
    if diff.field == "terminal":
        holds = diff.only_gdl2pl == ["true"]
        verdict = "holds" if holds else "does not hold"
        return f"gdl2pl: terminal {verdict} {when}; " + _rules_text(sm, Const("terminal"))
    if diff.field == "error":
        return "gdl2pl: " + (diff.only_gdl2pl[0] if diff.only_gdl2pl else "no error here")
    derived: set[str] | None = None
    if diff.field == "goals" and diff.role is not None and state is not None:
        _, _, goals = sm.state_info(state)
        roles = [kif_term(r).lower() for r in sm.roles]
        values = goals[roles.index(diff.role.lower())] if diff.role.lower() in roles else []
        derived = {str(v).lower() for v in values}
        parts.append(f"gdl2pl derives the goal values {sorted(derived)} for {diff.role}")
    for side, facts in (("derives", diff.only_gdl2pl), ("does not derive", diff.only_engine)):
        for fact in facts[:3]:
            if derived is not None and side == "does not derive" and fact in derived:
                parts.append(
                    f"gdl2pl derives goal {fact} for {diff.role}, but not as the only value"
                )
                continue
            goal = _goal_for(sm, diff, fact, step)
            if goal is None:
                parts.append(f"{fact}: not a term of this game")
                continue
            reason = _rules_text(sm, goal)
            if side == "does not derive":
                reason += " (no body of these held)" if "candidates" in reason else ""
            parts.append(f"gdl2pl {side} {kif_term(goal)} {when}; {reason}")
    return " | ".join(parts)
