"""An OpenSpiel state of a GDL game as text, read back as data: a saved or received state
string is parsed, never unpickled, so it cannot run code.

``state.serialize()`` writes a header line, then one KIF term per line: the play's
history, each decision as ``(does ROLE MOVE)`` in OpenSpiel's order (chance as its GDL
role, ``random``), then the state's fluents as ``(true FLUENT)``.
``game.deserialize_state(text)`` parses each line as a KIF term, replays the moves from
the initial state (each must be a legal move of the role whose turn it is) and checks
that the fluents are those the play leads to; anything else is a ``ValueError`` naming
the line.

>>> text = state.serialize()
>>> game.deserialize_state(text).history() == state.history()
True
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from gdl2pl.errors import GdlError
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

HEADER = "gdl2pl openspiel state 1"
#: The longest state text read (characters): a long play of a large game fits.
MAX_TEXT = 64 << 20
CHANCE = -1

#: A player id's role name (KIF) and its moves, indexed by action id; CHANCE for chance.
Roles = dict[int, tuple[str, Sequence[Term]]]


def write_state(roles: Roles, history: Sequence[tuple[int, int]], fluents: Sequence[Term]) -> str:
    """The text of a state reached by ``history`` (player id, action id) with ``fluents``."""
    lines = [HEADER]
    for player, action in history:
        role, moves = roles[player]
        lines.append(f"(does {role} {kif_term(moves[action])})")
    lines.extend(sorted(f"(true {kif_term(f)})" for f in fluents))
    return "\n".join(lines) + "\n"


def read_state(text: str) -> tuple[list[tuple[int, str, str]], set[str]]:
    """The moves of a state text, as (line, role, move) in KIF, and its fluents (KIF).
    ``ValueError`` for a text that is not one, naming the line and what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"a state text must be a string, not {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ValueError(f"the state text is longer than {MAX_TEXT:,} characters")
    lines = text.splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise ValueError(f"line 1: a gdl2pl state text starts with {HEADER!r}")
    moves: list[tuple[int, str, str]] = []
    fluents: set[str] = set()
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            term = parse_kif_term(line, f"<state line {n}>")
        except (GdlError, RecursionError) as e:
            raise ValueError(f"line {n}: not a KIF term: {e}") from None
        if _is(term, "does", 2) and isinstance(term, Func):
            if fluents:
                raise ValueError(f"line {n}: a move after the fluents")
            moves.append((n, kif_term(term.args[0]), kif_term(term.args[1])))
        elif _is(term, "true", 1) and isinstance(term, Func):
            fluents.add(kif_term(term.args[0]))
        else:
            raise ValueError(f"line {n}: expected (does ROLE MOVE) or (true FLUENT): {line[:80]!r}")
    return moves, fluents


class ReadsStateText:
    """What both games of this adapter (perfect and imperfect information) share: reading
    a state back from its text. A game mixes it in before ``pyspiel.Game`` and has
    ``new_initial_state()`` and ``state_roles()``."""

    new_initial_state: Callable[[], Any]
    state_roles: Callable[[], Roles]

    def deserialize_state(self, text: str) -> Any:
        """The state ``text`` (from ``state.serialize()``) describes, parsed as data
        (``read_state``, then ``replay`` from the initial state); ``ValueError`` for a
        text that is not one of this game's."""
        moves, fluents = read_state(text)
        state = self.new_initial_state()
        return replay(state, self.state_roles(), moves, fluents, lambda s: s.machine_state)


def _is(term: Term, name: str, arity: int) -> bool:
    return isinstance(term, Func) and term.name == name and len(term.args) == arity


def replay(
    state: Any,
    roles: Roles,
    moves: list[tuple[int, str, str]],
    fluents: set[str],
    state_fluents: Callable[[Any], Sequence[Term]],
) -> Any:
    """Play ``moves`` (from ``read_state``) on ``state``, a pyspiel initial state, and
    check the result's fluents (``state_fluents``) against ``fluents``; the state.
    ``ValueError`` for a move that is no legal move of the role to play."""
    player_of = {role: player for player, (role, _) in roles.items()}
    at = 0
    while at < len(moves):
        if state.is_terminal():
            raise ValueError(f"line {moves[at][0]}: a move after the end of the play")
        if state.is_simultaneous_node():
            count = state.num_players()
            joint = [_action(state, roles, player_of, moves, at + p, p) for p in range(count)]
            state.apply_actions(joint)
            at += count
        else:
            mover = state.current_player()
            state.apply_action(_action(state, roles, player_of, moves, at, mover))
            at += 1
    have = {kif_term(f) for f in state_fluents(state)}
    if have != fluents:
        raise ValueError(
            "the fluents are not those of the state its moves lead to "
            f"({len(fluents - have)} not there, {len(have - fluents)} missing)"
        )
    return state


def _action(
    state: Any,
    roles: Roles,
    player_of: dict[str, int],
    moves: list[tuple[int, str, str]],
    at: int,
    player: int,
) -> int:
    """The action id of ``moves[at]``, which must be a legal move of ``player``."""
    if at >= len(moves):
        raise ValueError(f"the moves end within a joint move: {roles[player][0]}'s is missing")
    line, role, move = moves[at]
    if player_of.get(role) != player:
        raise ValueError(f"line {line}: {roles[player][0]} is to move here, not {role}")
    legal = state.legal_actions(player) if player != CHANCE else state.legal_actions()
    table = roles[player][1]
    for action in legal:
        if kif_term(table[action]) == move:
            return int(action)
    raise ValueError(f"line {line}: {move} is not a legal move of {role} here")
