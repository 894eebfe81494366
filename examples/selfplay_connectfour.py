"""Batched self-play on connectFour: (observation, legal mask, outcome) for training.

    python examples/selfplay_connectfour.py                 # 1,024 games, 200 steps
    python examples/selfplay_connectfour.py --games 4096 --steps 100 --out /tmp/c4.npz

Plays ``--games`` games of connectFour at once (``gdl2pl.adapters.selfplay``: the game's
network, bit-sliced in C) for ``--steps`` steps, each game restarting when it ends, and
keeps, for every position where a player had to move, what AlphaZero-style training
reads: the board planes (int8 ``[channels, rows, cols]``), the mover's legal-action
mask, and the outcome of that game from the mover's side (+1 won, 0 draw, -1 lost),
known once the game ends (positions of games still running at the end are dropped).
The policy is a stand-in for a network: a fixed random linear layer over the planes,
softmax over the legal actions (``--policy random``: uniform legal moves drawn in C).
Prints what it collected and how fast; ``--out`` saves it as ``.npz``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from gdl2pl.adapters.selfplay import SelfPlayBatch

GAME = Path(__file__).resolve().parents[2] / "shared" / "games" / "ggp-repository" / (
    "connectFour.kif")


def linear_policy(weights: np.ndarray, rng: np.random.Generator):
    """A network's stand-in: logits = planes @ weights, softmax over the legal actions,
    one action drawn per game."""

    def choose(planes: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = planes.reshape(len(planes), -1).astype(np.float32) @ weights
        legal = np.where(mask.any(axis=1, keepdims=True), mask, 1)  # ended: any (not read)
        logits = np.where(legal > 0, logits, -np.inf)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        u = rng.random((len(p), 1))
        return np.minimum((p.cumsum(axis=1) < u).sum(axis=1), p.shape[1] - 1)

    return choose


def collect(game: str | Path, num_games: int, steps: int, policy: str = "linear",
            seed: int = 0) -> dict[str, Any]:
    """Self-play for ``steps`` steps of ``num_games`` games: the samples and figures."""
    sp = SelfPlayBatch(game, num_games, dtype=np.int8, seed=seed)
    try:
        n, shape, width = num_games, sp.observation_shape, sp.num_actions
        rng = np.random.default_rng(seed)
        weights = rng.normal(scale=0.3, size=(int(np.prod(shape)), width)).astype(np.float32)
        choose = linear_policy(weights, rng)
        planes = np.zeros((steps, n, *shape), np.int8)
        masks = np.zeros((steps, n, width), np.int8)
        players = np.full((steps, n), -1, np.int8)
        episode_of = np.zeros((steps, n), np.int64)
        episode = np.arange(n)  # each game's current episode
        outcome = np.full((n + n * steps, 2), np.nan, np.float32)  # per episode, per role
        next_episode = n
        start = time.perf_counter()
        moves = 0
        for t in range(steps):
            mask, to_play = sp.legal_mask, sp.to_play
            planes[t], masks[t], players[t], episode_of[t] = sp.observations, mask, to_play, episode
            actions = sp.random_actions() if policy == "random" else choose(sp.observations, mask)
            moves += int((to_play >= 0).sum())
            returns, ended = sp.step(actions)
            k = int(ended.sum())
            outcome[episode[ended]] = returns[ended]
            episode[ended] = np.arange(next_episode, next_episode + k)
            next_episode += k
        seconds = time.perf_counter() - start
    finally:
        sp.close()
    moved = players >= 0
    value = outcome[episode_of, np.maximum(players, 0).astype(np.int64)]
    keep = moved & ~np.isnan(value)
    finished = outcome[~np.isnan(outcome[:, 0])]
    return {
        "planes": planes[keep], "masks": masks[keep], "players": players[keep],
        "values": value[keep], "episodes": episode_of[keep],  # in play order
        "seconds": seconds, "moves": moves, "finished": len(finished),
        "first_player": {"won": int((finished[:, 0] > 0).sum()),
                         "drew": int((finished[:, 0] == 0).sum()),
                         "lost": int((finished[:, 0] < 0).sum())},
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", type=Path, default=GAME)
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--policy", choices=["linear", "random"], default="linear")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    data = collect(args.game, args.games, args.steps, args.policy, args.seed)
    samples = len(data["values"])
    print(f"{args.games} games x {args.steps} steps ({args.policy} policy): "
          f"{data['moves']:,} moves in {data['seconds']:.2f} s "
          f"({data['moves'] / data['seconds']:,.0f} moves/s, policy included)")
    print(f"{data['finished']:,} games finished; first player won {data['first_player']['won']:,}, "
          f"drew {data['first_player']['drew']:,}, lost {data['first_player']['lost']:,}")
    print(f"{samples:,} training samples: planes {data['planes'].shape[1:]} int8, masks "
          f"{data['masks'].shape[1:]}, values in {sorted(set(data['values'].tolist()))}")
    if args.out:
        np.savez_compressed(args.out, planes=data["planes"], masks=data["masks"],
                            players=data["players"], values=data["values"])
        print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
