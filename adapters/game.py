"""One GDL game as the game-AI adapters see it: roles as players, stable integer actions,
an observation vector, returns, and whether it is turn-taking.

- Actions: per role, its moves from the game's ``input`` relation, or where the game has
  none, from the static domain analysis of ``legal`` (``domains.py``), sorted by KIF text;
  action ``i`` of a role means the same move in every state.
- Observation: one 0/1 entry per base proposition (``base``, or the analysed fluents),
  sorted by KIF text.
- Returns: ``goal_return(g) = (g - 50) / 50``: goal 100 -> 1, 50 -> 0, 0 -> -1.
- Kind: turn-taking (sequential) when in every reachable state at most one role has more
  than one legal move. Shown by enumerating the reachable states within a budget of
  states and joint moves tried (``proved``); past the budget, judged on random matches
  of a few hundred steps, and a later state with two movers raises
  ``UnrepresentableStateError``. The search runs in Prolog (``gdl_kind.pl``) and checks
  every state it sees as ``node`` does. Any game may be loaded as simultaneous.

What the reasoner answers about a state is cached per state (``node``: terminal flag,
then the legal moves, or the goals of a terminal state); successors per (state, joint
move) in a bounded cache.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Literal

from gdl2pl.bridge import MachineState
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import SymbolStep
from gdl2pl.bridge.pyform import goal_values
from gdl2pl.bridge.pyform import term_of_py
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.kif import kif_term
from gdl2pl.load import read_game
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

from .domains import MAX_TERMS
from .domains import analyse_domains
from .errors import AdapterError
from .errors import UnrepresentableStateError

Dynamics = Literal["auto", "sequential", "simultaneous"]

#: Players a move table may give an action space (beyond it the game is refused).
MAX_ACTIONS = 1_000_000
#: Prolog inferences the game-kind search may use before it gives up (verdict unknown).
ANALYSIS_INFERENCES = 2_000_000_000
KIND_MODULE = "gdl_kind"
#: Entries of an identity memo of move or fluent objects (beyond it, plain lookups).
MAX_MEMO = 200_000


def kind_runtime() -> Any:
    """The janus module with ``gdl_kind.pl`` loaded (once per process), this thread
    attached."""
    return runtime_with("gdl2pl.adapters", "gdl_kind.pl")


py_term = term_of_py


def goal_return(goal: int) -> float:
    """The return a library sees for a GDL goal value: 100 -> 1, 50 -> 0, 0 -> -1."""
    return (goal - 50) / 50


@dataclass(frozen=True, slots=True)
class Node:
    """What the adapters need of one state, asked once."""

    terminal: bool
    legal: tuple[tuple[int, ...], ...]  # per role, its legal action ids (sorted)
    returns: tuple[float, ...]  # per role; zeros unless terminal
    mover: int  # the role to move when turn-taking; -1 when several roles choose

    def __deepcopy__(self, memo: dict[int, object]) -> Node:
        return self  # immutable


@dataclass(frozen=True, slots=True)
class Position:
    """A state with its node: immutable, so copies share it."""

    state: MachineState
    node: Node

    def __deepcopy__(self, memo: dict[int, object]) -> Position:
        return self


@dataclass(frozen=True, slots=True)
class Kind:
    """What the reachability analysis found."""

    turn_taking: bool
    proved: bool  # every reachable state was seen
    states: int  # states seen
    max_depth: int  # longest play seen
    return_sums: frozenset[float]  # sums of returns over the terminal states seen


def _short(state: MachineState, width: int = 200) -> str:
    text = str(state)
    return text if len(text) <= width else text[: width - 3] + "..."


class GdlGame:
    """A loaded game with the adapters' view of it. ``close()`` unloads it."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dynamics: Dynamics = "auto",
        analysis_states: int = 6_000,
        analysis_edges: int = 20_000,
        analysis_steps: int = 500,
        max_terms: int = MAX_TERMS,
        cache_size: int = 200_000,
        seed: int = 0,
    ) -> None:
        self.path = os.fspath(path)
        self.name = os.path.basename(self.path)
        description = read_game(self.path)
        self.sm = StateMachine(description, name=self.name)
        try:
            if any(
                isinstance(r.head, Func) and r.head.name == "sees" and len(r.head.args) == 2
                for _, r in self.sm.translation.origins
            ):
                raise AdapterError(
                    f"{self.name}: a GDL-II game with hidden information (sees): its "
                    "observations would show the state; load it with "
                    "gdl2pl.openspiel.load_imperfect_game or gdl2pl.pettingzoo.imperfect"
                )
            self._setup(description, max_terms)
            self._cache_size = cache_size
            self._nodes: OrderedDict[MachineState, Node] = OrderedDict()
            self._children: OrderedDict[tuple[MachineState, tuple[int, ...]], MachineState] = (
                OrderedDict()
            )
            self._observations: OrderedDict[MachineState, tuple[int, ...]] = OrderedDict()
            self._turn_taking_checked = False
            if dynamics == "simultaneous":
                self.kind = self.analyse(0, 0, 0, seed)
                self.turn_taking = False
            else:
                self.kind = self.analyse(analysis_states, analysis_edges, analysis_steps, seed)
                if dynamics == "sequential" and self.kind.proved and not self.kind.turn_taking:
                    raise AdapterError(f"{self.name}: not turn-taking: several roles choose")
                self.turn_taking = dynamics == "sequential" or self.kind.turn_taking
        except BaseException:
            self.sm.close()
            raise

    # -- static tables ------------------------------------------------------------------

    def _setup(self, description: object, max_terms: int) -> None:
        sm = self.sm
        self.roles: tuple[Term, ...] = sm.roles
        declared = [sm.input_moves(r) for r in self.roles]
        base = sm.base_propositions
        self.actions_from = "input" if all(declared) else "analysis"
        self.base_from = "base" if base else "analysis"
        if not all(declared) or not base:
            domains = analyse_domains(description, self.roles, self.name, max_terms)  # type: ignore[arg-type]
            if not all(declared):
                declared = [sorted(domains.moves[r], key=kif_term) for r in self.roles]
            if not base:
                base = list(domains.fluents)
        self.moves: tuple[tuple[Term, ...], ...] = tuple(
            tuple(sorted(set(ms), key=kif_term)) for ms in declared
        )
        for role, ms in zip(self.roles, self.moves, strict=True):
            if not ms:
                raise AdapterError(f"{self.name}: role {role} has no possible move")
            if len(ms) > MAX_ACTIONS:
                raise AdapterError(
                    f"{self.name}: role {role} has {len(ms)} distinct moves, more than an "
                    f"action space may hold ({MAX_ACTIONS})"
                )
        self.action_of: tuple[dict[Term, int], ...] = tuple(
            {m: i for i, m in enumerate(ms)} for ms in self.moves
        )
        self.num_actions = max(len(ms) for ms in self.moves)
        self.base: tuple[Term, ...] = tuple(sorted(set(base), key=kif_term))
        self.base_index: dict[Term, int] = {f: i for i, f in enumerate(self.base)}
        # The bridge hands out one object per distinct move or fluent; these memos find
        # its index by identity, without hashing the term again (the object is kept, so
        # its id is not reused).
        self._action_memo: tuple[dict[int, tuple[Term, int]], ...] = tuple({} for _ in self.roles)
        self._base_memo: dict[int, tuple[Term, int]] = {}
        # Symbol ids (``StateMachine.step_symbols``) -> action ids per role, and ->
        # base indices: learnt on first sight.
        self._symbol_action: tuple[dict[int, int], ...] = tuple({} for _ in self.roles)
        self._symbol_base: dict[int, int] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> GdlGame:
        return self  # shared by every state and copy (libraries deep-copy states)

    @property
    def num_roles(self) -> int:
        return len(self.roles)

    @property
    def initial_state(self) -> MachineState:
        return self.sm.initial_state

    def close(self) -> None:
        self.sm.close()

    # -- per state ----------------------------------------------------------------------

    def node(self, state: MachineState) -> Node:
        """Terminal flag, legal action ids per role, returns and mover of ``state``;
        ``UnrepresentableStateError`` if the state breaks the adapters' contract."""
        node = self._nodes.get(state)
        if node is not None:
            return node
        # Goals only at the end: in many games they cost more than the legal moves.
        if self.sm.is_terminal(state):
            _, _, goals = self.sm.state_info(state)
            node = self._terminal_node(state, goals)
        else:
            legal = self.sm.all_legal_moves(state)
            actions = []
            for i, ms in enumerate(legal):
                table = self.action_of[i]
                memo = self._action_memo[i]
                try:
                    actions.append([_lookup(memo, table, m) for m in ms])
                except KeyError:
                    bad = next(m for m in ms if m not in table)
                    raise self._not_an_action(state, i, bad) from None
            node = self._moving_node(state, actions)
        self._remember(self._nodes, state, node)
        return node

    def _terminal_node(self, state: MachineState, goals: Sequence[Sequence[int | str]]) -> Node:
        returns = []
        for role, vs in zip(self.roles, goals, strict=True):
            if len(vs) != 1 or not isinstance(vs[0], int):
                what = "no goal value" if not vs else f"goal values {list(vs)}"
                raise UnrepresentableStateError(
                    f"{self.name}: role {role} has {what} in the terminal state {_short(state)}"
                )
            returns.append(goal_return(vs[0]))
        return Node(True, tuple(() for _ in self.roles), tuple(returns), -1)

    def _moving_node(self, state: MachineState, actions: list[list[int]]) -> Node:
        """The node of a non-terminal state whose roles' legal action ids are
        ``actions``."""
        ids = []
        movers = []
        for i, acts in enumerate(actions):
            if not acts:
                raise UnrepresentableStateError(
                    f"{self.name}: role {self.roles[i]} has no legal move in the "
                    f"non-terminal state {_short(state)}"
                )
            acts.sort()
            ids.append(tuple(acts))
            if len(acts) > 1:
                movers.append(i)
        mover = movers[0] if len(movers) == 1 else 0 if not movers else -1
        return Node(False, tuple(ids), tuple(0.0 for _ in self.roles), mover)

    def _not_an_action(self, state: MachineState, role: int, move: Term) -> AdapterError:
        return UnrepresentableStateError(
            f"{self.name}: the legal move {move} of role {self.roles[role]} is not in its "
            f"action table (from {self.actions_from}) in state {_short(state)}"
        )

    def position(self, state: MachineState) -> Position:
        return Position(state, self.node(state))

    def sequential_mover(self, state: MachineState, node: Node) -> int:
        """The mover of a non-terminal state of a game loaded as turn-taking."""
        if node.mover < 0:
            pairs = zip(self.roles, node.legal, strict=True)
            choosers = [str(r) for r, ids in pairs if len(ids) > 1]
            raise UnrepresentableStateError(
                f"{self.name}: loaded as turn-taking, but roles {', '.join(choosers)} all "
                f"have a choice in state {_short(state)} (load it as simultaneous)"
            )
        return node.mover

    def next(self, state: MachineState, joint: Sequence[int]) -> MachineState:
        """The state after the joint action (one action id per role, assumed legal)."""
        key = (state, tuple(joint))
        child = self._children.get(key)
        if child is None:
            moves = [self.moves[i][a] for i, a in enumerate(joint)]
            # One Prolog call answers the child's terminal flag and legal moves (or
            # goals) in symbol ids, which the tables below turn into action ids and
            # base indices without making terms.
            step = self.sm.step_symbols(state, moves)
            child = step.state
            if child not in self._nodes:
                self._remember(self._nodes, child, self._symbol_node(step))
            parent_vec = self._observations.get(state)
            if parent_vec is not None and child not in self._observations:
                self._remember(self._observations, child, self._changed(parent_vec, step))
            self._remember(self._children, key, child)
        return child

    def _symbol_node(self, step: SymbolStep) -> Node:
        if step.terminal:
            return self._terminal_node(step.state, goal_values(step.goal_values))
        actions = []
        for i, ms in enumerate(step.legal):
            table = self._symbol_action[i]
            try:
                actions.append([table[m] for m in ms])
            except KeyError:
                actions.append([self._learn_action(step.state, i, m) for m in ms])
        return self._moving_node(step.state, actions)

    def _learn_action(self, state: MachineState, role: int, symbol: int) -> int:
        table = self._symbol_action[role]
        action = table.get(symbol)
        if action is None:
            move = self.sm.symbol(symbol)
            action = self.action_of[role].get(move)
            if action is None:
                raise self._not_an_action(state, role, move)
            table[symbol] = action
        return action

    def _changed(self, parent: tuple[int, ...], step: SymbolStep) -> tuple[int, ...]:
        """The observation of ``step.state`` from its parent's: the removed fluents'
        entries cleared, the added ones' set."""
        vec = list(parent)
        index = self._symbol_base
        for ids, value in ((step.removed, 0), (step.added, 1)):
            for f in ids:
                i = index.get(f)
                if i is None:
                    i = self._learn_base(step.state, f)
                vec[i] = value
        return tuple(vec)

    def _learn_base(self, state: MachineState, symbol: int) -> int:
        fluent = self.sm.symbol(symbol)
        i = self.base_index.get(fluent)
        if i is None:
            raise self._not_a_base(state, fluent)
        self._symbol_base[symbol] = i
        return i

    def _not_a_base(self, state: MachineState, fluent: Term) -> AdapterError:
        return UnrepresentableStateError(
            f"{self.name}: the fluent {fluent} is not among the base propositions "
            f"(from {self.base_from}) in state {_short(state)}"
        )

    def observation(self, state: MachineState) -> tuple[int, ...]:
        """One 0/1 entry per base proposition (cached per state)."""
        vec = self._observations.get(state)
        if vec is None:
            vec = self._observe(state)
            self._remember(self._observations, state, vec)
        return vec

    def _observe(self, state: MachineState) -> tuple[int, ...]:
        vec = [0] * len(self.base)
        index = self.base_index
        memo = self._base_memo
        for f in state:
            try:
                i = _lookup(memo, index, f)
            except KeyError:
                raise self._not_a_base(state, f) from None
            vec[i] = 1
        return tuple(vec)

    def _remember(self, cache: OrderedDict, key: object, value: object) -> None:  # type: ignore[type-arg]
        cache[key] = value
        if len(cache) > self._cache_size:
            cache.popitem(last=False)

    # -- analysis -----------------------------------------------------------------------

    def analyse(self, max_states: int, max_edges: int, max_steps: int, seed: int) -> Kind:
        """Enumerate the reachable states breadth-first (at most ``max_states`` states and
        ``max_edges`` joint moves tried); if there are more, play random matches for at
        most ``max_steps`` steps instead.
        Runs in Prolog (``gdl_kind.pl``); a state that breaks the adapters' contract
        raises ``UnrepresentableStateError`` naming it."""
        if max_states <= 0:
            return Kind(False, False, 0, 0, frozenset())
        janus = kind_runtime()
        verdict, states, max_depth, sums, bad = janus.apply_once(
            KIND_MODULE,
            "kind_search",
            self.sm.module,
            max_states,
            max_edges,
            max_steps,
            seed % 2_147_483_648,
            ANALYSIS_INFERENCES,
        )
        if verdict == "bad":
            state = MachineState.from_fluents(py_term(f) for f in bad)
            self.node(state)  # raises, naming the role
            raise UnrepresentableStateError(  # pragma: no cover (the search and node agree)
                f"{self.name}: the state {_short(state)} breaks the adapters' contract"
            )
        n = self.num_roles
        return Kind(
            turn_taking=verdict in ("proved", "sampled", "unknown"),
            proved=verdict == "proved",
            states=states,
            max_depth=max_depth,
            return_sums=frozenset(round((s - 50 * n) / 50, 9) for s in sums),
        )

    @property
    def zero_sum(self) -> bool:
        """Proved zero-sum: every reachable terminal state's returns add up to 0."""
        return self.kind.proved and self.kind.return_sums <= {0.0}

    @property
    def constant_sum(self) -> float | None:
        """The proved constant sum of returns, if there is one."""
        if self.kind.proved and len(self.kind.return_sums) == 1:
            return next(iter(self.kind.return_sums))
        return None


def _lookup(memo: dict[int, tuple[Term, int]], table: dict[Term, int], term: Term) -> int:
    """``table[term]``, remembered by the object's identity; ``KeyError`` if absent."""
    hit = memo.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    i = table[term]
    if len(memo) < MAX_MEMO:
        memo[id(term)] = (term, i)
    return i
