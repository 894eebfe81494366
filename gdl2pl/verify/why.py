"""Why gdl2pl answered as it did, for one differing field: ``why_of`` (text and structured
details), the one entry point.

For each fact only one side has, it asks the explanation machinery (``explain``: proof
trees naming the GDL rule, its file:line and the bindings, or the first body literal that
fails) about the atom behind the fact: ``(init F)`` or ``(next F)`` (from the previous
state, with the joint move taken) for a fluent, ``(legal R M)``, ``terminal``,
``(goal R V)``. Where that is impossible (an engine's fact that is not a term of this
game) it says so, or names the rules whose head matches, without evaluating their bodies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var

from .oracle_link import StateMachine
from .oracle_link import explain
from .records import Difference

#: At most this many facts of one difference are explained, each in at most MAX_LINES.
MAX_FACTS = 3
MAX_LINES = 40
DEPTH = 2


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


def _atom(sm: StateMachine, diff: Difference, fact: str, step: int) -> Term:
    """The atom whose truth decides whether gdl2pl has ``fact`` in ``diff``'s field."""
    if diff.field == "terminal":
        return Const("terminal")
    term = sm.term(fact)
    if diff.field == "state":
        return Func("init" if step == 0 else "next", (term,))
    assert diff.role is not None
    return Func("legal" if diff.field == "legal" else "goal", (sm.term(diff.role), term))


@dataclass(frozen=True)
class Why:
    """gdl2pl's reason for its side of a difference: ``text`` for people, ``details`` for
    programs: one object per fact asked about, ``{"fact", "atom", "asked", "holds",
    "tree"}`` (``tree``: the explanation's proof tree, ``Node.as_json``: each node with its
    GDL rule, file, line, Prolog clause, bindings and sub-proofs) or, where gdl2pl cannot
    explain the fact, ``{"fact", "atom", "asked", "error", "rules"}`` (the rules whose head
    matches) or ``{"fact", "error"}`` (not a term of the game)."""

    text: str
    details: list[dict[str, Any]] = field(default_factory=list)


def _explained(
    sm: StateMachine,
    atom: Term,
    state: MachineState,
    move: list[str] | None,
) -> tuple[str, dict[str, Any]]:
    try:
        answer = explain(sm, state, atom, depth=DEPTH, joint_move=move)
    except Exception as e:  # not explainable: say which rules could derive it
        rules = list(matching_rules(sm, atom))
        found = "; ".join(rules) if rules else "none"
        text = f"{kif_term(atom)}: not explained ({e}); rules whose head matches: {found}"
        return text, {"error": str(e), "rules": rules}
    lines = str(answer).splitlines()
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"... ({len(lines) - MAX_LINES} more lines)"]
    return "\n".join(lines), {"holds": answer.holds, "tree": answer.tree.as_json()}


def why_of(
    sm: StateMachine,
    diff: Difference,
    step: int,
    move: list[str] | None,
    state: MachineState,
    previous: MachineState | None,
) -> Why:
    """gdl2pl's reason for its side of ``diff`` at ``step``: ``state`` is that step's state,
    ``previous`` the one before and ``move`` the joint move between them (None at step 0)."""
    if diff.field == "error":
        said = diff.only_gdl2pl[0] if diff.only_gdl2pl else "no error at this step"
        return Why("gdl2pl: " + said)
    if diff.kind == "malformed":
        return Why("the engine's record is not one: " + "; ".join(diff.only_engine))
    if diff.field == "state" and step > 0:
        where, asked, joint = f"from the state of step {step - 1} with {move}", previous, move
    else:
        where, asked, joint = f"in the state of step {step}", state, None
    assert asked is not None
    parts = []
    details: list[dict[str, Any]] = []
    if diff.kind == "duplicate":
        parts.append(f"the engine lists {', '.join(diff.only_engine)} more than once")
    if diff.kind == "unsorted":
        first, second = diff.only_engine
        parts.append(f"the engine lists {second} after {first}: the format asks sorted lists")
        return Why("\n".join(parts))
    if diff.field == "terminal":
        facts = ["terminal"]
    else:
        facts = diff.only_gdl2pl[:MAX_FACTS] + diff.only_engine[:MAX_FACTS]
    if diff.field == "goals" and diff.role is not None:
        _, _, goals = sm.state_info(state)
        roles = [kif_term(r).lower() for r in sm.roles]
        values = goals[roles.index(diff.role.lower())] if diff.role.lower() in roles else []
        parts.append(f"gdl2pl's goal values for {diff.role}: {sorted(map(str, values))}")
    for fact in facts:
        try:
            atom = _atom(sm, diff, fact, step)
        except Exception:  # an engine's fact that is not a KIF term
            parts.append(f"{fact}: not a term of this game")
            details.append({"fact": fact, "error": "not a term of this game"})
            continue
        text, detail = _explained(sm, atom, asked, joint)
        parts.append(f"{where}: {text}")
        details.append({"fact": fact, "atom": kif_term(atom), "asked": where, **detail})
    return Why("\n".join(parts), details)
