"""GDL-II games as OpenSpiel games of imperfect information.

>>> game = load_imperfect_game("kuhnPoker.kif")            # a pyspiel.Game
>>> import gdl2pl.openspiel  # first: it registers "gdl_ii" with OpenSpiel
>>> pyspiel.load_game("gdl_ii", {"game": "kuhnPoker.kif"})  # the same, through the registry

Players are the roles other than ``random``, in file order; ``random`` is OpenSpiel's chance
player, whose ``chance_outcomes()`` are its legal moves, uniformly (EXPLICIT_STOCHASTIC;
DETERMINISTIC for a game without it). IMPERFECT_INFORMATION and SEQUENTIAL: a GDL-II round,
where every role moves at once, is played as one decision after another, the roles with a
choice in role order and chance last (a role with one legal move plays it implicitly).
That is faithful because nobody learns another role's move of the round before the round is
over: a player's information state is only its own moves and its percepts (``sees``) after
each round, never the state. Returns are ``(goal - 50) / 50`` at the end.

- Actions, players and rounds as ``gdl2pl.adapters.imperfect`` (the library-free core
  that PettingZoo's GDL-II environment shares) defines them.
- ``information_state_string(p)``: the player's role, then one line per round, its move
  and what it perceived (``-> ...``), the move it chose in the current round last.
- ``observation_string(p)``: the round, and the player's last move and percepts.
- Tensors, when the game declares its percepts with ``percept``: the observation has one
  0/1 entry per declared percept (those of the last round); the information state, per
  round up to the game's length, the player's move (one-hot) and its percepts.
- Utility ZERO_SUM or CONSTANT_SUM only when every reachable state was enumerated at load
  (at most ``analysis_states``) and every terminal state was seen to be so; the game's
  length then is the longest play, else ``max_game_length`` decisions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel

from gdl2pl.adapters import find_game
from gdl2pl.adapters.imperfect import ImperfectGame
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.syntax import Term

from .game_type import imperfect_game_type
from .state_text import ReadsStateText
from .state_text import Roles
from .state_text import write_state

SHORT_NAME = "gdl_ii"
#: Game parameters: ``game`` (file, or a name found by ``gdl2pl.adapters.find_game``),
#: ``max_game_length`` (decisions, used when the states were not all enumerated),
#: ``analysis_states`` (the most states enumerated at load).
DEFAULT_PARAMS: dict[str, Any] = {
    "game": "montyHall.kif",
    "max_game_length": 1_000,
    "analysis_states": 20_000,
    "engine": "auto",
}

_Util = pyspiel.GameType.Utility
CHANCE = int(pyspiel.PlayerId.CHANCE)
TERMINAL = int(pyspiel.PlayerId.TERMINAL)


class GdlImperfectGame(ReadsStateText, pyspiel.Game):
    """A GDL-II game as a ``pyspiel.Game``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**DEFAULT_PARAMS, **(params or {})}
        self.tables = t = ImperfectGame(
            find_game(str(p["game"])), int(p["analysis_states"]), str(p["engine"])  # type: ignore[arg-type]
        )
        sums = t.analysis.return_sums
        if t.analysis.proved and sums <= {0.0}:
            utility, utility_sum = _Util.ZERO_SUM, 0.0
        elif t.analysis.proved and len(sums) == 1:
            utility, utility_sum = _Util.CONSTANT_SUM, next(iter(sums))
        else:
            utility, utility_sum = _Util.GENERAL_SUM, None
        length = t.analysis.length if t.analysis.proved else int(p["max_game_length"])
        self.rounds = t.analysis.rounds if t.analysis.proved else length
        tensors = all(t.percepts)
        info = pyspiel.GameInfo(
            num_distinct_actions=t.num_actions,
            max_chance_outcomes=t.num_outcomes,
            num_players=len(t.player_roles),
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=utility_sum,
            max_game_length=max(1, length),
        )
        game_type = imperfect_game_type(
            SHORT_NAME, t.chance_role >= 0, utility, len(t.player_roles), tensors, DEFAULT_PARAMS
        )
        super().__init__(game_type, info, {**p, "game": os.fspath(p["game"])})

    def new_initial_state(self) -> GdlImperfectState:
        return GdlImperfectState(self)

    def state_roles(self) -> Roles:
        """Each player's role and moves (chance's as CHANCE), as the state text writes
        them."""
        t = self.tables
        roles: Roles = {
            p: (kif_term(t.sm.roles[i]), t.moves[i]) for p, i in enumerate(t.player_roles)
        }
        if t.chance_role >= 0:
            roles[CHANCE] = (kif_term(t.sm.roles[t.chance_role]), t.moves[t.chance_role])
        return roles

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> PerceptObserver:
        recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return PerceptObserver(self.tables, self.rounds, recall)


