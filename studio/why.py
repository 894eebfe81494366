"""Why an atom holds or not, for the page: the one module of the studio that imports the
explainer, and the explanation tree as JSON.

A node is ``{"text", "holds", "kind", "note", "rule", "children"}``; ``rule`` (or None)
is ``{"source", "file", "line", "column", "prolog_line", "prolog_text", "bindings",
"failing", "solutions"}``: the GDL rule (KIF, with its place in the game text), the Prolog
clause it became (its line in the translation the Prolog tab shows), the variable
bindings and, for a rule that fails, the literal that fails (``Node.as_json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gdl2pl.bridge import MachineState
from gdl2pl.bridge import StateMachine
from gdl2pl.explain.proof import ExplainError
from gdl2pl.explain.proof import Node
from gdl2pl.explain.proof import depends_on_does
from gdl2pl.explain.proof import explain
from gdl2pl.explain.proof import parse_atom
from gdl2pl.kif import kif_term

__all__ = ["ExplainError", "why"]


def why(
    sm: StateMachine,
    states: Sequence[MachineState],
    joints: Sequence[Sequence[str]],
    atom: str,
    depth: int,
) -> dict[str, Any]:
    """Explain ``atom`` at the end of a history (``states`` along the joint moves
    ``joints``): in the last state; or, for an atom that depends on the joint move
    (``next``, ``does``), in the state before the last with the last joint move."""
    goal = parse_atom(sm, atom)
    state, joint = states[-1], None
    if depends_on_does(sm, goal.name):
        if not joints:
            raise ExplainError(
                f"{atom} depends on the joint move (does): it is asked of the last move "
                "played, and none has been played yet"
            )
        state, joint = states[-2], list(joints[-1])
    result = explain(sm, state, goal, depth=depth, joint_move=joint)
    return {
        "atom": kif_term(result.atom),
        "holds": result.holds,
        "state": len(states) - 1 if joint is None else len(states) - 2,
        "joint_move": joint,
        "tree": node_json(result.tree),
        "text": str(result),
    }


def node_json(node: Node) -> dict[str, Any]:
    """The node as JSON (``Node.as_json``: the explainer's one JSON form)."""
    return node.as_json()
