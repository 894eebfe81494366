"""Which role a board's content and a fluent belong to, for observations from the mover's
point of view (the mover's planes first, as OpenSpiel's and pgx's board games give them).

A content belongs to a role when it names it (``red`` in connect four, ``white pawn`` in
chess_200: a word of its KIF text is the role's name), else when the game's rules say so:
every ``next`` rule that puts the content on the board has a ``does`` of that one role in
its body (tic-tac-toe's ``x``: ``(<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n))
...)``). Other contents (an empty cell's ``b``) and fluents belong to no role. Pure
functions over the board's geometry and the game's flat rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

from gdl2pl.board import BoardGeometry
from gdl2pl.board_axes import RuleLike
from gdl2pl.depgraph import body_atoms
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

__all__ = ["content_owners", "fluent_owner"]


def _named(text: str, roles: Sequence[str]) -> int | None:
    """The one role a text names as one of its words, or None."""
    words = {w.casefold() for w in text.replace("(", " ").replace(")", " ").split()}
    hits = [i for i, r in enumerate(roles) if r.casefold() in words]
    return hits[0] if len(hits) == 1 else None


def fluent_owner(fluent: Term, roles: Sequence[str]) -> int | None:
    """The role a fluent names among its arguments (``(control white)``), or None."""
    if not isinstance(fluent, Func):
        return None
    return _named(" ".join(kif_term(a) for a in fluent.args), roles)


def content_owners(
    geometry: BoardGeometry, roles: Sequence[str], rules: Iterable[RuleLike]
) -> tuple[int | None, ...]:
    """Per content of ``geometry`` (in its order) the index of the role it belongs to, or
    None (see the module's docstring)."""
    movers: dict[str, set[str | None]] = {}
    for rule in rules:
        head = rule.head
        if not (isinstance(head, Func) and head.name.casefold() == "next" and head.args):
            continue
        cell = head.args[0]
        if not (isinstance(cell, Func) and cell.name == geometry.relation
                and len(cell.args) == geometry.arity):
            continue
        content = " ".join(kif_term(a) for a in cell.args[2:])
        doers: set[str | None] = set()
        for lit in rule.body:
            for atom, negative in body_atoms(lit):
                if (not negative and isinstance(atom, Func) and atom.name.casefold() == "does"
                        and len(atom.args) == 2):
                    who = atom.args[0]
                    doers.add(who.name if isinstance(who, Const) else None)
        # a frame rule (no does) keeps a content where it is: it says nothing of who
        if doers:
            movers.setdefault(content, set()).add(
                next(iter(doers)) if len(doers) == 1 else None)
    out: list[int | None] = []
    for content in geometry.contents:
        owner = _named(content, roles)
        if owner is None:
            said = movers.get(content, set())
            if len(said) == 1 and (doer := next(iter(said))) is not None:
                owner = _named(doer, roles)
        out.append(owner)
    return tuple(out)
