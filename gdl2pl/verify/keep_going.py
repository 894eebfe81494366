"""``verify --keep-going``: every divergence of a game, not only the first, counted by kind.

The engine protocol has no way to hand the engine a state, so after a divergence gdl2pl
resynchronises itself: it judges each later step from the state the *engine* reported
before it (the state the engine went on from), with the same joint move. A bug is then
reported where it happens, once, instead of again at every later step it spoils: a fluent
dropped at step 3 is one divergence at step 3, and a legal move missing at step 5 one at
step 5, even though the engine's states differ from gdl2pl's from step 3 on. Where the
engine's state cannot be judged from (a fact that is not a term of the game, a malformed
record, a joint move that is illegal there), gdl2pl judges from its own state instead
and the result says so in ``notes``.

Steps before the first divergence of a match are compared with the records gdl2pl made
when it played the match, as without ``--keep-going``: the flag costs nothing until
something diverges. Records are judged as they arrive (``judging.Judge``); a line of the
engine's output that is no record is skipped and reported as a protocol fault.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gdl2pl.contract import MachineState

from .divergence import divergence_at
from .divergence import finish
from .divergence import out_of_place
from .divergence import states_along
from .engine import EngineRun
from .judging import END
from .judging import GameJudge
from .judging import Steps
from .oracle_link import Record
from .oracle_link import StateMachine
from .oracle_link import state_record
from .records import Difference
from .records import MalformedRecord
from .records import compare

#: Divergences reported in full (with gdl2pl's reasons) per game; later ones are counted
#: and listed without reasons, and past ``MAX_LISTED`` only counted.
MAX_EXPLAINED = 20
MAX_LISTED = 200
#: Facts of one side of a difference kept for each listed divergence.
MAX_FACTS = 100


def kind_of(d: Difference) -> str:
    """The kind a difference is counted under: its field, with its kind unless it simply
    differs (``state``, ``legal (duplicate)``, ``state (unsorted)``, ``record
    (malformed)``)."""
    return d.field if d.kind == "differs" else f"{d.field} ({d.kind})"


class _Tally:
    """The divergences of one game as they are found."""

    def __init__(self) -> None:
        #: What each listed divergence's report is made from (made at the end, so that
        #: explaining them takes none of the engine's time).
        self.found: list[tuple[int, int, list[list[str]], list[Difference], Any, Any]] = []
        self.counts: dict[str, int] = {}
        self.total = 0
        self.notes: list[str] = []

    def add(
        self,
        match: int,
        step: int,
        moves: list[list[str]],
        diffs: list[Difference],
        state: MachineState,
        previous: MachineState | None,
    ) -> None:
        self.total += 1
        for d in diffs:
            self.counts[kind_of(d)] = self.counts.get(kind_of(d), 0) + 1
        if len(self.found) < MAX_LISTED:
            kept = [self._cut(match, step, d) for d in diffs]
            self.found.append((match, step, moves[:step], kept, state, previous))

    def _cut(self, match: int, step: int, d: Difference) -> Difference:
        """``d`` with at most ``MAX_FACTS`` facts a side (a note says how many there
        were): the listed divergences of an engine that prints huge states stay small."""
        if len(d.only_gdl2pl) <= MAX_FACTS and len(d.only_engine) <= MAX_FACTS:
            return d
        self.note(
            f"match {match} step {step}: {kind_of(d)} differs in {len(d.only_gdl2pl):,} "
            f"facts only gdl2pl has and {len(d.only_engine):,} only the engine has; "
            f"the first {MAX_FACTS} of each are listed"
        )
        return replace(
            d, only_gdl2pl=d.only_gdl2pl[:MAX_FACTS], only_engine=d.only_engine[:MAX_FACTS]
        )

    def reports(self, sm: StateMachine) -> list[dict[str, Any]]:
        """The listed divergences' reports, the first ``MAX_EXPLAINED`` with gdl2pl's
        reasons."""
        return [
            divergence_at(sm, *found, explain=n < MAX_EXPLAINED)
            for n, found in enumerate(self.found)
        ]

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 20:
            self.notes.append(text)


def _engine_state(sm: StateMachine, record: Any) -> MachineState | None:
    """The state an engine's record reports, as gdl2pl's terms; None if it cannot be read
    as one (not a list of terms of the game)."""
    try:
        return MachineState.from_fluents(sm.term(f) for f in record["state"])
    except Exception:
        return None


class _Match:
    """gdl2pl's side of one match while its records are compared."""

    def __init__(self, sm: StateMachine, match: int, moves: list[list[str]]) -> None:
        self.sm = sm
        self.match = match
        self.moves = moves
        #: None while no step diverged: the recorded records are gdl2pl's answers.
        #: Else, for the step just compared: (gdl2pl's own state, the state the next step
        #: is judged from).
        self.states: tuple[MachineState, MachineState] | None = None

    def expected(self, recorded: Record, tally: _Tally) -> tuple[Record, MachineState | None]:
        """gdl2pl's record for the step of ``recorded`` (and the state it was judged from,
        None at step 0 or before any divergence)."""
        if self.states is None or "error" in recorded:
            return recorded, None
        own, basis = self.states
        step = int(recorded["step"])
        joint = [self.sm.term(m) for m in self.moves[step - 1]]
        own_next = self.sm.next_state(own, joint)
        if basis is own:
            state = own_next
        else:
            try:
                state = self.sm.next_state(basis, joint)
            except Exception:  # illegal in the engine's state: judge from gdl2pl's own
                tally.note(
                    f"match {self.match} step {step}: the joint move is not legal in the "
                    "state the engine reported before it; judged from gdl2pl's own state"
                )
                state, basis = own_next, own
        self.states = (own_next, state)
        rec = state_record(self.sm, state, self.match, step)
        rec["move"] = recorded.get("move")
        return rec, basis

    def judged_at(
        self, step: int, basis: MachineState | None
    ) -> tuple[MachineState | None, MachineState]:
        """(the state ``step`` was judged from, the state judged) for a step that
        diverged; before any divergence, gdl2pl's own states, replayed from the start."""
        if self.states is None:
            previous, state = states_along(self.sm, self.moves[:step])
            self.states = (state, state)
            return previous, state
        return basis, self.states[1]

    def went_on_from(self, step: int, theirs: Any, agreed: bool, tally: _Tally) -> None:
        """After comparing ``step``: the next step is judged from the engine's state
        (``theirs``) unless the engine agreed, or its state cannot be read."""
        if self.states is None:  # no divergence yet (judged_at sets the states)
            return
        own, state = self.states
        engine = _engine_state(self.sm, theirs) if isinstance(theirs, dict) else None
        if agreed or engine is None or engine == state:
            if not agreed and engine is None:
                tally.note(
                    f"match {self.match} step {step}: the engine's state is not made of "
                    "terms of this game; the next step is judged from gdl2pl's state"
                )
            self.states = (own, state)
        else:
            self.states = (own, engine)


