"""Many copies of one GDL game stepped together in C, their outputs as numpy arrays.

``GdlBatch(game, num_games)`` holds ``N`` games of a compiled game (the C evaluator's
``Batch``) and steps them together: one ``step(actions)`` call moves every game, and C
writes what learning code reads into arrays made once here, without a Python loop per
game. The games are evaluated bit-sliced, up to 256 at a time (a group where at most
``solo`` games change, default 4, steps them one by one with the network's watched
evaluation instead: the same answers). The outputs:

- ``observations`` ``(N, *observation_shape)``: the observation the adapters define
  (``GdlGame.observation``: one entry per base proposition, ``observation="flat"``;
  or OpenSpiel's tensor, ``"planes"``: ``BoardLayout.observation_planes`` where the
  fluents form a board, else flat), int8 or float32;
- ``action_masks`` ``(N, roles, num_actions)`` int8: 1 for the legal action ids (the
  adapters' stable ids: ``GdlGame.action_of``), 0 past a role's action space and at
  the end;
- ``rewards`` ``(N, roles)``: ``(goal - 50) / 50`` in the state reached at the end,
  0 before, -1 for an illegal action's role (with ``illegal="end"``);
- ``terminated`` ``(N,)``, ``mover`` ``(N,)`` (``Node.mover``: the role with a choice,
  0 if none has, -1 if several have or at the end), ``illegal`` ``(N,)``;
- ``unrepresentable`` ``(N,)`` bool: the game ended in a terminal state the adapters
  cannot score (a role without goal value under ``missing_goal="error"``, several goal
  values, one that is not a number, returns that break a declared ``zero_sum``): with
  ``unrepresentable="mark"`` (the default) such a game is marked here, its rewards 0
  where there is none to give, and the others play on; with ``"raise"`` the call raises
  ``UnrepresentableStateError`` for the whole batch.

A role with a single legal move plays it whatever its action says, so in a turn-taking
game ``step`` takes one action per game (the mover's); where a game stepped has several
roles with a choice (the game's kind analysis, cut short, may have taken it for
turn-taking) that form is refused with ``ValueError`` before any game moves. A game
that has ended restarts at the next ``step`` (auto-reset, as Gymnasium's ``NEXT_STEP``:
its action is not read, its outputs are the initial state's) unless ``autoreset=False``.
The games are deterministic; ``sample_actions`` draws random legal actions in C from a
generator that ``seed`` sets, so a run is reproducible from its seed.

``transition(states, actions)`` is ``step``'s functional form (``states, actions ->
states``, the outputs written as ``step`` writes them): the games are put in ``states``
(packed, as ``states()`` gives them) and stepped; a game already in the state given (the
states of the last call given back, as a learner's loop does) is not loaded again, so
that such a call costs what ``step`` and ``states()`` cost.

The arrays are read-only views that every call overwrites (copy what you keep). Other
states that break the adapters' contract (a role without legal move in a non-terminal
state, a legal move outside the action table) raise ``UnrepresentableStateError`` as
``GdlGame.node`` does (naming the game's index in the batch); they are found after the
step, which has happened. Memory: ``memory_bytes`` (bounded by ``max_bytes``, checked
before anything is allocated): at most ``memory_per_game`` bytes a game and
``memory_fixed`` bytes besides, freed by ``close()``, after which every call raises
``GameClosedError``.

Threads: with ``threads=k`` (or setting ``batch.threads``) a call steps the groups of
games (64, 128 or 256 games each) on ``k`` threads, the GIL released: the calling one
and ``k - 1`` started for the call, each with its own scratch (counted in
``memory_fixed``), each group on one thread only; the answers are the same as on one
thread (``tests/test_compiled_batch_transition.py``). A batch of fewer groups than
threads uses one thread a group. How it scales is measured in
``benchmarks/functional_step.py``.
"""

from __future__ import annotations

import math
import os
from typing import Any
from typing import Literal
from typing import NamedTuple

import numpy as np

from gdl2pl.bridge import GameClosedError
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.shown import shown
from gdl2pl.vocabulary import goal_number

from .errors import AdapterError
from .errors import UnrepresentableStateError
from .game import GdlGame
from .game import goal_return
from .paths import find_game

Observation = Literal["planes", "flat"]
OnUnrepresentable = Literal["mark", "raise"]


