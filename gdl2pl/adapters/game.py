"""One GDL game as the game-AI adapters see it: roles as players, stable integer actions,
an observation vector, returns, and whether it is turn-taking.

- Actions: per role, its moves from the game's ``input`` relation, or where the game has
  none, from the reachability analysis of the rules (``reach.py``), sorted by KIF text;
  action ``i`` of a role means the same move in every state. Past the analysis' bounds
  (inferences and ``max_terms``, never a clock), moves are numbered in the order first
  seen, within ``num_distinct_actions``. The analysis' result is kept per game
  (``table_cache.py``: in the process and on disk, by a hash of the rules), and
  ``tables_hash`` names the tables, so that two machines can tell they agree.
- Observation: one 0/1 entry per base proposition (``base``, or the reachable fluents),
  sorted by KIF text (or numbered as first seen); ``board`` lays them out as planes where
  they form a board (``planes.py``).
- Returns: ``goal_return(g) = (g - 50) / 50``: goal 100 -> 1, 50 -> 0, 0 -> -1.
- Kind: turn-taking (sequential) when in every reachable state at most one role has more
  than one legal move. Shown by enumerating the reachable states within a budget of
  states and joint moves tried (``proved``); past the budget, judged on random matches
  of a few hundred steps, and a later state with two movers raises
  ``UnrepresentableStateError``. The search runs in Prolog (``gdl_kind.pl``) and checks
  every state it sees as ``node`` does. Any game may be loaded as simultaneous.
- ``gdl_metadata()``: each claim with how it is known (proved, declared, assumed, chosen).
- Pickling: a game as its file and options, with its analyses (the reachability tables
  and the kind), so that it loads elsewhere without analysing again (``travel_pack``);
  a position as its game and fluents.
- Engine: ``engine="auto"`` (the default) steps the game with the reasoner at once and
  with its compiled network as soon as a background grounding has it
  (``gdl2pl.compiled.AutoMachine``); ``"compiled"`` with the network only (a game it
  cannot compile raises ``CompileRefusedError``); ``"prolog"`` with the reasoner only.
  The analyses (``gdl_kind.pl``, ``reach.py``) always ask the reasoner (``reasoner``);
  ``engine_choice`` says which engine steps the game now and why; ``grounding_budget``
  (a ``GroundingBudget``) bounds the compiled engine's build (default: its 30 s).

What the reasoner answers about a state is cached per state (``node``: terminal flag,
then the legal moves, or the goals of a terminal state); successors per (state, joint
move) in a bounded cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from typing import Literal
from typing import cast

from gdl2pl.board import render_state
from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import SymbolStep
from gdl2pl.bridge.pyform import goal_values
from gdl2pl.bridge.pyform import term_of_py
from gdl2pl.bridge.swipl import interrupt_after
from gdl2pl.bridge.swipl import run_interruptibly
from gdl2pl.bridge.swipl import runtime_with
from gdl2pl.compiled import AutoMachine
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import EngineChoice
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import load_description
from gdl2pl.compiled.factory import Engine
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term
from gdl2pl.length_bound import LengthBound
from gdl2pl.length_bound import prove_length_bound
from gdl2pl.load import read_game
from gdl2pl.rule_shapes import goal_sum
from gdl2pl.rule_shapes import step_counter_bound
from gdl2pl.rule_shapes import turn_control
from gdl2pl.shown import shown
from gdl2pl.sum_proof import SumProof
from gdl2pl.sum_proof import prove_goal_sum
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

from .domains import MAX_TERMS
from .errors import AdapterError
from .errors import DomainExplosionError
from .errors import MissingGoalWarning
from .errors import UndeclaredFluentWarning
from .errors import UnrepresentableStateError
from .game_board import game_rules
from .owners import content_owners
from .owners import fluent_owner
from .planes import BoardLayout
from .planes import board_layout
from .reach import Reachable
from .reach import bounded
from .reach import reachable_domains
from .table_cache import recall
from .table_cache import remember_json
from .table_cache import rules_key
from .table_cache import store
from .table_cache import to_json

Dynamics = Literal["auto", "sequential", "simultaneous"]
#: What the returns sum to: ``auto`` (proved from the rules or by enumeration, else
#: general-sum), or declared by the user: ``zero_sum`` (checked in every terminal state
#: met; one whose returns do not sum to 0 raises ``UnrepresentableStateError``) or
#: ``general_sum``.
Utility = Literal["auto", "zero_sum", "general_sum"]
#: Where a table of moves or fluents comes from: the game's declarations, the reachability
#: analysis (``reach.py``), the declared ``base`` with the fluents the analysis finds it
#: omits, or numbering in the order first seen in play.
Source = Literal["input", "base", "reachability", "base+reachability", "first-seen"]

#: Players a move table may give an action space (beyond it the game is refused).
MAX_ACTIONS = 1_000_000
#: Prolog inferences the game-kind search may use before it gives up (verdict unknown).
ANALYSIS_INFERENCES = 2_000_000_000
#: Seconds the game-kind search may take before it gives up (verdict unknown), unless
#: ``analysis_seconds`` says otherwise.
ANALYSIS_SECONDS = 5.0
KIND_MODULE = "gdl_kind"
#: The action space of a role whose moves are numbered as first seen, unless
#: ``num_distinct_actions`` says otherwise.
LAZY_ACTIONS = 131_072
#: The observation size of a game whose fluents are numbered as first seen.
LAZY_FLUENTS = 4096
#: The goal a role without one in a terminal state gets unless ``missing_goal`` says
#: otherwise (return 0: neither a win nor a loss), with a ``MissingGoalWarning``.
MISSING_GOAL_ASSUMED = 50
MissingGoal = int | Literal["assume", "error"] | None

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
    """A state with its node: immutable, so copies share it. Pickled as its game and
    its fluents."""

    state: MachineState
    node: Node
    state_game: GdlGame | None = None

    def __deepcopy__(self, memo: dict[int, object]) -> Position:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # The fluents as KIF text; the node is asked again where it is unpickled.
        return (_position, (self.state_game, [kif_term(f) for f in self.state]))


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim of ``GdlGame.gdl_metadata``: its value, ``proved``/``assumed``/``chosen``,
    and why."""

    value: object
    status: Literal["proved", "declared", "assumed", "chosen"]
    how: str


