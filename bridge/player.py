"""A GGP player's side of the match protocol, without the network: message in, reply out.

``GamePlayer.handle(text, received)`` answers one message the way ggp-base players do:

=================  =========================================================================
``(info)``         ``((name NAME) (status available))``, or ``busy`` during a match
``(preview ...)``  ``ready`` (nothing is done with it)
``(start ...)``    ``ready`` once the game is loaded (``busy`` if a match is running;
                   ``error: ...`` if the rules do not parse, check or load)
``(play ...)``     the chosen move in KIF (``nil`` if the game gives no move)
``(stop ...)``     ``done``
``(abort ...)``    ``aborted``
=================  =========================================================================

The original protocol lists ``ready`` as the reply to ``(info)``; a manager that insists on
that exact word will not recognise ggp-base's form (ggp-base's managers, and
``gdl2pl.protocol.parse_info_reply``, read both).

Replies carry an HTTP-like status: 200, or 400 for a malformed message, illegal moves or
rules that cannot be loaded, 404 for a match id that is not the current match's.

Clocks: the reply to ``start`` or ``play`` is ready ``margin(clock)`` seconds before the
clock runs out, where ``margin(c) = min(max(margin, margin_fraction * c), c / 2)``
(defaults: 1 s or 10 %, whichever is larger, but never more than half the clock). All
Prolog work happens on one worker thread, in order; ``handle`` waits for it only until
that deadline and then answers the best move offered so far (at first, the first legal
move), so a slow reasoner makes a weak move, not a late one. ``stop`` and ``abort`` are
answered at once and interrupt the search. One match is played at a time; after ``stop``
or ``abort`` a new ``start`` is accepted.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gdl2pl.check import check_description, format_finding, has_errors
from gdl2pl.errors import GdlError
from gdl2pl.kif import kif_term, parse_kif
from gdl2pl.protocol import (
    Abort,
    Info,
    Play,
    Preview,
    ProtocolError,
    Start,
    Stop,
    format_info_reply,
    parse_message,
)
from gdl2pl.syntax import Term

from .machine import MachineState, StateMachine
from .players import Budget, Strategy

log = logging.getLogger("gdl2pl.player")

#: Time kept between the worker's own deadline and the reply's, to hand the result over.
HANDOVER = 0.05


@dataclass(frozen=True)
class Reply:
    """A reply to one message: HTTP status and text."""

    status: int
    body: str


class _Job:
    """One piece of work for the worker thread, with the best answer offered so far."""

    def __init__(self, run: Callable[[_Job], Any], budget: Budget) -> None:
        self.run = run
        self.budget = budget
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.offered: Term | None = None

    def offer(self, move: Term) -> None:
        self.offered = move


@dataclass
class _Match:
    id: str
    role_name: str
    start_clock: int
    play_clock: int
    strategy: Strategy
    cancel: threading.Event = field(default_factory=threading.Event)
    sm: StateMachine | None = None
    role: Term | None = None
    state: MachineState | None = None
    failed: str | None = None  # why the game could not be loaded
    steps: int = 0


class GamePlayer:
    """Plays matches with strategies made by ``strategy`` (one new strategy per match)."""

    def __init__(
        self,
        strategy: Callable[[], Strategy],
        name: str = "gdl2pl",
        margin: float = 1.0,
        margin_fraction: float = 0.1,
        check: bool = True,
    ) -> None:
        self.new_strategy = strategy
        self.name = name
        self.margin = margin
        self.margin_fraction = margin_fraction
        self.check = check
        self._lock = threading.Lock()
        self._match: _Match | None = None
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="gdl2pl-player", daemon=True)
        self._worker.start()

    # -- clocks ---------------------------------------------------------------------------

    def margin_for(self, clock: float) -> float:
        """Seconds kept in hand before a clock of ``clock`` seconds runs out."""
        return min(max(self.margin, self.margin_fraction * clock), clock / 2)

    def _deadline(self, received: float, clock: float) -> float:
        return received + clock - self.margin_for(clock)

    # -- the worker -----------------------------------------------------------------------

    def _work(self) -> None:
        attached = False
        while True:
            job = self._jobs.get()
            if job is None:
                break
            try:
                if not attached:
                    from .engine import runtime

                    runtime().attach_engine()  # janus needs an engine in every thread
                    attached = True
                job.result = job.run(job)
            except BaseException as e:
                job.error = e
            finally:
                job.done.set()
        if attached:
            from .engine import runtime

            runtime().detach_engine()

    def _submit(self, run: Callable[[_Job], Any], budget: Budget) -> _Job:
        job = _Job(run, budget)
        self._jobs.put(job)
        return job

    def close(self) -> None:
        """Stop the worker thread (after the jobs already queued) and end any match."""
        with self._lock:
            match, self._match = self._match, None
        if match is not None:
            match.cancel.set()
            self._jobs.put(_Job(lambda job: self._finish(match), Budget(0)))
        self._jobs.put(None)
        self._worker.join(timeout=10)

    @property
    def busy(self) -> bool:
        return self._match is not None

    # -- messages -------------------------------------------------------------------------

    def handle(self, text: str, received: float | None = None) -> Reply:
        """The reply to one message; ``received`` is when it arrived (``time.monotonic()``)."""
        received = time.monotonic() if received is None else received
        try:
            msg = parse_message(text)
        except ProtocolError as e:
            log.warning("malformed message: %s: %.200s", e, text)
            return Reply(400, f"error: malformed message: {e}")
        if isinstance(msg, Info):
            status = "busy" if self.busy else "available"
            return Reply(200, format_info_reply(self.name, status))
        if isinstance(msg, Preview):
            return Reply(200, "ready")
        if isinstance(msg, Start):
            return self._start(msg, received)
        if isinstance(msg, Play):
            return self._play(msg, received)
        return self._end(msg)

    def _current(self, match_id: str) -> _Match | None:
        with self._lock:
            m = self._match
        return m if m is not None and m.id == match_id else None

    def _unknown(self, match_id: str, kind: str) -> Reply:
        log.warning("%s for unknown match %s", kind, match_id)
        return Reply(404, f"error: unknown match id {match_id}")

    def _start(self, msg: Start, received: float) -> Reply:
        with self._lock:
            if self._match is not None:
                log.warning("start of %s refused: busy with %s", msg.match_id, self._match.id)
                return Reply(200, "busy")
            match = self._match = _Match(
                msg.match_id, msg.role, msg.start_clock, msg.play_clock, self.new_strategy()
            )
        deadline = self._deadline(received, msg.start_clock)
        log.info(
            "start %s as %s (clocks %d/%d)", msg.match_id, msg.role, msg.start_clock, msg.play_clock
        )
        job = self._submit(
            lambda job: self._load(match, msg.rules, job.budget),
            Budget(deadline - HANDOVER, match.cancel),
        )
        if not job.done.wait(max(0.0, deadline - time.monotonic())):
            log.warning("%s: still loading the game when the start clock ran low", match.id)
            return Reply(200, "ready")
        if job.error is not None:
            reason = _reason(job.error)
            match.failed = reason
            log.error("%s: cannot load the game: %s", match.id, reason)
            with self._lock:
                if self._match is match:
                    self._match = None
            self._jobs.put(_Job(lambda j: self._finish(match), Budget(0)))
            return Reply(400, f"error: cannot load the game: {reason}")
        return Reply(200, "ready")

    def _load(self, match: _Match, rules: str, budget: Budget) -> None:
        """Worker: parse, check and load the game, then let the strategy metagame."""
        try:
            d = parse_kif(rules, f"match {match.id}")
            if self.check:
                findings = check_description(d)
                if has_errors(findings):
                    errors = [format_finding(f) for f in findings if f.is_error]
                    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                    raise GdlError(f"the rules are not valid GDL: {errors[0]}{more}")
            sm = StateMachine.from_description(d, name=f"match {match.id}")
            match.sm = sm
            role = sm.term(match.role_name)
            if role not in sm.roles:
                raise GdlError(f"{match.role_name} is not a role of the game")
            match.role = role
            match.state = sm.initial_state
            match.strategy.metagame(sm, role, budget)
        except BaseException as e:
            match.failed = _reason(e)
            raise

    def _play(self, msg: Play, received: float) -> Reply:
        match = self._current(msg.match_id)
        if match is None:
            return self._unknown(msg.match_id, "play")
        deadline = self._deadline(received, match.play_clock)
        job = self._submit(
            lambda job: self._select(match, msg.moves, job),
            Budget(deadline - HANDOVER, match.cancel),
        )
        if not job.done.wait(max(0.0, deadline - time.monotonic())):
            move = job.offered
            log.warning(
                "%s: out of time, sending %s",
                match.id,
                "the best move so far" if move is not None else "nil",
            )
            return Reply(200, kif_term(move) if move is not None else "nil")
        if job.error is not None:
            status = 400 if isinstance(job.error, (GdlError, ValueError)) else 500
            log.error("%s: play: %s", match.id, _reason(job.error))
            return Reply(status, f"error: {_reason(job.error)}")
        return Reply(200, job.result)

    def _select(self, match: _Match, moves: tuple[Term, ...] | None, job: _Job) -> str:
        """Worker: apply the last joint move, then choose a move (KIF text)."""
        if match.failed is not None:
            raise GdlError(f"the game could not be loaded: {match.failed}")
        sm, role, state = match.sm, match.role, match.state
        if sm is None or role is None or state is None:
            raise GdlError("the game is not loaded")
        if moves is not None:
            try:
                state = sm.next_state(state, [sm.term(kif_term(m)) for m in moves])
            except GdlError as e:
                raise GdlError(f"cannot apply the joint move: {e}") from None
            match.state = state
        match.steps += 1
        legal = sm.legal_moves(state, role) if not sm.is_terminal(state) else []
        if not legal:
            return "nil"
        job.offer(legal[0])
        if len(legal) == 1:
            return kif_term(legal[0])
        move = match.strategy.select_move(state, legal, job.budget, job.offer)
        return kif_term(move)

    def _end(self, msg: Stop | Abort) -> Reply:
        kind = "stop" if isinstance(msg, Stop) else "abort"
        with self._lock:
            match = self._match
            if match is None or match.id != msg.match_id:
                match = None
            else:
                self._match = None
        if match is None:
            return self._unknown(msg.match_id, kind)
        match.cancel.set()
        moves = msg.moves if isinstance(msg, Stop) else None
        self._submit(lambda job: self._finish(match, moves), Budget(0))
        log.info("%s %s after %d step(s)", kind, match.id, match.steps)
        return Reply(200, "done" if kind == "stop" else "aborted")

    def _finish(self, match: _Match, moves: tuple[Term, ...] | None = None) -> None:
        """Worker: log the outcome if known, free the strategy and the game."""
        sm = match.sm
        try:
            if sm is not None and match.state is not None and moves is not None:
                final = sm.next_state(match.state, [sm.term(kif_term(m)) for m in moves])
                if sm.is_terminal(final) and match.role is not None:
                    log.info("%s: our goal: %s", match.id, sm.goal(final, match.role))
        except GdlError as e:
            log.info("%s: final state unknown: %s", match.id, e)
        finally:
            match.strategy.finish()
            if sm is not None:
                sm.close()


def _reason(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:300]