class GdlImperfectState(pyspiel.State):
    """A play: the reasoner's state of the round plus what each player knows."""

    def __init__(self, game: GdlImperfectGame) -> None:
        super().__init__(game)
        self._t = game.tables
        self._n = self._t.new_round()

    @property
    def machine_state(self) -> MachineState:
        """The reasoner's state (at the start of the current round)."""
        return self._n.state

    def player_history(self, player: int) -> tuple[tuple[Term, tuple[Term, ...]], ...]:
        """What ``player`` knows: its move and percepts of each round played."""
        role = self._t.player_roles[player]
        return tuple((self._t.moves[role][a], ps) for a, ps in self._n.histories[player])

    def pending_move(self, player: int) -> Term | None:
        """The move ``player`` chose in the current round, if it did already."""
        action = self._t.pending(self._n, player)
        return None if action is None else self._t.moves[self._t.player_roles[player]][action]

    def current_player(self) -> int:
        n = self._n
        if n.terminal:
            return TERMINAL
        role = self._t.chooser(n)
        if role == self._t.chance_role:
            return CHANCE
        return self._t.player_roles.index(role)

    def _legal_actions(self, player: int) -> list[int]:
        if self._n.terminal or player != self.current_player():
            return []
        return list(self._n.legal[self._t.player_roles[player]])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        ids = self._n.legal[self._t.chance_role]
        return [(a, 1.0 / len(ids)) for a in ids]

    def _apply_action(self, action: int) -> None:
        self._n = self._t.choose(self._n, action)

    def _action_to_string(self, player: int, action: int) -> str:
        role = self._t.chance_role if player == CHANCE else self._t.player_roles[player]
        return kif_term(self._t.moves[role][action])

    def is_terminal(self) -> bool:
        return self._n.terminal

    def returns(self) -> list[float]:
        if not self._n.terminal:
            return [0.0] * len(self._t.player_roles)
        return list(self._t.returns(self._n.state))

    def rewards(self) -> list[float]:
        return self.returns()

    def serialize(self) -> str:
        """The play as text: its moves and the round's fluents as KIF, no pickle
        (``state_text``)."""
        game = self.get_game()
        history = [(x.player, x.action) for x in self.full_history()]
        return write_state(game.state_roles(), history, list(self.machine_state))

    def __str__(self) -> str:
        return str(self._n.state)


class PerceptObserver:
    """What a player observes: with ``perfect_recall`` its information state (its moves
    and percepts so far), else the last round's. Tensors need the game's ``percept``
    declarations (see the module doc)."""

    def __init__(self, tables: ImperfectGame, rounds: int, perfect_recall: bool) -> None:
        self._t = tables
        self._rounds = max(1, rounds)
        self.perfect_recall = perfect_recall
        width = max((len(ps) for ps in tables.percepts), default=0)
        self.dict: dict[str, np.ndarray[Any, Any]]
        if perfect_recall:
            per_round = tables.num_actions + width
            self.tensor = np.zeros(self._rounds * per_round, np.float32)
            self.dict = {"rounds": self.tensor.reshape(self._rounds, per_round)}
        else:
            self.tensor = np.zeros(width, np.float32)
            self.dict = {"percepts": self.tensor}

    def set_from(self, state: GdlImperfectState, player: int) -> None:
        self.tensor.fill(0)
        history = state._n.histories[player]
        if not self.perfect_recall:
            self.tensor[self._t.percept_ids(player, history[-1][1] if history else ())] = 1
            return
        rows = self.dict["rounds"]
        width = self._t.num_actions
        for r, (move, percepts) in enumerate(history[: self._rounds]):
            rows[r, move] = 1
            for i in self._t.percept_ids(player, percepts):
                rows[r, width + i] = 1

    def string_from(self, state: GdlImperfectState, player: int) -> str:
        history = state.player_history(player)
        if not self.perfect_recall:
            if not history:
                return "round 0"
            move, percepts = history[-1]
            return f"round {len(history)}: {kif_term(move)} -> {_shown(percepts)}"
        role = self._t.sm.roles[self._t.player_roles[player]]
        lines = [str(role)] + [f"{kif_term(m)} -> {_shown(ps)}" for m, ps in history]
        pending = state.pending_move(player)
        if pending is not None:
            lines.append(f"{kif_term(pending)} -> ?")
        return "\n".join(lines)


def _shown(percepts: Sequence[Term]) -> str:
    return " ".join(kif_term(p) for p in percepts) or "()"


def load_imperfect_game(path: str | os.PathLike[str], **options: Any) -> Any:
    """The GDL-II game in ``path`` as a ``pyspiel.Game`` of imperfect information
    (options: ``max_game_length``, ``analysis_states``, ``engine``). Registered as ``gdl_ii``:
    ``pyspiel.load_game("gdl_ii", {"game": path})``. ``AdapterError`` for a game that is
    not GDL-II."""
    return GdlImperfectGame({**options, "game": os.fspath(path)})


pyspiel.register_game(
    imperfect_game_type(SHORT_NAME, True, _Util.GENERAL_SUM, 2, True, DEFAULT_PARAMS),
    GdlImperfectGame,
)

__all__ = [
    "SHORT_NAME",
    "GdlImperfectGame",
    "GdlImperfectState",
    "PerceptObserver",
    "load_imperfect_game",
]