class EveryDivergence(GameJudge):
    """Compares every step of every match as the engine's records arrive."""

    def begin(self) -> None:
        self.tally = _Tally()
        self.taken = 0  # records matched to a step (or skipped as past a match's end)
        self.surplus = False  # the engine printed records past the last match

    def compare(self) -> Steps:
        sm, tally = self.sm, self.tally
        other = yield
        for n, ours in enumerate(self.mine):
            m = int(ours[0]["match"]) if ours else n
            game = _Match(sm, m, self.move_lists[n])
            for rec in ours:
                step = int(rec["step"])
                if other is END:
                    self.missing = f"none for match {m} step {step}"
                    return True
                ahead = isinstance(other, dict) and isinstance(other.get("match"), int)
                if ahead and other["match"] > m:  # the engine ended this match early
                    tally.note(f"match {m}: the engine's records end at step {step - 1}")
                    break
                self.problem = out_of_place(rec, other)
                if self.problem:
                    return True
                self.taken += 1
                expected, basis = game.expected(rec, tally)
                try:
                    diffs = compare(expected, other)
                except MalformedRecord as e:
                    diffs = [Difference("record", None, [], [str(e)], kind="malformed")]
                self.compared += 1
                if diffs:
                    previous, state = game.judged_at(step, basis)
                    tally.add(m, step, self.move_lists[n], diffs, state, previous)
                game.went_on_from(step, other, not diffs, tally)
                ended = "error" in expected or "error" in other
                other = yield
                if ended:
                    break  # a match ends at an error record, on either side
            while other is not END and isinstance(other, dict) and other.get("match") == m:
                tally.note(f"match {m}: the engine has records past the end of the match")
                self.taken += 1
                other = yield
        self.surplus = other is not END
        return False

    def result(self, run: EngineRun) -> dict[str, Any]:
        """The result of ``judging.finish`` with ``divergences`` (the first
        ``MAX_LISTED``), ``diverging_steps`` (steps that diverged) and
        ``differences_by_kind`` (their differences, counted by kind), ``notes`` where
        gdl2pl judged a step from its own state, and ``protocol_faults``, the engine's
        lines that were no records (skipped)."""
        self.end()
        problem = self.problem or run.problem
        if problem is None and self.missing is not None:
            problem = (
                f"the engine answered {run.received} records, "
                f"{self.expected} expected ({self.missing})"
            )
        elif problem is None and self.surplus:
            problem = f"the engine answered {run.received} records, {self.taken} expected"
        if problem is None and run.faults:
            problem = (
                f"{len(run.faults)} protocol fault(s), skipped (lines that are no records: "
                "an engine prints only records on stdout; logs go to stderr)"
            )
        found = self.tally.reports(self.sm)
        extra: dict[str, Any] = {
            "divergences": found,
            "diverging_steps": self.tally.total,
            "differences_by_kind": dict(sorted(self.tally.counts.items())),
        }
        if self.tally.notes:
            extra["notes"] = self.tally.notes
        if run.faults:
            extra["protocol_faults"] = run.faults
        first = found[0] if found else None
        return finish(self.path, len(self.mine), self.compared, first, problem, run, **extra)
