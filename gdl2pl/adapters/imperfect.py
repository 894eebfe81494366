"""One GDL-II game (chance, hidden information) as the game-AI adapters see it, free of
any library: players (every role but ``random``), stable action ids, the rounds of a play
as one decision after another, and what each player knows.

- Players are the roles other than ``random``, in file order; ``random`` is chance.
- Actions: per role, its moves declared by ``input`` (or found by the domain analysis),
  sorted by KIF text; chance's outcomes likewise.
- A GDL-II round, where every role moves at once, is played as one decision after
  another: the players with a choice in role order, then chance if it has one (a role
  with one legal move plays it implicitly). Nobody learns another role's move of the round
  before the round is over, so this is the same game.
- A ``Round`` holds the state of the round, who decides in it and what was chosen so far,
  and each player's history: its move and percepts (``sees``) of each round played. A
  player's view is that history, never the state.
- ``ImperfectGame.analysis``: the reachable states enumerated at load (at most
  ``analysis_states``): the longest play, in decisions and rounds, and the sums of the
  players' returns ``(goal - 50) / 50`` at the end.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from gdl2pl.compiled import load_description
from gdl2pl.compiled.factory import Engine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.load import read_game
from gdl2pl.syntax import Term

from .domains import analyse_domains
from .errors import AdapterError
from .errors import UnrepresentableStateError
from .game import goal_return

#: A player's history: per round, its action id and its percepts.
History = tuple[tuple[int, tuple[Term, ...]], ...]


@dataclass(frozen=True)
class Analysis:
    """What enumerating the reachable states found (``proved``: all of them)."""

    proved: bool
    length: int  # the most decisions in one play (when proved)
    rounds: int  # the most rounds in one play (when proved)
    return_sums: frozenset[float]


class ImperfectGame:
    """A loaded GDL-II game, shared by every state of a play (never copied); ``close()``
    unloads it."""

    def __init__(
        self, path: str | os.PathLike[str], analysis_states: int = 20_000, engine: Engine = "auto"
    ) -> None:
        """``engine``: what steps the game and answers its percepts ("auto", the default:
        the reasoner at once, the compiled network once grounded; "compiled"; "prolog")."""
        path = os.fspath(path)
        self.name = os.path.basename(path)
        description = read_game(path)
        try:
            self.sm = sm = load_description(description, engine, name=self.name)
        except ValueError as e:  # an engine that is none of ENGINES
            raise AdapterError(f"{self.name}: {e}") from None
        try:
            if not sm.gdl_ii:
                raise AdapterError(
                    f"{self.name}: not a GDL-II game (no random role, sees or percept); "
                    "load it with the adapters for GDL games"
                )
            roles = sm.roles
            self.player_roles = tuple(i for i, r in enumerate(roles) if not sm.is_random(r))
            self.chance_role = next((i for i, r in enumerate(roles) if sm.is_random(r)), -1)
            declared = [sm.input_moves(r) for r in roles]
            if not all(declared):
                domains = analyse_domains(description, roles, self.name)  # type: ignore[arg-type]
                declared = [
                    ms or sorted(domains.moves[r], key=kif_term)
                    for r, ms in zip(roles, declared, strict=True)
                ]
            self.moves: tuple[tuple[Term, ...], ...] = tuple(
                tuple(sorted(set(ms), key=kif_term)) for ms in declared
            )
            self.action_of = tuple({m: i for i, m in enumerate(ms)} for ms in self.moves)
            self.percepts: tuple[tuple[Term, ...], ...] = tuple(
                tuple(sorted(sm.declared_percepts(roles[i]), key=kif_term))
                for i in self.player_roles
            )
            self.percept_index = tuple({p: i for i, p in enumerate(ps)} for ps in self.percepts)
            self.analysis = self._analyse(analysis_states)
        except BaseException:
            sm.close()
            raise

    def __deepcopy__(self, memo: dict[int, object]) -> ImperfectGame:
        return self

    def close(self) -> None:
        self.sm.close()

    def new_round(self) -> Round:
        """The first round of a play (rounds without a choice already played)."""
        return start_round(self, self.sm.initial_state, tuple(() for _ in self.player_roles))

    def chooser(self, n: Round) -> int:
        """The role deciding next in round ``n`` (not terminal)."""
        return n.choosers[len(n.chosen)]

    def choose(self, n: Round, action: int) -> Round:
        """Round ``n`` after the next decider chose ``action`` (the next round once all
        chose)."""
        chosen = (*n.chosen, action)
        if len(chosen) < len(n.choosers):
            return Round(n.state, False, n.legal, n.choosers, chosen, n.histories)
        joint = [ids[0] for ids in n.legal]
        for role, a in zip(n.choosers, chosen, strict=True):
            joint[role] = a
        state, histories = play_round(self, n.state, joint, n.histories)
        return start_round(self, state, histories)

    def percept_ids(self, player: int, percepts: Sequence[Term]) -> list[int]:
        """The indices of ``percepts`` in ``player``'s declared percepts;
        ``UnrepresentableStateError`` for one the game does not declare."""
        index = self.percept_index[player]
        try:
            return [index[p] for p in percepts]
        except KeyError:
            bad = next(p for p in percepts if p not in index)
            role = self.sm.roles[self.player_roles[player]]
            raise UnrepresentableStateError(
                f"{self.name}: role {role} perceives {bad}, which the game does not declare "
                "with percept"
            ) from None

    def pending(self, n: Round, player: int) -> int | None:
        """The action ``player`` chose in round ``n`` so far, if it did."""
        role = self.player_roles[player]
        decided = n.choosers[: len(n.chosen)]
        return n.chosen[decided.index(role)] if role in decided else None

    @property
    def num_actions(self) -> int:
        return max(len(self.moves[i]) for i in self.player_roles)

    @property
    def num_outcomes(self) -> int:
        return len(self.moves[self.chance_role]) if self.chance_role >= 0 else 0

    def legal_ids(self, state: MachineState) -> tuple[tuple[int, ...], ...]:
        """Per role, the action ids of its legal moves in ``state``."""
        out = []
        for i, ms in enumerate(self.sm.all_legal_moves(state)):
            try:
                out.append(tuple(sorted(self.action_of[i][m] for m in ms)))
            except KeyError:
                bad = next(m for m in ms if m not in self.action_of[i])
                raise UnrepresentableStateError(
                    f"{self.name}: the legal move {bad} of role {self.sm.roles[i]} is not "
                    f"in its action table in state {state}"
                ) from None
        return tuple(out)

    def choosers(self, legal: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The roles that decide in a round: players with a choice in role order, then
        chance if it has one."""
        players = tuple(i for i in self.player_roles if len(legal[i]) > 1)
        chance = self.chance_role
        return players + ((chance,) if chance >= 0 and len(legal[chance]) > 1 else ())

    def returns(self, state: MachineState) -> tuple[float, ...]:
        goals = self.sm.goals(state)
        return tuple(goal_return(goals[i]) for i in self.player_roles)

    def _analyse(self, max_states: int) -> Analysis:
        """Enumerate the reachable states (at most ``max_states``): the longest play, in
        decisions and in rounds, and the sums of the players' returns at the end."""
        sm = self.sm
        children: dict[MachineState, tuple[int, list[MachineState]]] = {}
        sums: set[float] = set()
        todo = [sm.initial_state]
        while todo:
            state = todo.pop()
            if state in children:
                continue
            if len(children) >= max_states:
                return Analysis(False, 0, 0, frozenset())
            if sm.is_terminal(state):
                sums.add(round(sum(self.returns(state)), 9))
                children[state] = (0, [])
                continue
            legal = self.legal_ids(state)
            if not all(legal):
                role = sm.roles[next(i for i, ids in enumerate(legal) if not ids)]
                raise UnrepresentableStateError(
                    f"{self.name}: role {role} has no legal move in the non-terminal state "
                    f"{state}"
                )
            kids = [step.state for _, step in sm.expand(state)]
            children[state] = (len(self.choosers(legal)), kids)
            todo.extend(kids)
        longest = _longest(sm.initial_state, children)
        if longest is None:
            return Analysis(False, 0, 0, frozenset())
        return Analysis(True, longest[0], longest[1], frozenset(sums))