class Transition(NamedTuple):
    """What ``GdlBatch.transition`` gives: the games' new states (packed, a new read-only
    array) and the batch's outputs for them (its read-only views, overwritten by the
    next call)."""

    states: np.ndarray
    observations: np.ndarray
    action_masks: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    unrepresentable: np.ndarray

#: The most bytes a batch may take unless ``max_bytes`` says otherwise (2 GiB).
MAX_BYTES = 2 << 30
#: The most threads a batch steps its groups on (the C batch's bound).
MAX_THREADS = 64

_DTYPES = {np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.float32)}


def _readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class GdlBatch:
    """``num_games`` copies of a compiled game, stepped together (see the module's
    docstring). ``game`` is a ``GdlGame`` (its compiled engine is used: loaded with
    ``engine="compiled"``, or ``"auto"`` once its network is built) or a game file
    (loaded with ``options`` and ``engine="compiled"``, closed by ``close()``)."""

    def __init__(
        self,
        game: GdlGame | str | os.PathLike[str],
        num_games: int,
        *,
        observation: Observation = "planes",
        dtype: Any = np.int8,
        reward_dtype: Any = np.float32,
        seed: int = 0,
        max_bytes: int = MAX_BYTES,
        solo: int | None = None,
        unrepresentable: OnUnrepresentable = "mark",
        threads: int = 1,
        **options: Any,
    ) -> None:
        if isinstance(game, GdlGame):
            if options:
                raise AdapterError(f"{game.name}: options are for a game loaded from a file")
            self.game, self._owned = game, False
        else:
            options.setdefault("engine", "compiled")
            self.game, self._owned = GdlGame(find_game(game), **options), True
        try:
            self._setup(num_games, observation, dtype, reward_dtype, seed, max_bytes, solo,
                        unrepresentable, threads)
        except BaseException:
            if self._owned:
                self.game.close()
            raise

    def _setup(
        self,
        num_games: int,
        observation: Observation,
        dtype: Any,
        reward_dtype: Any,
        seed: int,
        max_bytes: int,
        solo: int | None,
        unrepresentable: OnUnrepresentable = "mark",
        threads: int = 1,
    ) -> None:
        game = self.game
        name = game.name
        if not isinstance(threads, int | np.integer) or not 1 <= threads <= MAX_THREADS:
            raise AdapterError(f"{name}: threads is 1 to {MAX_THREADS}, not {threads!r}")
        if unrepresentable not in ("mark", "raise"):
            raise AdapterError(f"{name}: unrepresentable must be 'mark' or 'raise', not "
                               f"{unrepresentable!r}")
        self.on_unrepresentable: OnUnrepresentable = unrepresentable
        if not isinstance(num_games, int | np.integer) or num_games < 1:
            raise AdapterError(f"{name}: a batch holds at least one game, not {num_games!r}")
        if observation not in ("planes", "flat"):
            raise AdapterError(f"{name}: observation must be 'planes' or 'flat', not "
                               f"{observation!r}")
        if np.dtype(dtype) not in _DTYPES:
            raise AdapterError(f"{name}: observations are int8, uint8 or float32, not {dtype}")
        if np.dtype(reward_dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise AdapterError(f"{name}: rewards are float32 or float64, not {reward_dtype}")
        if "first-seen" in (game.actions_from, game.base_from):
            raise AdapterError(
                f"{name}: its moves or fluents are numbered as first seen in play "
                f"({game.domain_note}); a batch needs the action and observation tables "
                "before play"
            )
        sm = game.sm
        if isinstance(sm, AutoMachine):
            choice = sm.wait_for_engine()
            sm = sm.engine_now
            if not isinstance(sm, CompiledMachine):
                raise AdapterError(f"{name}: a batch needs the compiled engine; "
                                   f"{choice.reason}")
        if not isinstance(sm, CompiledMachine):
            raise AdapterError(f"{name}: a batch needs the compiled engine "
                               "(load the game with engine='compiled')")
        self.sm: CompiledMachine = sm
        net = sm.network
        n = int(num_games)
        self.num_games = n
        self.num_roles = game.num_roles
        self.num_actions = game.num_actions
        self.observation_form: Observation = (
            "planes" if observation == "planes" and game.board is not None else "flat"
        )
        start, at, size, shape = self._observation_table()
        self.observation_shape: tuple[int, ...] = shape
        self.memory_per_game = self._per_game(np.dtype(dtype).itemsize,
                                              np.dtype(reward_dtype).itemsize)
        self._table_items = (len(start) + len(at) + net.n_moves
                             + 2 * sum(len(vs) for vs in net.goals))
        self.memory_fixed = self._fixed(self._table_items, int(threads))
        if n * self.memory_per_game + self.memory_fixed > max_bytes:
            raise MemoryError(
                f"{name}: {n:,} games take up to {n * self.memory_per_game:,} bytes "
                f"({self.memory_per_game:,} a game) and {self.memory_fixed:,} more, more "
                f"than max_bytes={max_bytes:,}"
            )
        roles, actions = self.num_roles, self.num_actions
        self._observations = np.zeros((n, *shape), dtype)
        self._masks = np.zeros((n, roles, actions), np.int8)
        self._rewards = np.zeros((n, roles), reward_dtype)
        self._terminated = np.zeros(n, np.bool_)
        self._mover = np.zeros(n, np.int32)
        self._illegal = np.zeros(n, np.bool_)
        self._joint = np.zeros((n, roles), np.int64)  # any id given fits: none wraps
        self._marks = np.zeros(n, np.bool_)
        self._held: np.ndarray | None = None  # the states the last transition gave
        from gdl2pl.compiled._network import Batch  # type: ignore[import-not-found]

        missing = game.missing_goal
        self._batch = Batch(
            sm.evaluator,
            n,
            sm.state_bits(sm.initial_state),
            self._move_actions(),
            actions,
            start,
            at,
            size,
            self._goal_returns(),
            math.nan if missing is None else goal_return(missing),
            self._observations.reshape(n, -1),
            self._masks,
            self._rewards,
            self._terminated,
            self._mover,
            self._illegal,
            marks=self._marks if unrepresentable == "mark" else None,
        )
        if solo is not None:
            self._batch.solo = int(solo)
        self._batch.threads = int(threads)
        self.observations = _readonly(self._observations)
        self.action_masks = _readonly(self._masks)
        self.rewards = _readonly(self._rewards)
        self.terminated = _readonly(self._terminated)
        self.mover = _readonly(self._mover)
        self.illegal = _readonly(self._illegal)
        self.unrepresentable = _readonly(self._marks)
        self.seed(seed)
        self.reset()

    # -- tables: what the C outputs mean ----------------------------------------------

    def _move_actions(self) -> list[int]:
        """Per move of the network, its action id in its role's table (-1: none)."""
        sm, action_of = self.sm, self.game.action_of
        move_terms = sm.move_terms
        out = []
        for m, (role, _) in enumerate(sm.network.moves):
            out.append(action_of[role].get(move_terms[m], -1) if role >= 0 else -1)
        return out

    def _observation_table(self) -> tuple[list[int], list[int], int, tuple[int, ...]]:
        """Per fluent of the network, the offsets of an observation row that hold 1 while
        it holds (as ``start``/``at`` lists), the row's size and the observation's shape."""
        game, sm = self.game, self.sm
        where: dict[int, list[int]] = {}  # base index -> offsets
        layout = game.board
        if self.observation_form == "flat" or layout is None:
            size = game.observation_size
            shape: tuple[int, ...] = (size,)
            for i in range(size):
                where[i] = [i]
        else:
            shape = layout.planes_shape
            _, rows, cols = shape
            area = rows * cols
            size = int(np.prod(shape))
            channels = len(layout.contents)
            for i, c, r, k in zip(layout.on_board, *layout.at, strict=True):
                where[int(i)] = [int(c) * area + int(r) * cols + int(k)]
            for j, i in enumerate(layout.rest):
                if layout.packed:
                    where[int(i)] = [channels * area + j]
                else:
                    plane = (channels + j) * area
                    where[int(i)] = list(range(plane, plane + area))
        start: list[int] = [0]
        at: list[int] = []
        index = game.base_index
        for f in range(len(sm.network.fluents)):
            base = index.get(sm.fluent_term(f))
            at.extend(where.get(base, ()) if base is not None else ())
            start.append(len(at))
        return start, at, size, shape

    def _goal_returns(self) -> list[float]:
        """Per goal entry of the network, role by role: its return (NaN: no number)."""
        out = []
        for entries in self.sm.network.goals:
            for _, value in entries:
                number = goal_number(value) if isinstance(value, str) else None
                out.append(math.nan if number is None else goal_return(number))
        return out

    def _per_game(self, obs_item: int, reward_item: int) -> int:
        """Bytes a game takes at most: the C batch's (a bit per fluent and per interface
        atom, bounded by every atom, in 64-bit words; its legal moves packed; flags,
        roles' moves) and the output arrays."""
        net = self.sm.network
        roles, actions = self.num_roles, self.num_actions
        bits = (net.n_fluents + 1 + net.n_atoms + 1) // 8 + 1 + (net.n_moves + 7) // 8
        own = bits + 2 + 4 + 3 * 4 * roles  # done, plan, culprit; only, counts, joints
        outputs = (int(np.prod(self.observation_shape)) * obs_item + roles * actions
                   + roles * reward_item + 1 + 4 + 1 + 8 * roles + 1)  # ... marks
        return own + outputs

    def _fixed(self, table_items: int, threads: int = 1) -> int:
        """Bytes a batch takes at most whatever its games: its tables, the scratch of one
        group of up to 256 games (four 64-bit words an atom, the rounding of the last
        group; its packed states), of the worklist of a cyclic group, of one state; and
        each thread's but the caller's: its own scratch of a group."""
        net = self.sm.network
        words = 32 * (4 * (net.n_fluents + 1) + 2 * (net.n_atoms + 1))
        words += (threads - 1) * (32 * (2 * (net.n_fluents + 1) + net.n_atoms)
                                  + 5 * (net.n_atoms + 1) + 256 * 16 * self.num_roles)
        words += 256 * ((net.n_fluents + 7) // 8 + 1)
        return (4 * table_items + words + 14 * net.n_atoms + 4 * net.n_rules
                + 256 * 16 * self.num_roles + 4 * self.num_roles * self.num_actions + 4096)

    @property
    def threads(self) -> int:
        """Threads a call steps the groups of games on (see the module doc)."""
        return int(self._live.threads)

    @threads.setter
    def threads(self, k: int) -> None:
        if not isinstance(k, int | np.integer) or not 1 <= k <= MAX_THREADS:
            raise ValueError(f"threads is 1 to {MAX_THREADS}, not {k!r}")
        self._live.threads = int(k)
        self.memory_fixed = self._fixed(self._table_items, int(k))

    @property
    def memory_bytes(self) -> int:
        """Bytes the batch holds: the C batch's own arrays and the output arrays."""
        arrays = (self._observations, self._masks, self._rewards, self._terminated,
                  self._mover, self._illegal, self._joint, self._marks)
        return int(self._live.memory) + sum(a.nbytes for a in arrays)

    # -- play ---------------------------------------------------------------------------

    def _games(self, games: Any) -> np.ndarray | None:
        if games is None:
            return None
        mask = np.ascontiguousarray(games, np.bool_)
        if mask.shape != (self.num_games,):
            raise ValueError(f"games: a mask of {self.num_games} booleans, not shape "
                             f"{mask.shape}")
        return mask

    def reset(self, games: Any = None) -> None:
        """The games ``games`` names (a boolean mask; None: all) back to the initial
        state, their outputs written."""
        self._held = None
        self._check(self._live.reset(self._games(games)))

    def step(self, actions: Any, games: Any = None, *, autoreset: bool = True,
             illegal: Literal["raise", "end"] = "raise", strict: int | None = None) -> None:
        """One joint move in each game (``games``: a boolean mask of those to step; the
        others are left as they are). ``actions``: ``(N, roles)`` action ids, or in a
        turn-taking game ``(N,)``, the mover's (refused, ``ValueError``, where a game
        stepped has several roles with a choice); ids no int64 holds are refused, never
        wrapped. An action that is not legal raises
        ``ValueError`` before any game moves, or with ``illegal="end"`` ends its game
        (reward -1 for its role, ``illegal`` set). A role with one legal move plays it
        whatever its action says, but role ``strict``, whose action must be that move
        (as in a one-player environment, where every action is the agent's)."""
        if illegal not in ("raise", "end"):
            raise ValueError(f"illegal must be 'raise' or 'end', not {illegal!r}")
        batch = self._live
        a = _action_ids(actions)
        mask = self._games(games)
        joint = self._joint_actions(a, mask)
        self._held = None
        self._check(batch.step(joint, mask, autoreset, illegal == "end",
                               -1 if strict is None else int(strict)))

    def _joint_actions(self, a: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """The joint actions ``a`` gives (``(N, roles)``, or ``(N,)``: the mover's of each
        game ``mask`` names, in the games' current states), as the C batch reads them;
        ``ValueError`` for any other shape."""
        if a.shape == (self.num_games,):
            self._one_action_each(mask)
            self._joint[:] = a[:, None]  # int64: every id given fits, none wraps
            return self._joint
        if a.shape == (self.num_games, self.num_roles):
            return a if a.dtype in (np.int32, np.int64) and a.flags.c_contiguous else (
                np.ascontiguousarray(a, np.int64))
        raise ValueError(f"actions: shape ({self.num_games}, {self.num_roles}) or "
                         f"({self.num_games},), not {a.shape}")

    def transition(self, states: Any, actions: Any, games: Any = None, *,
                   autoreset: bool = True, illegal: Literal["raise", "end"] = "raise",
                   strict: int | None = None) -> Transition:
        """``step``'s functional form: the games take the states ``states`` (packed,
        ``(N, state_bytes)`` uint8, as ``states()`` and this call give them), then those
        ``games`` names take one step with ``actions`` (as ``step`` takes them, and
        refuses them); their new states come back with the outputs (a ``Transition``).
        A game already in the state given is not loaded again: a loop that gives back
        the states it got costs a ``step`` and a ``states()``."""
        if illegal not in ("raise", "end"):
            raise ValueError(f"illegal must be 'raise' or 'end', not {illegal!r}")
        batch = self._live
        packed = self._packed(states)
        a = _action_ids(actions)
        mask = self._games(games)
        if a.shape == (self.num_games,) and packed is not self._held:
            self._check(batch.set_states(packed))  # the movers of the states given decide
        joint = self._joint_actions(a, mask)
        held, self._held = packed is self._held, None  # held: read-only, nothing since
        raw, problem = batch.transition(packed, joint, mask, autoreset, illegal == "end",
                                        -1 if strict is None else int(strict), held)
        new = np.frombuffer(raw, np.uint8).reshape(self.num_games, -1)  # read-only
        self._check(problem)
        self._held = new
        return Transition(new, self.observations, self.action_masks, self.rewards,
                          self.terminated, self.unrepresentable)

    def _packed(self, states: Any) -> np.ndarray:
        """``states`` as ``(N, state_bytes)`` C-contiguous uint8 (``ValueError``
        otherwise)."""
        held = self._held
        if held is not None and states is held:
            return held
        packed = np.ascontiguousarray(states, np.uint8)
        state_bytes = self._live.state_bytes
        if packed.shape != (self.num_games, state_bytes):
            raise ValueError(f"states: shape ({self.num_games}, {state_bytes}), "
                             f"not {packed.shape}")
        return packed

    def _one_action_each(self, mask: np.ndarray | None) -> None:
        """``ValueError`` unless one action per game says what every game it steps plays:
        in each, at most one role has a choice. The game's kind is only a first test (an
        analysis cut short takes the game as turn-taking without having seen every state);
        the movers of the states the games are in decide, before any game moves."""
        name = self.game.name
        if not self.game.turn_taking:
            raise ValueError(f"{name}: not turn-taking: give one action per role and game, "
                             "shape (N, roles)")
        several = (self._mover == -1) & ~self._terminated  # an ended game is not read
        if mask is not None:
            several &= mask
        if several.any():
            i = int(np.flatnonzero(several)[0])
            choosers = [str(self.game.roles[r]) for r in range(self.num_roles)
                        if self._masks[i, r].sum() > 1]
            raise ValueError(
                f"{name}: game {i} of the batch: roles {shown(', '.join(choosers))} all have a "
                f"choice in state {shown(_short(self.machine_state(i)), 200)}: one action per "
                "game cannot say what each plays; give one per role and game, shape "
                "(N, roles)"
            )

    def sample_actions(self, out: np.ndarray | None = None, games: Any = None) -> np.ndarray:
        """Per game and role a legal action id drawn uniformly (0 for a game that has
        ended), by the batch's generator (``seed``); into ``out`` (``(N, roles)``
        int32 or int64) when given."""
        if out is None:
            out = np.zeros((self.num_games, self.num_roles), np.int32)
        self._live.sample(out, self._games(games))
        return out

    def seed(self, seed: int) -> None:
        """Seed the generator of ``sample_actions``."""
        self._live.seed(int(seed))

    def states(self) -> np.ndarray:
        """Every game's state, packed: ``(N, state_bytes)`` uint8 (a copy)."""
        raw = self._live.get_states()
        return np.frombuffer(raw, np.uint8).reshape(self.num_games, -1).copy()

    def set_states(self, states: Any, games: Any = None) -> None:
        """The games ``games`` names take their states from ``states`` (as ``states()``
        gives them), their outputs written: a search may save and restore a batch."""
        packed = self._packed(states)
        self._held = None
        self._check(self._live.set_states(packed, self._games(games)))

    def machine_state(self, game: int) -> MachineState:
        """Game ``game``'s state as the machine's ``MachineState``."""
        return self.sm.state_of_bits(self._live.state(int(game)))

    def close(self) -> None:
        """Free the batch's games (every later call raises ``GameClosedError``), and
        unload the game if the batch loaded it (idempotent)."""
        self._batch = None
        if self._owned:
            self.game.close()

    @property
    def _live(self) -> Any:
        """The C batch; ``GameClosedError`` once ``close()`` was called."""
        batch = self._batch
        if batch is None:
            raise GameClosedError(f"{self.game.name}: the batch is closed (close() was called)")
        return batch

    # -- what breaks the adapters' contract ----------------------------------------------

    def _check(self, problem: tuple[str, int, int] | None) -> None:
        if problem is None:
            if self.game.utility_option == "zero_sum":
                self._check_zero_sum()
            return
        kind, i, detail = problem
        game = self.game
        state = self.machine_state(i)
        text = _short(state)
        if kind == "missing goal":
            game.note_missing_goal(text, game.roles[detail])
            return
        where = f"{game.name}: game {i} of the batch:"
        if kind == "fluent without observation":
            fluent = self.sm.fluent_term(detail)
            raise UnrepresentableStateError(
                f"{where} the fluent {kif_term(fluent)} is not among the base propositions "
                f"(from {game.base_from}) in state {text}"
            )
        role = game.roles[detail]
        if kind == "move without action":
            index = detail
            moves = [m for m in self.sm.legal_moves(state, role)
                     if m not in game.action_of[index]]
            shown = kif_term(moves[0]) if moves else "?"
            raise UnrepresentableStateError(
                f"{where} the legal move {shown} of role {role} is not in its action table "
                f"(from {game.actions_from}) in state {text}"
            )
        if kind == "no legal move":
            raise UnrepresentableStateError(
                f"{where} role {role} has no legal move in the non-terminal state {text}"
            )
        values = self.sm.goal_values(state)[detail]
        what = "no goal value" if not values else f"goal values {list(values)}"
        hint = " (missing_goal= gives such a role a value)" if not values else ""
        raise UnrepresentableStateError(
            f"{where} role {role} has {what} in the terminal state {text}{hint}"
        )

    def _check_zero_sum(self) -> None:
        ended = self._terminated & ~self._illegal
        if not ended.any():
            return
        sums = self._rewards[ended].sum(axis=1)
        bad = np.flatnonzero(np.abs(sums) > 1e-6)
        if len(bad) and self.on_unrepresentable == "mark":
            self._marks[np.flatnonzero(ended)[bad]] = True
            return
        if len(bad):
            i = int(np.flatnonzero(ended)[bad[0]])
            raise UnrepresentableStateError(
                f"{self.game.name}: game {i} of the batch: loaded with utility='zero_sum', "
                f"but the returns {self._rewards[i].tolist()} of the terminal state "
                f"{_short(self.machine_state(i))} sum to {float(sums[bad[0]]):g}"
            )


def _action_ids(actions: Any) -> np.ndarray:
    """``actions`` as an integer array, every id as given: ``ValueError`` for ids that are
    not integers or that no int64 holds (which no action id could be)."""
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise ValueError(f"actions: integer action ids, not {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > _INT64_MAX:
        raise ValueError(f"actions: {int(a.max())} is no action id (ids fit an int64)")
    return a


_INT64_MAX = np.iinfo(np.int64).max


def _short(state: MachineState, width: int = 200) -> str:
    text = str(state)
    return text if len(text) <= width else text[: width - 3] + "..."


__all__ = ["MAX_BYTES", "MAX_THREADS", "GdlBatch", "Observation", "OnUnrepresentable", "Transition"]
