"""GDL-II games as PettingZoo environments: each agent observes its own percepts, never
the state.

``imperfect_env(path)`` is an ``AECEnv`` over ``gdl2pl.adapters.imperfect``: agents are
the roles other than ``random``, named as in ``gdl2pl.pettingzoo`` (``first_0``,
``second_1``; ``agent_roles`` maps them to the roles); the rounds of the game are played
one decision after another (the agents with a choice in role order), and chance's moves
are drawn by the environment, uniformly, from the generator ``reset(seed=...)`` seeds.
An agent's observation is an int8 NumPy array: one 0/1 entry per percept the game declares
for it with ``percept`` (1 for what it perceived after the last round), and a last entry
that is 1 when it perceived none of them (nothing is news too, and PettingZoo's API test
takes an all-zero observation for a broken one). ``infos[agent]["action_mask"]`` has 1
for its legal actions when it is to act, and ``infos[agent]["history"]`` is what the agent
knows: its move and percepts (KIF) of each round. Action spaces are ``Discrete`` over the
role's move table. Rewards come at the end: ``(goal - 50) / 50``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from gdl2pl.adapters import find_game
from gdl2pl.adapters.imperfect import ImperfectGame
from gdl2pl.adapters.imperfect import Round
from gdl2pl.kif import kif_term

from .agents import agent_names

METADATA = {"render_modes": [], "name": "gdl_ii_v0", "is_parallelizable": False}


class GdlImperfectAECEnv(AECEnv):  # type: ignore[misc]
    """A GDL-II game as an agent-environment-cycle environment (see the module doc)."""

    metadata = METADATA

    def __init__(
        self, path: str | os.PathLike[str], analysis_states: int = 20_000, engine: str = "auto"
    ) -> None:
        super().__init__()
        self.game = g = ImperfectGame(find_game(path), analysis_states, engine)  # type: ignore[arg-type]
        self.possible_agents = agent_names([g.sm.roles[i] for i in g.player_roles])
        #: Each agent's role, as the game names it.
        self.agent_roles = {
            a: str(g.sm.roles[i]) for a, i in zip(self.possible_agents, g.player_roles, strict=True)
        }
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._action_spaces: dict[str, spaces.Discrete] = {
            a: spaces.Discrete(len(g.moves[g.player_roles[i]])) for a, i in self._index.items()
        }
        self._observation_spaces = {
            a: spaces.Box(0, 1, (len(g.percepts[i]) + 1,), np.int8)
            for a, i in self._index.items()
        }
        self.agents: list[str] = []
        self._round: Round = g.new_round()
        self._rng, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:  # type: ignore[type-arg]
        return self._action_spaces[agent]

    def close(self) -> None:
        """Keeps the game loaded (it may be reset again); ``game.close()`` unloads it."""

    def _chance(self, n: Round) -> Round:
        """``n`` with chance's decisions drawn, up to the next agent's or the end."""
        g = self.game
        while not n.terminal and g.chooser(n) == g.chance_role:
            outcomes = n.legal[g.chance_role]
            n = g.choose(n, int(outcomes[self._rng.integers(len(outcomes))]))
        return n

    def _mover(self) -> str:
        return self.possible_agents[self.game.player_roles.index(self.game.chooser(self._round))]

    def _infos(self) -> dict[str, dict[str, Any]]:
        g, n = self.game, self._round
        out: dict[str, dict[str, Any]] = {}
        for a, i in self._index.items():
            role = g.player_roles[i]
            moves = g.moves[role]
            history = [(kif_term(moves[m]), [kif_term(p) for p in ps]) for m, ps in n.histories[i]]
            mask = np.zeros(len(moves), np.int8)
            if not n.terminal and g.chooser(n) == role:
                mask[list(n.legal[role])] = 1
            out[a] = {"action_mask": mask, "history": history}
        return out

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng, _ = seeding.np_random(seed)
        self._round = self._chance(self.game.new_round())
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: self._round.terminal for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = self._infos()
        self.agent_selection = self.agents[0] if self._round.terminal else self._mover()

    def observe(self, agent: str) -> np.ndarray:
        g, n = self.game, self._round
        i = self._index[agent]
        seen = np.zeros(len(g.percepts[i]) + 1, np.int8)
        history = n.histories[i]
        seen[g.percept_ids(i, history[-1][1] if history else ())] = 1
        seen[-1] = not seen[:-1].any()  # perceived nothing
        return seen

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        g, n = self.game, self._round
        role = g.player_roles[self._index[agent]]
        if int(action) not in n.legal[role]:
            raise ValueError(
                f"{g.name}: action {action} of {agent} is not legal (legal: {list(n.legal[role])})"
            )
        self._cumulative_rewards[agent] = 0.0
        self._round = n = self._chance(g.choose(n, int(action)))
        self.rewards = {a: 0.0 for a in self.agents}
        self.infos = self._infos()
        if n.terminal:
            for a, r in zip(self.possible_agents, g.returns(n.state), strict=True):
                self.rewards[a] = r
                self.terminations[a] = True
        else:
            self.agent_selection = self._mover()
        self._accumulate_rewards()


def raw_imperfect_env(path: str | os.PathLike[str], **options: Any) -> GdlImperfectAECEnv:
    """The GDL-II environment without PettingZoo's safety wrappers."""
    return GdlImperfectAECEnv(path, **options)


def imperfect_env(path: str | os.PathLike[str], **options: Any) -> Any:
    """The GDL-II environment, wrapped as PettingZoo's classic environments are: an illegal
    action ends the game with reward -1 for its agent; order of calls enforced."""
    e: Any = raw_imperfect_env(path, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


__all__ = ["GdlImperfectAECEnv", "imperfect_env", "raw_imperfect_env"]