def _table_status(source: str) -> Literal["proved", "declared", "assumed", "chosen"]:
    # input/base are the game's word; the reachability tables are proved supersets;
    # first-seen numbering rests on a bound the user gave or the default
    if source in ("input", "base"):
        return "declared"
    return "assumed" if source == "first-seen" else "proved"


@dataclass(frozen=True, slots=True)
class Kind:
    """What the reachability analysis found."""

    turn_taking: bool
    proved: bool  # every reachable state was seen
    states: int  # states seen
    max_depth: int  # longest play seen (enumerated: the deepest level, see ``layered``)
    return_sums: frozenset[float]  # sums of returns over the terminal states seen
    #: Enumerated: every joint move leads one level deeper (no cycle, no two ways of
    #: different lengths to a state), so ``max_depth`` is the longest play.
    layered: bool = False


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
        utility: Utility = "auto",
        analysis_states: int = 6_000,
        analysis_edges: int = 20_000,
        analysis_steps: int = 500,
        analysis_seconds: float = ANALYSIS_SECONDS,
        max_terms: int = MAX_TERMS,
        num_distinct_actions: int | None = None,
        missing_goal: MissingGoal = "assume",
        cache_size: int = 200_000,
        seed: int = 0,
        engine: Engine = "auto",
        grounding_budget: GroundingBudget | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.name = os.path.basename(self.path)
        self.options: dict[str, Any] = {
            "dynamics": dynamics, "utility": utility, "analysis_states": analysis_states,
            "analysis_edges": analysis_edges, "analysis_steps": analysis_steps,
            "analysis_seconds": analysis_seconds,
            "max_terms": max_terms, "num_distinct_actions": num_distinct_actions,
            "missing_goal": missing_goal, "cache_size": cache_size, "seed": seed,
            "engine": engine, "grounding_budget": grounding_budget,
        }
        if utility not in ("auto", "zero_sum", "general_sum"):
            raise AdapterError(
                f"{self.name}: utility must be 'auto', 'zero_sum' or 'general_sum', "
                f"not {utility!r}"
            )
        description = read_game(self.path)
        try:
            #: The machine play steps through: the reasoner, or the compiled network.
            self.sm: GameMachine = load_description(
                description, engine, name=self.name, budget=grounding_budget
            )
        except ValueError as e:  # an engine that is none of ENGINES
            raise AdapterError(f"{self.name}: {e}") from None
        #: The Prolog reasoner: what the analyses (``gdl_kind.pl``) query, any engine.
        self.reasoner: StateMachine = (
            self.sm.prolog
            if isinstance(self.sm, (CompiledMachine, AutoMachine))
            else cast(StateMachine, self.sm)
        )
        if missing_goal is None:
            missing_goal = "error"
        if not (isinstance(missing_goal, int) or missing_goal in ("assume", "error")):
            raise AdapterError(
                f"{self.name}: missing_goal must be a goal value, 'assume' or 'error', "
                f"not {missing_goal!r}"
            )
        self.missing_goal_mode = missing_goal
        self.analysis_seconds = analysis_seconds
        #: The goal a role without one gets in a terminal state, or None: an error.
        self.missing_goal: int | None = (
            MISSING_GOAL_ASSUMED if missing_goal == "assume"
            else None if missing_goal == "error" else int(missing_goal)
        )
        #: The first terminal state met where a role had no goal (text), or "".
        self.missing_goal_met = ""
        self.description = description
        #: The analyses this load ran ("reachability", "kind"), as opposed to those it was
        #: given (a pickled game's, an RLlib worker's config) or found kept.
        self.analysed: list[str] = []
        self.dynamics_option = dynamics
        self.utility_option: Utility = utility
        try:
            if any(
                isinstance(r.head, Func) and r.head.name == "sees" and len(r.head.args) == 2
                for _, r in self.reasoner.translation.origins
            ):
                raise AdapterError(
                    f"{self.name}: a GDL-II game with hidden information (sees): its "
                    "observations would show the state; load it with "
                    "gdl2pl.openspiel.load_imperfect_game or gdl2pl.pettingzoo.imperfect"
                )
            self._setup(description, max_terms, num_distinct_actions)
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
                shipped = _SHIPPED_KINDS.pop(self._kind_key(), None)
                if shipped is not None:  # analysed where the game was pickled
                    self.kind, met = shipped
                    if met:
                        self.note_missing_goal(met, None)
                else:
                    self.kind = self.analyse(
                        analysis_states, analysis_edges, analysis_steps, seed
                    )
                    self.analysed.append("kind")
                if dynamics == "sequential" and self.kind.proved and not self.kind.turn_taking:
                    raise AdapterError(f"{self.name}: not turn-taking: several roles choose")
                self.turn_taking = dynamics == "sequential" or self.kind.turn_taking
            self._check_declared_utility()
        except BaseException:
            self.sm.close()
            raise
        _LOADED[_game_key(self.path, self.options)] = self

    # -- static tables ------------------------------------------------------------------

    def _setup(
        self, description: Description, max_terms: int, num_distinct_actions: int | None
    ) -> None:
        sm = self.sm
        self.roles: tuple[Term, ...] = sm.roles
        declared = [sm.input_moves(r) for r in self.roles]
        base = sm.base_propositions
        self.actions_from: Source = "input" if all(declared) else "reachability"
        self.base_from: Source = "base" if base else "reachability"
        self.domain_note = ""
        #: What checking the declared base against the reachability analysis found.
        self.base_note = ""
        #: The reachability analysis' supersets of the fluents and moves, if it finished.
        self.reachable: Reachable | None = None
        if base and all(declared):
            base = self._with_undeclared(description, base, max_terms)
        elif not all(declared) or not base:
            try:
                reach = self.reachable = self._reachable(description, max_terms)
            except DomainExplosionError as e:
                self.domain_note = str(e)
                if not all(declared):
                    self.actions_from = "first-seen"
                    declared = [[] for _ in self.roles]
                if not base:
                    self.base_from = "first-seen"
            else:
                if not all(declared):
                    declared = [sorted(reach.moves[r], key=kif_term) for r in self.roles]
                if not base:
                    base = list(reach.fluents)
                else:
                    base = self._add_undeclared(base, reach.fluents)
        self.moves: tuple[list[Term], ...] = tuple(
            sorted(set(ms), key=kif_term) for ms in declared
        )
        if self.actions_from == "first-seen":
            bound = num_distinct_actions or LAZY_ACTIONS
            self.action_space_sizes: tuple[int, ...] = tuple(bound for _ in self.roles)
        else:
            if num_distinct_actions is not None:
                raise AdapterError(
                    f"{self.name}: num_distinct_actions is for games whose moves are numbered "
                    f"as first seen; its moves come from {self.actions_from}"
                )
            self.action_space_sizes = tuple(len(ms) for ms in self.moves)
        for role, n in zip(self.roles, self.action_space_sizes, strict=True):
            if not n:
                raise AdapterError(f"{self.name}: role {role} has no possible move")
            if n > MAX_ACTIONS:
                raise AdapterError(
                    f"{self.name}: role {role} has {n} distinct moves, more than an "
                    f"action space may hold ({MAX_ACTIONS})"
                )
        self.action_of: tuple[dict[Term, int], ...] = tuple(
            {m: i for i, m in enumerate(ms)} for ms in self.moves
        )
        self.num_actions = max(self.action_space_sizes)
        self.base: list[Term] = sorted(set(base), key=kif_term)
        self.observation_size = LAZY_FLUENTS if self.base_from == "first-seen" else len(self.base)
        self.base_index: dict[Term, int] = {f: i for i, f in enumerate(self.base)}
        self.board: BoardLayout | None = (
            None
            if self.base_from == "first-seen"
            else board_layout(self.base, game_rules(sm))
        )
        # The bridge hands out one object per distinct move or fluent; these memos find
        # its index by identity, without hashing the term again (the object is kept, so
        # its id is not reused).
        self._action_memo: tuple[dict[int, tuple[Term, int]], ...] = tuple({} for _ in self.roles)
        self._base_memo: dict[int, tuple[Term, int]] = {}
        # Symbol ids (``StateMachine.step_symbols``) -> action ids per role, and ->
        # base indices: learnt on first sight.
        self._symbol_action: tuple[dict[int, int], ...] = tuple({} for _ in self.roles)
        self._symbol_base: dict[int, int] = {}

    @cached_property
    def mover_orders(self) -> tuple[Any, ...] | None:
        """Per role, the order of the board's planes (``BoardLayout.observation_planes``)
        seen from its side (``BoardLayout.mover_first``: its own pieces first, then those
        of the roles after it in turn, as OpenSpiel's and pgx's board games give them),
        as numpy index arrays; None for a game without a board."""
        layout = self.board
        if layout is None:
            return None
        names = [str(r) for r in self.roles]
        owners = content_owners(layout.geometry, names, game_rules(self.reasoner))
        rest = [fluent_owner(self.base[i], names) for i in layout.rest]
        return tuple(layout.mover_first(i, len(names), owners, rest) for i in range(len(names)))

    @cached_property
    def rules_key(self) -> str:
        """The hash of the game's normalized rules that its analyses are kept under."""
        return rules_key(self.description)

    def _reachable(self, description: Description, max_terms: int) -> Reachable:
        """The reachability analysis' tables (``reach.py``): kept ones when the rules
        were analysed before (``table_cache``), else computed and kept; then held to
        ``max_terms``."""
        key = self.rules_key
        found = recall(key, self.roles)
        if found is None:
            found = reachable_domains(description, self.roles, self.name, sys.maxsize)
            self.analysed.append("reachability")
            store(key, self.roles, found)
        return bounded(found, self.name, max_terms)

    def _with_undeclared(
        self, description: Description, base: list[Term], max_terms: int
    ) -> list[Term]:
        """The declared base, with the fluents the reachability analysis finds that it
        omits (past the analysis' bounds, the declared base alone)."""
        try:
            reach = self.reachable = self._reachable(description, max_terms)
        except DomainExplosionError as e:
            self.base_note = f"the declared base is not checked against the rules: {e}"
            return base
        return self._add_undeclared(base, reach.fluents)

    def _add_undeclared(self, base: list[Term], reachable: frozenset[Term]) -> list[Term]:
        """``base`` and the ``reachable`` fluents it omits, with an
        ``UndeclaredFluentWarning`` naming some of them (as ggp-base's prover, play does
        not stop at a fluent the game's ``base`` leaves out)."""
        declared = set(base)
        extra = sorted((f for f in reachable if f not in declared), key=kif_term)
        if not extra:
            return base
        self.base_from = "base+reachability"
        named = ", ".join(kif_term(f) for f in extra[:3]) + (", ..." if len(extra) > 3 else "")
        self.base_note = (
            f"the declared base omits {len(extra)} fluents the rules may reach ({named}): "
            "added from the reachability analysis"
        )
        warnings.warn(f"{shown(self.name)}: {shown(self.base_note, 1000)}",
                      UndeclaredFluentWarning, stacklevel=5)
        return [*base, *extra]

    def _number_action(self, role: int, move: Term) -> int | None:
        """The action id of a move first seen now (numbering as first seen), or None."""
        if self.actions_from != "first-seen":
            return None
        ms = self.moves[role]
        if len(ms) >= self.action_space_sizes[role]:
            raise UnrepresentableStateError(
                f"{self.name}: role {self.roles[role]} has more than "
                f"{self.action_space_sizes[role]} distinct moves (num_distinct_actions); "
                f"the move {move} has no action id"
            )
        ms.append(move)
        self.action_of[role][move] = len(ms) - 1
        return len(ms) - 1

    def _number_fluent(self, fluent: Term) -> int | None:
        if self.base_from != "first-seen":
            return None
        if len(self.base) >= self.observation_size:
            raise UnrepresentableStateError(
                f"{self.name}: more than {self.observation_size} distinct fluents; the fluent "
                f"{fluent} has no observation entry"
            )
        self.base.append(fluent)
        self.base_index[fluent] = len(self.base) - 1
        return len(self.base) - 1

    def __deepcopy__(self, memo: dict[int, object]) -> GdlGame:
        return self  # shared by every state and copy (libraries deep-copy states)

    @classmethod
    def shared(cls, path: str | os.PathLike[str], **options: Any) -> GdlGame:
        """The game of ``path`` loaded with ``options`` in this process (by absolute path
        and every option), or a new one: libraries that rebuild a game from its name
        (OpenSpiel's deserialization) share one reasoner."""
        full = {**_defaults(), **options}
        game = _LOADED.get(_game_key(os.fspath(path), full))
        return game if game is not None else cls(path, **options)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its file and options, its analyses (``travel_pack``) and a
        first-seen numbering (which depends on play): unpickled, it is the game of that
        key already loaded in the process, or is loaded again without analysing again."""
        tables = (
            [[kif_term(m) for m in ms] for ms in self.moves]
            if self.actions_from == "first-seen"
            else None,
            [kif_term(f) for f in self.base] if self.base_from == "first-seen" else None,
        )
        return (_shared_game, (self.path, dict(self.options), tables, self._fingerprint(),
                               self.travel_pack()))

    def travel_pack(self) -> dict[str, Any]:
        """The game's analyses as JSON-able data, for another process or machine to load
        the game without analysing it again (``unpack``): the reachability tables (JSON
        text, or None when the game declares its tables or the analysis gave up), the
        game kind, and the options it depends on. Only ever read for the same rules: each
        part is found by the hash of the rules it was made from."""
        k = self.kind
        kind = None if self.dynamics_option == "simultaneous" else {
            "key": list(self._kind_key()),
            "kind": [k.turn_taking, k.proved, k.states, k.max_depth, sorted(k.return_sums),
                     k.layered],
            "missing_goal_met": self.missing_goal_met,
        }
        tables = None if self.reachable is None else to_json(
            self.rules_key, self.roles, self.reachable)
        return {"tables": tables, "kind": kind, "tables_hash": self.tables_hash}

    @staticmethod
    def unpack(pack: dict[str, Any]) -> None:
        """Make this process know a game's analyses from its ``travel_pack``: the next
        load of the same rules (with the same analysis options) uses them instead of
        analysing; ``tables_hash`` of that game then checks they agree."""
        if pack.get("tables") is not None:
            remember_json(pack["tables"])
        kind = pack.get("kind")
        if kind is not None:
            turn, proved, states, depth, sums, layered = kind["kind"]
            _SHIPPED_KINDS[tuple(kind["key"])] = (
                Kind(bool(turn), bool(proved), int(states), int(depth),
                     frozenset(float(x) for x in sums), bool(layered)),
                str(kind.get("missing_goal_met") or ""),
            )

    def _kind_key(self) -> tuple[object, ...]:
        """What the game-kind search's verdict depends on: the rules and its options."""
        o = self.options
        return (self.rules_key, o["analysis_states"], o["analysis_edges"], o["analysis_steps"],
                o["seed"], o["analysis_seconds"], str(self.missing_goal_mode))

    @cached_property
    def tables_hash(self) -> str:
        """A SHA-256 (hex) of the action and observation tables: per role its moves in
        action-id order, the base propositions in observation order, and where they come
        from. Equal hashes, equal ids. With moves or fluents numbered as first seen (which
        grows with play) it covers only where they come from and the bounds."""
        first_seen = "first-seen" in (self.actions_from, self.base_from)
        body = [
            self.actions_from, self.base_from, list(self.action_space_sizes),
            self.observation_size,
            None if first_seen else [[kif_term(m) for m in ms] for ms in self.moves],
            None if first_seen else [kif_term(f) for f in self.base],
        ]
        return hashlib.sha256(json.dumps(body).encode()).hexdigest()

    def _fingerprint(self) -> tuple[object, ...]:
        """What must agree where a game is unpickled for its ids to mean the same."""
        return (self.actions_from, self.base_from, self.tables_hash)

    @property
    def num_roles(self) -> int:
        return len(self.roles)

    @property
    def initial_state(self) -> MachineState:
        return self.sm.initial_state

    @property
    def engine_choice(self) -> EngineChoice:
        """Which engine steps the game now, and why (``auto``: the reasoner until the
        network is in)."""
        return self.sm.engine_choice

    def close(self) -> None:
        """Unload the game; later loads of its file make a new one."""
        key = _game_key(self.path, self.options)
        if _LOADED.get(key) is self:
            del _LOADED[key]
        self.sm.close()

    # -- per state ----------------------------------------------------------------------

    def draw(self, state: MachineState) -> str:
        """A picture of ``state`` on the board the base propositions form (the geometry of
        the observation planes, ``gdl2pl.board``), or its fluents when they form none."""
        return render_state(state, None if self.board is None else self.board.geometry)

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
                    for m in ms:
                        if m not in table and self._number_action(i, m) is None:
                            raise self._not_an_action(state, i, m) from None
                    actions.append([table[m] for m in ms])
            node = self._moving_node(state, actions)
        self._remember(self._nodes, state, node)
        return node

    def _terminal_node(self, state: MachineState, goals: Sequence[Sequence[int | str]]) -> Node:
        returns = []
        for role, vs in zip(self.roles, goals, strict=True):
            if not vs and self.missing_goal is not None:
                vs = [self.missing_goal]
                self.note_missing_goal(_short(state), role)
            if len(vs) != 1 or not isinstance(vs[0], int):
                what = "no goal value" if not vs else f"goal values {list(vs)}"
                hint = " (missing_goal= gives such a role a value)" if not vs else ""
                raise UnrepresentableStateError(
                    f"{self.name}: role {role} has {what} in the terminal state "
                    f"{_short(state)}{hint}"
                )
            returns.append(goal_return(vs[0]))
        if self.utility_option == "zero_sum" and round(sum(returns), 9) != 0:
            raise UnrepresentableStateError(
                f"{self.name}: loaded with utility='zero_sum', but the returns "
                f"{returns} of the terminal state {_short(state)} sum to {sum(returns):g}"
            )
        return Node(True, tuple(() for _ in self.roles), tuple(returns), -1)

    def _check_declared_utility(self) -> None:
        """A declared ``zero_sum`` against the terminal states the analysis met."""
        if self.utility_option != "zero_sum":
            return
        other = sorted(s for s in self.kind.return_sums if s != 0.0)
        if other:
            raise AdapterError(
                f"{self.name}: loaded with utility='zero_sum', but terminal states the "
                f"analysis met have returns summing to {other}"
            )

    def note_missing_goal(self, state: str, role: object | None) -> None:
        """Note that ``role`` (None: some role) has no goal value in the terminal state
        ``state`` (its text): the first time, ``missing_goal_met`` keeps it and, with
        ``missing_goal="assume"``, a ``MissingGoalWarning`` says what was assumed (a
        batch reports the states its games meet here too)."""
        if self.missing_goal_met:
            return
        self.missing_goal_met = state
        if self.missing_goal_mode == "assume":
            warnings.warn(
                f"{shown(self.name)}: "
                f"{'a role' if role is None else f'role {shown(str(role))}'} has no goal "
                f"value in the terminal state {shown(state, 300)} "
                f"(the game is not well-formed); assumed {self.missing_goal}. "
                "Choose the value with missing_goal=<int>, or refuse such states with "
                "missing_goal='error'",
                MissingGoalWarning,
                stacklevel=4,
            )

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
        return Position(state, self.node(state), self)

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
                action = self._number_action(role, move)
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
            i = self._number_fluent(fluent)
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
        vec = [0] * self.observation_size
        index = self.base_index
        memo = self._base_memo
        for f in state:
            try:
                i = _lookup(memo, index, f)
            except KeyError:
                j = self._number_fluent(f)
                if j is None:
                    raise self._not_a_base(state, f) from None
                i = j
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
        # In a thread of its own: a deadline that strikes inside tabling can leave the
        # thread's tabling state broken (SWI-Prolog 9.2: later questions of that game
        # fail with "Tabling dependency error"); the worker's engine goes with it.
        def search() -> Any:
            with interrupt_after(self.analysis_seconds), self.reasoner.using():
                return janus.apply_once(
                    KIND_MODULE,
                    "kind_search",
                    self.reasoner.module,
                    max_states,
                    max_edges,
                    max_steps,
                    seed % 2_147_483_648,
                    ANALYSIS_INFERENCES,
                    "none" if self.missing_goal is None else int(self.missing_goal),
                )

        verdict, states, max_depth, sums, bad, missed, layered = run_interruptibly(search)
        if missed:
            met = MachineState.from_fluents(py_term(f) for f in missed)
            self.note_missing_goal(_short(met), None)
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
            layered=layered == "true",
        )

    def gdl_metadata(self) -> dict[str, Claim]:
        """What the adapters claim about the game, each with how it is known: ``proved``
        (from the rules or an exhaustive search), ``declared`` (the game's ``input`` or
        ``base``), ``assumed`` (a default or a sample that may be wrong) or ``chosen``
        (a loading option)."""
        k = self.kind
        out: dict[str, Claim] = {
            "actions": Claim(self.actions_from, _table_status(self.actions_from),
                            self.domain_note or f"{self.num_actions} action ids"),
            "observation": Claim(self.base_from, _table_status(self.base_from),
                                f"{self.observation_size} entries"
                                + (f"; {self.base_note}" if self.base_note else "")),
        }
        if self.dynamics_option != "auto":
            out["dynamics"] = Claim(
                "sequential" if self.turn_taking else "simultaneous", "chosen",
                f"loaded with dynamics={self.dynamics_option!r}")
        elif k.proved:
            out["dynamics"] = Claim("sequential" if k.turn_taking else "simultaneous", "proved",
                                   f"all {k.states} reachable states enumerated")
        elif not k.turn_taking:
            out["dynamics"] = Claim("simultaneous", "proved",
                                   "a reachable state where two roles choose was found")
        elif (control := turn_control(self.description)) is not None:
            out["dynamics"] = Claim("sequential", "proved",
                                    f"only the role named by the '{control}' fluent chooses")
        else:
            out["dynamics"] = Claim("sequential", "assumed",
                                   f"{k.states} states enumerated, then random matches")
        low, high, how = self.goal_range
        out["utility_range"] = Claim(
            (goal_return(low), goal_return(high)), "proved" if how == "proved" else "assumed",
            how if how != "proved" else "the goal values the goal rules can give")
        if k.proved:
            sums = sorted(k.return_sums)
            kind = "zero-sum" if sums == [0.0] else "constant-sum" if len(sums) == 1 else (
                "general-sum")
            out["utility"] = Claim(kind, "proved",
                                  f"return sums {sums} over every reachable terminal state")
            out["max_game_length"] = (
                Claim(k.max_depth, "proved", "the longest play enumerated")
                if k.layered
                else self.length_claim
            )
        else:
            ruled = self._rule_sum
            if ruled is not None and self.sum_proof is not None:
                out["utility"] = Claim(
                    "zero-sum" if ruled == 0.0 else "constant-sum", "proved",
                    f"returns sum to {ruled}: {self.sum_proof.reason}")
            else:
                out["utility"] = Claim("general-sum", "assumed",
                                      "not every reachable terminal state was enumerated, "
                                      "and the terminal and goal rules do not prove a "
                                      "constant sum")
            out["max_game_length"] = self.length_claim
        if self.utility_option != "auto":
            out["utility"] = Claim(
                self.utility_option.replace("_", "-"), "chosen",
                f"loaded with utility={self.utility_option!r}"
                + ("; checked in every terminal state met" if self.zero_sum else ""))
        if self.missing_goal_met and "utility" in out:
            u = out["utility"]
            out["utility"] = Claim(u.value, u.status, f"{u.how}; counting the goal "
                                   f"{self.missing_goal} of roles without one (missing_goal)")
        out["missing_goal"] = self._missing_goal_claim()
        return out

    @cached_property
    def length_claim(self) -> Claim:
        """The bound on the length of every play the rules prove (the least, if more
        than one does): a step counter, or a measure every step moves (``length_bound``);
        else "assumed". Each proof is sound on its own; as a second guard, a bound that a
        play seen by the game-kind search exceeds is not claimed, and where the search
        played none (it was skipped, or stopped early) one random match is played to one
        step past the bound, when that is within ``analysis_steps`` (for at most
        ``analysis_seconds``)."""
        proofs: list[LengthBound] = []
        counted = step_counter_bound(self.description)
        if counted is not None:  # enough: a game with a step counter is seldom shorter
            proofs.append(LengthBound(counted[0], f"the step counter '{counted[1]}' ends the game"))
        elif self.length_bound is not None:
            proofs.append(self.length_bound)
        k = self.kind
        seen = k.max_depth
        if not proofs:
            if k.proved:  # enumerated, but a move leads back: max_depth is no play's length
                return Claim(None, "assumed", f"no bound proved: all {k.states} reachable "
                             "states were enumerated, but a move leads back to an earlier "
                             "level (a cycle, or two ways of different lengths to a state)")
            return Claim(None, "assumed", f"no bound proved; longest play seen {seen}")
        best = min(proofs, key=lambda b: b.steps)
        if seen == 0 and not k.proved and best.steps < self.options["analysis_steps"]:
            seen = self._walk(best.steps + 1)
        if best.steps < seen:  # a defect of the proof: never claim what a play refutes
            warnings.warn(
                f"{shown(self.name)}: a play of {seen} steps was seen, longer than the bound "
                f"proved ({best.steps}: {shown(best.reason, 300)}); the bound is not claimed",
                RuntimeWarning,
                stacklevel=3,
            )
            return Claim(None, "assumed", f"the bound proved ({best.steps}) is refuted by a "
                         f"play of {seen} steps")
        return Claim(best.steps, "proved", best.reason)

    def _walk(self, limit: int) -> int:
        """The steps of one random match, cut at ``limit`` steps or ``analysis_seconds``
        (ended early where a role has no legal move)."""
        deadline = time.monotonic() + self.analysis_seconds
        rng = random.Random(self.options["seed"])
        state, steps = self.sm.initial_state, 0
        legal = self.sm.all_legal_moves(state) if not self.sm.is_terminal(state) else []
        while legal and all(legal) and steps < limit and time.monotonic() < deadline:
            step = self.sm.step(state, [rng.choice(ms) for ms in legal])
            state, steps = step.state, steps + 1
            legal = [] if step.terminal else [list(ms) for ms in step.legal]
        return steps

    @cached_property
    def length_bound(self) -> LengthBound | None:
        """The bound ``gdl2pl.length_bound`` proves from the rules and the reachability
        analysis' supersets (None without them, or when no measure applies); proved once,
        when first asked for."""
        if self.reachable is None:
            return None
        r = self.reachable
        return prove_length_bound(self.description, r.fluents, r.moves)

    def _missing_goal_claim(self) -> Claim:
        met = (f"met in {self.missing_goal_met}" if self.missing_goal_met
               else "none met so far")
        if self.missing_goal_mode == "error":
            return Claim(None, "chosen", "a terminal state without a goal is an error")
        if self.missing_goal_mode != "assume":
            return Claim(self.missing_goal, "chosen",
                         f"the goal of a role without one in a terminal state; {met}")
        if self.kind.proved and not self.missing_goal_met:
            return Claim(None, "proved", "every reachable terminal state gives every role "
                         "one goal (all reachable states enumerated)")
        return Claim(self.missing_goal, "assumed",
                     f"the goal of a role without one in a terminal state; {met}")

    @property
    def goal_range(self) -> tuple[int, int, str]:
        """The lowest and highest goal value, and ``proved`` if every goal rule of the
        game names its value (else the GDL range 0..100, with the reason)."""
        values = {self._filled_goal} if self._filled_goal is not None else set()
        for c in self.description.clauses:
            if c.head.name.casefold() != "goal" or not isinstance(c.head, Func):
                continue
            if len(c.head.args) != 2 or not isinstance(c.head.args[1], Const):
                return 0, 100, "a goal rule computes its value: GDL's range 0..100 assumed"
            try:
                values.add(int(c.head.args[1].name))
            except ValueError:
                return 0, 100, f"goal value {c.head.args[1].name} is not a number"
        if not values:
            return 0, 100, "no goal rule"
        return min(values), max(values), "proved"

    @property
    def _filled_goal(self) -> int | None:
        """The goal a role may get for lacking one: None when that is an error, or when
        the enumeration of every reachable state met no such terminal state."""
        kind = getattr(self, "kind", None)
        if self.missing_goal_mode == "assume" and kind is not None and kind.proved and (
            not self.missing_goal_met
        ):
            return None
        return self.missing_goal

    @property
    def zero_sum(self) -> bool:
        """Zero-sum: every reachable terminal state's returns add up to 0, proved, or
        declared with ``utility='zero_sum'`` (and checked in every terminal state met).
        False when loaded with ``utility='general_sum'``."""
        if self.utility_option != "auto":
            return self.utility_option == "zero_sum"
        if self.kind.proved:
            return self.kind.return_sums <= {0.0}
        return self._rule_sum == 0.0

    @property
    def constant_sum(self) -> float | None:
        """The proved constant sum of returns, if there is one (by enumeration, or from
        the rules: ``sum_proof``), or 0 declared with ``utility``."""
        if self.utility_option != "auto":
            return 0.0 if self.utility_option == "zero_sum" else None
        if self.kind.proved:
            if len(self.kind.return_sums) == 1:
                return next(iter(self.kind.return_sums))
            return None
        return self._rule_sum

    @property
    def _rule_sum(self) -> float | None:
        """The constant sum of returns the rules prove (``sum_proof``), or None."""
        proof = self.sum_proof
        if proof is None:
            return None
        return round((proof.total - 50 * self.num_roles) / 50, 9)

    @cached_property
    def sum_proof(self) -> SumProof | None:
        """The goal sum the rules prove at every reachable end, counting the goal a role
        without one gets (``missing_goal``): from goal rules of one body
        (``rule_shapes.goal_sum``), else from the terminal and goal rules together with
        the reachability analysis' supersets (``gdl2pl.sum_proof``); proved once, when
        first asked for (only asked when the states were not all enumerated)."""
        filled = self._filled_goal
        total = goal_sum(self.description)
        if total is not None and (filled is None or filled * self.num_roles == total):
            return SumProof(total, "goal rules of one body give every role its value")
        r = self.reachable
        return prove_goal_sum(
            self.description, filled, r.fluents if r else None, r.moves if r else None
        )


