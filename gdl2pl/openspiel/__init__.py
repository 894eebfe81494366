"""GDL games as OpenSpiel games.

>>> game = load_game("ticTacToe.kif")          # a pyspiel.Game
>>> import gdl2pl.openspiel  # first: it registers "gdl" (and "gdl_ii") with OpenSpiel
>>> pyspiel.load_game("gdl", {"game": "ticTacToe.kif"})   # the same, through the registry

Importing this module registers the games ``gdl`` (and ``gdl_ii``) with OpenSpiel:
``pyspiel.load_game("gdl", ...)`` before ``import gdl2pl.openspiel`` fails with
OpenSpiel's ``Unknown game 'gdl'`` (``load_game`` here needs no registry).

Players are the roles in file order. A turn-taking game (see ``gdl2pl.adapters.game``) is
SEQUENTIAL: the roles without a choice play their only move implicitly; any other game is
SIMULTANEOUS. Deterministic, perfect information, terminal rewards only; returns are
``(goal - 50) / 50``, their range the goal rules' values; utility ZERO_SUM/CONSTANT_SUM
when every reachable terminal state was seen to be so or the goal rules prove it, or when
declared (``utility="zero_sum"``, checked in every terminal state met), else GENERAL_SUM;
``max_game_length`` proved by enumeration, a step counter or a measure every step moves
(``gdl2pl.length_bound``), else the parameter;
``game.gdl_metadata()`` says which of these claims are proved and which assumed. Action
ids are per player (the role's move table); the observation tensor is the state as planes
``[channels, rows, cols]`` where the fluents form a board, else (or with
``observation="flat"``) one 0/1 entry per base proposition (``BaseObserver``). String forms:
``str(state)`` is the board drawn by ``GdlGame.draw``, action strings are KIF.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyspiel

from gdl2pl.adapters import AdapterError
from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import find_game
from gdl2pl.adapters.domains import MAX_TERMS
from gdl2pl.adapters.game import ANALYSIS_SECONDS
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term

from .game_type import perfect_game_type
from .state_text import ReadsStateText
from .state_text import Roles
from .state_text import write_state

SHORT_NAME = "gdl"
#: Game parameters: ``game`` (file, or a name found by ``gdl2pl.adapters.find_game``),
#: ``dynamics`` (auto, sequential, simultaneous), ``max_game_length`` (used when the
#: reachable states were not all enumerated), ``max_terms`` (bound on a role's moves or
#: the fluents from the reachability analysis), ``num_distinct_actions`` (the action
#: space when moves are numbered as first seen; 0: ``GdlGame``'s default),
#: ``missing_goal`` (the goal of a role without one in a terminal state; -1: such a state
#: is an error; -2: 50 is assumed, with a ``MissingGoalWarning``), ``analysis_seconds``
#: (the time the game-kind search may take at load), ``utility`` (auto, zero_sum,
#: general_sum: ``GdlGame``'s), ``observation`` (planes: the board's planes where there
#: is one; flat: one entry per base proposition), ``perspective`` (fixed: the planes in
#: one order for every player; mover: ``observation_tensor(p)`` puts player p's pieces
#: first, then those of the players after it, as OpenSpiel's own board games do; planes
#: only), ``engine`` (auto, the default: the
#: reasoner at once, the compiled network as soon as a background grounding has it;
#: compiled: the network only; prolog: the reasoner only; ``GdlGame``'s).
DEFAULT_PARAMS: dict[str, Any] = {
    "game": "ticTacToe.kif",
    "dynamics": "auto",
    "utility": "auto",
    "observation": "planes",
    "perspective": "fixed",
    "max_game_length": 10_000,
    "max_terms": MAX_TERMS,
    "num_distinct_actions": 0,
    "missing_goal": -2,
    "analysis_seconds": ANALYSIS_SECONDS,
    "engine": "auto",
}

_Util = pyspiel.GameType.Utility


def _missing_goal(value: Any) -> Any:
    """OpenSpiel's integer parameter as ``GdlGame``'s ``missing_goal``."""
    if value in ("assume", "error") or value is None:
        return value
    n = int(value)
    return "error" if n == -1 else "assume" if n == -2 else n


def _game_type_field(name: str) -> Any:
    """A read-only attribute of a game: the field ``name`` of its game type."""
    return property(lambda game: getattr(game.get_type(), name), doc=f"The game type's {name}.")


class GdlOpenSpielGame(ReadsStateText, pyspiel.Game):
    """A GDL game as a ``pyspiel.Game``; ``gdl`` holds the adapters' ``GdlGame``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**DEFAULT_PARAMS, **(params or {})}
        if p["observation"] not in ("planes", "flat"):
            raise AdapterError(
                f"{p['game']}: observation must be 'planes' or 'flat', not {p['observation']!r}"
            )
        if p["perspective"] not in ("fixed", "mover"):
            raise AdapterError(
                f"{p['game']}: perspective must be 'fixed' or 'mover', not {p['perspective']!r}"
            )
        #: ``planes`` or ``flat``: the form of the observation tensor.
        self.observation_form: str = p["observation"]
        #: ``fixed`` or ``mover``: whose side the observation tensor is seen from.
        self.perspective: str = p["perspective"]
        path = find_game(str(p["game"]))
        self.gdl = GdlGame.shared(
            path,
            dynamics=p["dynamics"],
            utility=p["utility"],
            max_terms=int(p["max_terms"]),
            num_distinct_actions=int(p["num_distinct_actions"]) or None,
            missing_goal=_missing_goal(p["missing_goal"]),
            analysis_seconds=float(p["analysis_seconds"]),
            engine=str(p["engine"]),  # type: ignore[arg-type]
        )
        g = self.gdl
        if self.perspective == "mover" and (self.observation_form != "planes" or g.board is None):
            raise AdapterError(
                f"{g.name}: perspective='mover' needs the board planes "
                "(observation='planes' and a game with a board)"
            )
        if g.zero_sum:
            utility, utility_sum = _Util.ZERO_SUM, 0.0
        elif g.constant_sum is not None:
            utility, utility_sum = _Util.CONSTANT_SUM, g.constant_sum
        else:
            utility, utility_sum = _Util.GENERAL_SUM, None
        proved_length = g.gdl_metadata()["max_game_length"]
        length = (
            int(proved_length.value)  # type: ignore[call-overload]
            if proved_length.status == "proved"
            else int(p["max_game_length"])
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=g.num_actions,
            max_chance_outcomes=0,
            num_players=g.num_roles,
            min_utility=g.gdl_metadata()["utility_range"].value[0],  # type: ignore[index]
            max_utility=g.gdl_metadata()["utility_range"].value[1],  # type: ignore[index]
            utility_sum=utility_sum,
            max_game_length=max(1, length),
        )
        game_type = perfect_game_type(
            SHORT_NAME, g.turn_taking, utility, g.num_roles, DEFAULT_PARAMS
        )
        super().__init__(game_type, info, {**p, "game": os.fspath(p["game"])})

    def gdl_metadata(self) -> dict[str, Any]:
        """What is proved, assumed or chosen about this game (``GdlGame.gdl_metadata``)."""
        return self.gdl.gdl_metadata()

    # The game type's fields as attributes: OpenSpiel's Python algorithms read them
    # from the game when they refuse it (``minimax.alpha_beta_search``: "must be 0-sum,
    # not {game.utility}").
    utility = _game_type_field("utility")
    dynamics = _game_type_field("dynamics")
    chance_mode = _game_type_field("chance_mode")
    information = _game_type_field("information")

    def new_initial_state(self) -> GdlOpenSpielState:
        return GdlOpenSpielState(self)

    def state_roles(self) -> Roles:
        """Each player's role and moves, as the state text writes them."""
        return {p: (kif_term(r), self.gdl.moves[p]) for p, r in enumerate(self.gdl.roles)}

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> BaseObserver:
        return BaseObserver(
            self.gdl, planes=self.observation_form == "planes", mover=self.perspective == "mover"
        )


