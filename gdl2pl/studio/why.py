"""Why an atom holds or not, for the page: the one module of the studio that imports the
explainer, and the explanation tree as JSON.

The question is an atom in either syntax (KIF ``(legal xplayer (mark 1 1))`` or infix
``legal(xplayer,mark(1,1))``), whatever the game's; a question that cannot be read is
refused as the question's fault, never with a place in the game. The answer is written in
the answer syntax (``gdl2pl.written``).

A node is ``{"text", "holds", "kind", "note", "rule", "children"}``; ``rule`` (or None)
is ``{"source", "fact", "file", "line", "column", "prolog_line", "prolog_text",
"bindings", "failing", "solutions"}``: the GDL rule (with its place in the game text), the
Prolog clause it became (its line in the translation the Prolog tab shows), the variable
bindings and, for a rule that fails, the literal that fails (``Node.as_json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.explain.proof import ExplainError
from gdl2pl.explain.proof import Node
from gdl2pl.explain.proof import depends_on_does
from gdl2pl.explain.proof import explain
from gdl2pl.explain.proof import parse_atom
from gdl2pl.infix import parse_infix_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.written import term_text

__all__ = ["ExplainError", "question", "why"]


def question(text: str) -> Term:
    """The atom ``text`` asks about: KIF when it starts with ``(``, else infix (a KIF
    proposition that infix would read as a variable, ``OPEN``, is read as KIF).
    ``ExplainError`` says that the question, not the game, cannot be read."""
    asked = text.strip()
    try:
        if asked.startswith("("):
            return parse_kif_term(asked)
        found = parse_infix_term(asked)
    except GdlSyntaxError as e:
        if not asked.startswith("("):
            try:  # a KIF symbol infix does not spell so, like game-over
                return parse_kif_term(asked)
            except GdlSyntaxError:
                pass
        raise _unreadable(asked, e) from None
    if isinstance(found, Var):  # a KIF proposition written in capitals, like OPEN
        try:
            return parse_kif_term(asked)
        except GdlSyntaxError as e:
            raise _unreadable(asked, e) from None
    return found


def _unreadable(asked: str, e: GdlSyntaxError) -> ExplainError:
    return ExplainError(
        f"the question {asked!r} could not be read (the game is not at fault): "
        f"{e.message}, at column {e.column} of the question; ask about an atom in KIF, "
        "like (legal xplayer (mark 1 1)), or in infix, like legal(xplayer,mark(1,1))"
    )


def why(
    sm: StateMachine,
    states: Sequence[MachineState],
    joints: Sequence[Sequence[str]],
    atom: str,
    depth: int,
    syntax: str = "kif",
) -> dict[str, Any]:
    """Explain ``atom`` at the end of a history (``states`` along the joint moves
    ``joints``): in the last state; or, for an atom that depends on the joint move
    (``next``, ``does``), in the state before the last with the last joint move. Atoms,
    rules and the joint move are written in ``syntax``."""
    goal = parse_atom(sm, question(atom), syntax)
    state, joint = states[-1], None
    if depends_on_does(sm, goal):
        if not joints:
            raise ExplainError(
                f"{term_text(goal, syntax)} depends on the joint move (does): it is asked of "
                "the last move played, and none has been played yet"
            )
        state, joint = states[-2], list(joints[-1])
    result = explain(sm, state, goal, depth=depth, joint_move=joint, syntax=syntax)
    return {
        "atom": term_text(result.atom, syntax),
        "holds": result.holds,
        "state": len(states) - 1 if joint is None else len(states) - 2,
        "joint_move": None if joint is None else [term_text(sm.term(m), syntax) for m in joint],
        "tree": node_json(result.tree),
        "text": str(result),
    }


def node_json(node: Node) -> dict[str, Any]:
    """The node as JSON (``Node.as_json``: the explainer's one JSON form)."""
    return node.as_json()