def _longest(
    root: MachineState, children: dict[MachineState, tuple[int, list[MachineState]]]
) -> tuple[int, int] | None:
    """The most decisions and the most rounds on a path from ``root``; None on a cycle."""
    done: dict[MachineState, tuple[int, int]] = {}
    on_path: set[MachineState] = set()
    stack: list[tuple[MachineState, bool]] = [(root, False)]
    while stack:
        state, leaving = stack.pop()
        if leaving:
            on_path.discard(state)
            cost, kids = children[state]
            best = max((done[k] for k in kids), default=(0, -1))
            done[state] = (best[0] + cost, best[1] + 1)
            continue
        if state in done:
            continue
        if state in on_path:
            return None
        on_path.add(state)
        stack.append((state, True))
        for kid in children[state][1]:
            if kid in on_path:
                return None
            if kid not in done:
                stack.append((kid, False))
    return done[root]


@dataclass(frozen=True)
class Round:
    """Where a play stands: the state of the round, who still decides in it and what was
    chosen so far, and each player's history (move id, percepts) of the rounds played.
    Immutable, so copies of an OpenSpiel state share it."""

    state: MachineState
    terminal: bool
    legal: tuple[tuple[int, ...], ...]
    choosers: tuple[int, ...]
    chosen: tuple[int, ...]
    histories: tuple[History, ...]

    def __deepcopy__(self, memo: dict[int, object]) -> Round:
        return self


def start_round(t: ImperfectGame, state: MachineState, histories: tuple[History, ...]) -> Round:
    """The round starting in ``state``; rounds in which nobody has a choice are
    played at once (their percepts still reach the histories)."""
    while True:
        if t.sm.is_terminal(state):
            return Round(state, True, (), (), (), histories)
        legal = t.legal_ids(state)
        for i, ids in enumerate(legal):
            if not ids:
                raise UnrepresentableStateError(
                    f"{t.name}: role {t.sm.roles[i]} has no legal move in the non-terminal "
                    f"state {state}"
                )
        choosers = t.choosers(legal)
        if choosers:
            return Round(state, False, legal, choosers, (), histories)
        state, histories = play_round(t, state, [ids[0] for ids in legal], histories)


def play_round(
    t: ImperfectGame, state: MachineState, joint: list[int], histories: tuple[History, ...]
) -> tuple[MachineState, tuple[History, ...]]:
    """The state after the joint move (action ids per role), and the histories with the
    round added: each player's move and percepts."""
    moves = [t.moves[i][a] for i, a in enumerate(joint)]
    extended = tuple(
        (*h, (joint[i], tuple(t.sm.percepts(state, moves, t.sm.roles[i]))))
        for i, h in zip(t.player_roles, histories, strict=True)
    )
    return t.sm.next_state(state, moves), extended