class GdlOpenSpielState(pyspiel.State):
    """A state: the reasoner's ``MachineState`` (shared, immutable) plus the history."""

    def __init__(self, game: GdlOpenSpielGame) -> None:
        super().__init__(game)
        self._gdl = game.gdl
        self._sequential = game.gdl.turn_taking
        self._pos = game.gdl.position(game.gdl.initial_state)

    @property
    def machine_state(self) -> MachineState:
        """The reasoner's state."""
        return self._pos.state

    def current_player(self) -> int:
        node = self._pos.node
        if node.terminal:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._sequential:
            return self._gdl.sequential_mover(self._pos.state, node)
        return int(pyspiel.PlayerId.SIMULTANEOUS)

    def _legal_actions(self, player: int) -> list[int]:
        node = self._pos.node
        if node.terminal:
            return []
        if self._sequential and player != self.current_player():
            return []
        return list(node.legal[player])

    def _apply_action(self, action: int) -> None:
        mover = self.current_player()
        joint = [ids[0] for ids in self._pos.node.legal]
        joint[mover] = action
        self._step(joint)

    def _apply_actions(self, actions: list[int]) -> None:
        self._step(list(actions))

    def _step(self, joint: list[int]) -> None:
        self._pos = self._gdl.position(self._gdl.next(self._pos.state, joint))

    def _action_to_string(self, player: int, action: int) -> str:
        return str(self._gdl.moves[player][action])

    def is_terminal(self) -> bool:
        return self._pos.node.terminal

    def returns(self) -> list[float]:
        return list(self._pos.node.returns)

    def rewards(self) -> list[float]:
        return list(self._pos.node.returns)

    def information_state_string(self, player: int | None = None) -> str:
        return self.history_str()

    def serialize(self) -> str:
        """The state as text: its moves and fluents as KIF, no pickle (``state_text``)."""
        game = self.get_game()
        history = [(x.player, x.action) for x in self.full_history()]
        return write_state(game.state_roles(), history, list(self.machine_state))

    def __str__(self) -> str:
        return self._gdl.draw(self.machine_state)


