"""How a player chooses its moves: the ``Strategy`` contract and the simple strategies.

A strategy plays one match for one role. ``metagame`` is called once with the loaded game
(within the start clock), ``select_move`` once per step with the current state and the
role's legal moves (at least two: a forced move is played without asking), ``reached``
with every state the match reaches (forced moves too: a strategy that keeps a tree
re-roots it there), ``ponder`` on time nobody waits for (before the first play, between
plays), ``finish`` at the end. Every call gets a ``Budget``: a strategy must
return by its deadline, at the latest ``SEARCH_MARGIN`` seconds after it, and may
``offer`` its best move so far, which is sent if it does not return in time. A strategy
that searches says what it did: one ``SearchReport`` per ``select_move`` in ``reports``,
which the player takes (``take_reports``) and logs.

Strategies: ``legal`` (the first legal move), ``random`` (a uniformly random legal move),
``mcts`` (Monte Carlo tree search, in ``gdl2pl.ggp.mcts``). ``make_strategy`` builds one
by name.
"""

from __future__ import annotations

import importlib
import random
import threading
import time
from abc import ABC
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.syntax import Term

Offer = Callable[[Term], None]

#: Seconds after its budget's deadline within which a strategy returns.
SEARCH_MARGIN = 0.05


class Budget:
    """The time a strategy may use: until ``deadline`` (``time.monotonic()`` seconds), or
    until ``cancel`` is set (the match was stopped or aborted)."""

    def __init__(self, deadline: float, cancel: threading.Event | None = None) -> None:
        self.deadline = deadline
        self.cancel = cancel or threading.Event()

    @classmethod
    def seconds(cls, s: float) -> Budget:
        return cls(time.monotonic() + s)

    def remaining(self) -> float:
        return 0.0 if self.cancel.is_set() else max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return self.cancel.is_set() or time.monotonic() >= self.deadline


@dataclass(frozen=True)
class SearchReport:
    """What one ``select_move`` did: it chose ``move`` after ``iterations`` iterations
    that reached ``depth`` moves below the state searched (the deepest node of its
    tree), in ``seconds`` of the ``budget`` seconds it was given; the move was tried
    ``visits`` times and is worth ``value`` goal points (0-100) to the role on average,
    by the search's own estimate; its tree holds ``nodes`` nodes, and its root had been
    visited ``reused`` times before the search began (kept from the searches before).
    ``proven`` is the role's goal (0-100) when the search proved the root's value (its
    search then ends early, with no iterations if it was proved before), else ``None``."""

    move: Term
    iterations: int
    depth: int
    visits: int
    value: float
    seconds: float
    budget: float
    nodes: int
    reused: int = 0
    proven: float | None = None

    @property
    def over(self) -> float:
        """Seconds past the budget (0 when within it)."""
        return max(0.0, self.seconds - self.budget)

    @property
    def kept(self) -> bool:
        """The search returned within its budget and ``SEARCH_MARGIN``."""
        return self.over <= SEARCH_MARGIN


class Strategy(ABC):
    """A way of choosing moves for one role in one match (see the module doc)."""

    name = "strategy"
    #: It uses the time it is given to search; a GDL-II player leaves the time of one
    #: that does not (``legal``, ``random``) to keeping its belief.
    searches = True
    #: The searches not taken yet (``take_reports``), oldest first.
    reports: list[SearchReport]

    def take_reports(self) -> list[SearchReport]:
        """The reports of the searches since the last call, oldest first."""
        taken = getattr(self, "reports", [])
        self.reports = []
        return taken

    def metagame(self, sm: GameMachine, role: Term, budget: Budget) -> None:
        """Called once the game is loaded; ``role`` is spelled as in ``sm.roles``."""
        self.sm = sm
        self.role = role

    @abstractmethod
    def select_move(
        self, state: MachineState, legal: list[Term], budget: Budget, offer: Offer
    ) -> Term:
        """One of ``legal``, chosen before the budget expires."""

    def reached(self, state: MachineState) -> None:  # noqa: B027 - optional hook
        """The match is now in ``state`` (called before ``select_move`` is, if it is)."""

    def ponder(self, state: MachineState, budget: Budget) -> None:  # noqa: B027
        """Think about ``state`` until ``budget`` ends (a new message cancels it): a
        strategy that keeps a tree grows it there for the moves to come. No move, no
        report."""

    def finish(self) -> None:  # noqa: B027 - optional hook, empty by default
        """The match is over (stopped or aborted): release what the strategy holds."""


class LegalStrategy(Strategy):
    """Always the first legal move (moves are sorted): ggp-base's legal player."""

    name = "legal"
    searches = False

    def __init__(self, seed: int | None = None) -> None:
        del seed  # nothing random here

    def select_move(
        self, state: MachineState, legal: list[Term], budget: Budget, offer: Offer
    ) -> Term:
        return legal[0]


class RandomStrategy(Strategy):
    """A uniformly random legal move."""

    name = "random"
    searches = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def select_move(
        self, state: MachineState, legal: list[Term], budget: Budget, offer: Offer
    ) -> Term:
        return self.rng.choice(legal)


#: The registry: each strategy's name and where its class is, as ``module:Class``. A
#: class is imported only when first asked for, so a strategy module may import this
#: one without a cycle. Every class takes a ``seed`` keyword (``None`` for none).
REGISTRY: dict[str, str] = {
    "legal": "gdl2pl.ggp.strategy:LegalStrategy",
    "random": "gdl2pl.ggp.strategy:RandomStrategy",
    "mcts": "gdl2pl.ggp.mcts:MctsStrategy",
}

STRATEGIES = tuple(REGISTRY)


def register_strategy(name: str, location: str) -> None:
    """Make ``make_strategy(name)`` build the class at ``location`` (``module:Class``)."""
    REGISTRY[name] = location


def make_strategy(kind: str, seed: int | None = None, **options: Any) -> Strategy:
    """A new strategy of the given kind (a name in ``REGISTRY``); ``options`` are passed to
    its class (e.g. ``max_nodes`` for ``mcts``)."""
    location = REGISTRY.get(kind)
    if location is None:
        raise ValueError(f"unknown player {kind!r}: expected one of {', '.join(REGISTRY)}")
    module, _, cls = location.partition(":")
    strategy = getattr(importlib.import_module(module), cls)(seed=seed, **options)
    if not isinstance(strategy, Strategy):
        raise TypeError(f"{location} is not a Strategy")
    return strategy