#: The games loaded in this process, by file and options: what an unpickled game is.
_LOADED: weakref.WeakValueDictionary[tuple[object, ...], GdlGame] = (
    weakref.WeakValueDictionary()
)


def _game_key(path: str, options: dict[str, Any]) -> tuple[object, ...]:
    return (os.path.abspath(path), *sorted(options.items()))


#: Game kinds brought by a pickled game or a travel pack, by ``GdlGame._kind_key``:
#: taken (once) by the next load of the same rules with the same options.
_SHIPPED_KINDS: dict[tuple[object, ...], tuple[Kind, str]] = {}


def _shared_game(
    path: str,
    options: dict[str, Any],
    tables: tuple[Any, Any] = (None, None),
    fingerprint: tuple[object, ...] | None = None,
    pack: dict[str, Any] | None = None,
) -> GdlGame:
    if pack is not None:
        GdlGame.unpack(pack)
    game = GdlGame.shared(path, **options)
    if fingerprint is not None and game._fingerprint() != fingerprint:
        raise AdapterError(
            f"{game.name}: loaded here, its action and observation tables differ from "
            f"where it was pickled ({game._fingerprint()} here, {fingerprint} there)"
        )
    moves, base = tables
    if moves is not None:  # numbered as first seen: the same numbers as where it came from
        for role, texts in enumerate(moves):
            for text in texts[len(game.moves[role]):]:
                game._number_action(role, game.sm.term(text))
            if [kif_term(m) for m in game.moves[role]] != texts:
                raise AdapterError(f"{game.name}: its first-seen move numbers differ here")
    if base is not None:
        for text in base[len(game.base):]:
            game._number_fluent(game.sm.term(text))
        if [kif_term(f) for f in game.base] != base:
            raise AdapterError(f"{game.name}: its first-seen fluent numbers differ here")
    return game


def _defaults() -> dict[str, Any]:
    import inspect

    return {
        n: p.default
        for n, p in inspect.signature(GdlGame.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _position(game: GdlGame, fluents: list[str]) -> Position:
    return game.position(MachineState.from_fluents(fluents))


def _lookup(memo: dict[int, tuple[Term, int]], table: dict[Term, int], term: Term) -> int:
    """``table[term]``, remembered by the object's identity; ``KeyError`` if absent."""
    hit = memo.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    i = table[term]
    if len(memo) < MAX_MEMO:
        memo[id(term)] = (term, i)
    return i