class BaseObserver:
    """Observation ``dict["observation"]``: where the fluents form a board
    (``gdl2pl.adapters.planes``), the whole state as planes ``[channels, rows, cols]``
    (CHW): the board's channels (one per content, in KIF order), then one constant plane
    per other fluent (1s where it holds: whose turn, the step), or past
    ``MAX_CONSTANT_PLANES`` of them their entries packed into planes; else, or with
    ``planes=False``, one 0/1 entry per base proposition (``gdl.base``, in that order).
    ``observation_tensor_shape()`` is that shape, so a network built from it sees the
    board. With ``mover``, the planes are seen from the side of the player observed
    (``GdlGame.mover_orders``): its pieces first, then those of the players after it."""

    def __init__(self, gdl: GdlGame, planes: bool = True, mover: bool = False) -> None:
        self._gdl = gdl
        self._board = gdl.board if planes else None
        self._orders = gdl.mover_orders if mover and self._board is not None else None
        if self._board is None:
            self.tensor = np.zeros(gdl.observation_size, np.float32)
        else:
            self.tensor = np.zeros(self._board.planes_shape, np.float32)
            self._planes = np.zeros(self._board.planes_shape, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: GdlOpenSpielState, player: int) -> None:
        vec = self._gdl.observation(state.machine_state)
        if self._board is None:
            self.tensor[:] = vec
        elif self._orders is None:
            self._board.observation_planes(vec, self.tensor)
        else:
            self._board.observation_planes(vec, self._planes)
            self.tensor[:] = self._planes[self._orders[player]]

    def string_from(self, state: GdlOpenSpielState, player: int) -> str:
        return str(state)


def load_game(path: str | os.PathLike[str], **options: Any) -> Any:
    """The GDL game in ``path`` as a ``pyspiel.Game`` (options: ``dynamics``, ``utility``,
    ``observation``, ``perspective``, ``max_game_length``, ``max_terms``,
    ``num_distinct_actions``,
    ``missing_goal``, ``analysis_seconds``, ``engine``; see ``DEFAULT_PARAMS``). Registered
    as ``gdl`` once this module is imported: ``pyspiel.load_game("gdl", {"game": path})``."""
    return GdlOpenSpielGame({**options, "game": os.fspath(path)})


pyspiel.register_game(
    perfect_game_type(SHORT_NAME, True, _Util.GENERAL_SUM, 2, DEFAULT_PARAMS), GdlOpenSpielGame
)

# GDL-II games (chance, hidden information) are registered as "gdl_ii" there.
from .imperfect import load_imperfect_game  # noqa: E402

__all__ = [
    "SHORT_NAME",
    "GdlOpenSpielGame",
    "GdlOpenSpielState",
    "load_game",
    "load_imperfect_game",
]
