"""A GGP player's side of the match protocol, without the network: message in, reply out.

``GamePlayer.handle(text, received)`` answers one message the way ggp-base players do:

=================  =========================================================================
``(info)``         ``((name NAME) (status available))``, or ``busy`` during a match
``(preview ...)``  ``ready`` (nothing is done with it)
``(start ...)``    ``ready`` once the game is loaded (``busy`` if a match is running;
                   ``error: ...`` if the rules do not parse, check or load, or the role
                   given is GDL-II's ``random``, which the manager plays)
``(play ...)``     the chosen move in KIF (``nil`` if the game gives no move)
``(stop ...)``     ``done``
``(abort ...)``    ``aborted``
=================  =========================================================================

The original protocol lists ``ready`` as the reply to ``(info)``; a manager that insists on
that exact word will not recognise ggp-base's form (ggp-base's managers, and
``gdl2pl.ggp.protocol.parse_info_reply``, read both).

GDL-II games (chance, hidden information) come with ``(play ID TURN LASTMOVE PERCEPTS)``:
the player keeps its own moves and percepts and the states it cannot tell apart, turn by
turn, and plays by determinized sampling (``gdl2pl.ggp.hidden``), with the match's
strategy choosing in each sampled state. Every such ``play`` is answered with a move, also
when the belief is lost or the history cannot have happened (a guess, logged), never with
an error text: managers read a reply to ``play`` as a move whatever its status. Only a
message that is itself wrong is refused (400, saying why): a turn out of order, a missing
move, a term that cannot be read, or a play of the other kind (a match is played with
GDL's plays or with GDL-II's, which speak of different states).

Replies carry an HTTP-like status: 200, or 400 for a malformed message, illegal moves or
rules that cannot be loaded, 404 for a match id that is not the current match's.

Clocks: the reply to ``start`` or ``play`` is ready ``margin(clock)`` seconds before the
clock runs out, where ``margin(c) = min(max(margin, margin_fraction * c), c / 2)``
(defaults: 1 s or 10 %, whichever is larger, but never more than half the clock). All
Prolog work of a match happens on that match's own worker thread, in order; ``handle``
waits for it only until that deadline and then answers the best move offered so far (at
first, the first legal move; in GDL-II, before a turn's work has even begun because the
turn before ran over, a move legal on the turn before: ``Knowledge.spare``), so a slow
reasoner makes a weak move, not a late one. A worker that has offered nothing halfway
to the deadline (stuck, still loading, or behind on an earlier play) is not waited for:
a thread of the player's own finds the first legal move from the last state the worker
reached, or, with no state loaded at all, the rules give a guess (``gdl2pl.ggp.fallback``);
``nil`` is sent only when none of these has a move. A
clock longer than ``max_clock`` (default 3600 s) is cut to it, so no manager can keep the
player busy for longer (and a manager that goes away is noticed within a bounded time:
see expiry below). One
match is played at a time; after ``stop`` or ``abort`` a new ``start`` is accepted.

Ending a match: ``stop`` and ``abort`` are answered at once; the match's search is
cancelled, the Prolog query its worker is running is interrupted
(``gdl2pl.bridge.swipl.interrupt``), and the worker retires once it has freed the game.
The next match gets a fresh worker, so it never waits behind the work of an old one. A
match that gets no message for ``expiry_clocks`` play clocks beyond the clock of its last
message (the manager is gone) expires the same way, and the player is ``available`` again.
While ``MAX_RETIRING`` retired workers are still running (their queries ignore the
interrupt), a new ``start`` is answered ``busy``.

Logging: one line per event; text from the network (and the rules' symbols, which come
from it) is written in log lines and replies with ``gdl2pl.ggp.protocol.shown`` (control
characters escaped), so no message can forge a log line or drive a terminal.
A failure of the worker is logged when it happens, also when nobody waits for it any more.
Every reply to ``play`` is logged with what the strategy searched for it, and ``stop`` or
``abort`` with the match's sum (``gdl2pl.ggp.search_log``; the README shows a match).
"""

from __future__ import annotations

import logging
import queue
import random
import re
import threading
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from gdl2pl.bridge.machine import StateMachine
from gdl2pl.check import READ_AS_MEANT
from gdl2pl.check import Finding
from gdl2pl.check import format_finding
from gdl2pl.check import has_errors
from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import on_engine
from gdl2pl.compiled.auto import AUTO_SECONDS
from gdl2pl.compiled.auto import AutoMachine
from gdl2pl.compiled.auto import compiled_reason
from gdl2pl.compiled.factory import Engine
from gdl2pl.contract import EngineChoice
from gdl2pl.contract import GameMachine
from gdl2pl.contract import MachineState
from gdl2pl.errors import GdlError
from gdl2pl.ggp.cancel import CancellableWork
from gdl2pl.ggp.cancel import give_memory_back
from gdl2pl.ggp.protocol import Abort
from gdl2pl.ggp.protocol import Info
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import PlayII
from gdl2pl.ggp.protocol import Preview
from gdl2pl.ggp.protocol import ProtocolError
from gdl2pl.ggp.protocol import Start
from gdl2pl.ggp.protocol import Stop
from gdl2pl.ggp.protocol import StopII
from gdl2pl.ggp.protocol import format_info_reply
from gdl2pl.ggp.protocol import parse_message
from gdl2pl.ggp.protocol import shown
from gdl2pl.kif import kif_term
from gdl2pl.pipeline import compile_game
from gdl2pl.syntax import Description
from gdl2pl.syntax import Term

from .fallback import PlayMoves
from .fallback import Rescue
from .fallback import RescueRequest
from .fallback import guess_move
from .hidden import Knowledge
from .hidden import choose_move
from .search_log import MatchSearches
from .search_log import move_line
from .strategy import SEARCH_MARGIN
from .strategy import Budget
from .strategy import SearchReport
from .strategy import Strategy

log = logging.getLogger("gdl2pl.player")

#: Time kept between the worker's own deadline and the reply's: the strategy may run
#: ``SEARCH_MARGIN`` past its deadline, and the result is handed over in the rest.
HANDOVER = SEARCH_MARGIN + 0.05
#: Retired workers that may still be running before a new ``start`` is answered ``busy``.
MAX_RETIRING = 2
#: With ``think_at_start``, the part of the start clock left after loading that the
#: player waits for the background grounding (on "auto") before searching the first state.
GROUND_SHARE = 0.6

#: Rules longer than this (characters) are a large game: when its match ends, the player
#: collects garbage and returns freed memory to the system (a few hundred ms).
LARGE_RULES = 1_000_000


@dataclass(frozen=True)
class Reply:
    """A reply to one message: HTTP status and text."""

    status: int
    body: str


class _Job:
    """One piece of work for a worker thread, with the best answer offered so far."""

    def __init__(self, what: str, run: Callable[[_Job], Any], budget: Budget) -> None:
        self.what = what  # for the log: "match m1: play"
        self.run = run
        self.budget = budget
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.offered: Term | None = None
        self.heard = threading.Event()  # set at the first offer, or when done
        self.reports: list[SearchReport] = []  # what the strategy searched for it

    def offer(self, move: Term) -> None:
        self.offered = move
        self.heard.set()


class _Worker:
    """A thread running one match's jobs in order, with its own Prolog engine."""

    def __init__(self, name: str) -> None:
        self.prolog_id: int | None = None  # for interrupt(); known once the thread runs
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from gdl2pl.bridge.swipl import prolog_thread_id

        try:
            self.prolog_id = prolog_thread_id()  # an engine for this thread, freed at its end
        except Exception as e:  # no Prolog: every job will fail and say why
            log.error("worker cannot start Prolog: %s", _reason(e))
        while (job := self._jobs.get()) is not None:
            try:
                job.result = job.run(job)
            except BaseException as e:
                job.error = e
                if "interrupted" in str(e) or job.budget.cancel.is_set():
                    log.info("%s: stopped: %s", job.what, _reason(e))
                else:
                    log.warning("%s: %s", job.what, _reason(e))
            finally:
                job.done.set()
                job.heard.set()

    def submit(self, what: str, run: Callable[[_Job], Any], budget: Budget) -> _Job:
        job = _Job(what, run, budget)
        self._jobs.put(job)
        return job

    def retire(self) -> None:
        """End the thread once the jobs already queued have run."""
        self._jobs.put(None)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()


class _Interrupter:
    """One thread that sends Prolog interrupts (it needs an engine of its own, which the
    short-lived HTTP threads should not create)."""

    def __init__(self) -> None:
        self._ids: queue.Queue[int | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def interrupt(self, worker: _Worker) -> None:
        """Interrupt the query ``worker`` runs, if any (a worker still starting has none)."""
        if worker.prolog_id is None or not worker.alive:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="gdl2pl-interrupt", daemon=True
                )
                self._thread.start()
        self._ids.put(worker.prolog_id)

    def _run(self) -> None:
        from gdl2pl.bridge.swipl import interrupt

        while (thread_id := self._ids.get()) is not None:
            try:
                interrupt(thread_id)  # attaches an engine to this thread, freed at its end
            except Exception as e:  # the worker is gone: nothing to stop
                log.info("interrupt of Prolog thread %d: %s", thread_id, _reason(e))

    def close(self) -> None:
        if self._thread is not None:
            self._ids.put(None)
            self._thread.join(timeout=5)


@dataclass
class _Match:
    id: str
    role_name: str
    start_clock: int
    play_clock: int
    strategy: Strategy
    worker: _Worker
    expires: float  # time.monotonic() after which the match is dropped
    cancel: threading.Event = field(default_factory=threading.Event)
    loading: CancellableWork = field(default_factory=CancellableWork)  # the Python compile
    sm: GameMachine | None = None
    role: Term | None = None
    state: MachineState | None = None
    failed: str | None = None  # why the game could not be loaded
    late: bool = False  # a job ran past its deadline: do not start more work at the end
    steps: int = 0
    rules_size: int = 0  # characters of the rules received
    knowledge: Knowledge = field(default_factory=Knowledge)  # GDL-II: own moves, percepts
    searches: MatchSearches = field(default_factory=MatchSearches)  # for the log
    gdl_ii: bool | None = None  # played with GDL-II's plays (True) or GDL's; None: no play yet
    description: Description | None = None  # the rules read, for a guess before the load ends
    plays: list[PlayMoves] = field(default_factory=list)  # each GDL play's joint moves
    # the number of plays the worker has applied and the state they lead to (one tuple,
    # so another thread reads the two together): where a rescue starts (``fallback``)
    reached: tuple[int, MachineState] | None = None
    # set to end the pondering queued last (a new message for the worker, the match's end)
    ponder_stop: threading.Event = field(default_factory=threading.Event)

    @property
    def shown_id(self) -> str:
        return shown(self.id, 80)


def _start_prolog() -> None:
    """Start SWI-Prolog from the thread that makes the player (janus' first engine then
    belongs to a thread that outlives the workers); without it, the jobs will say why."""
    from gdl2pl.bridge.swipl import PrologUnavailableError
    from gdl2pl.bridge.swipl import runtime

    try:
        runtime()
    except PrologUnavailableError as e:
        log.error("SWI-Prolog is not available: %s", _reason(e))


def _label(match_id: str) -> str:
    """A name for the game of match ``match_id`` (error messages, Prolog-side names) that
    holds nothing but letters, digits and ``._-``: the id itself comes from the network."""
    return "match " + (re.sub(r"[^A-Za-z0-9._-]", "_", match_id[:60]) or "_")


class GamePlayer:
    """Plays matches with strategies made by ``strategy`` (one new strategy per match)."""

    def __init__(
        self,
        strategy: Callable[[], Strategy],
        name: str = "gdl2pl",
        margin: float = 1.0,
        margin_fraction: float = 0.1,
        check: bool = True,
        expiry_clocks: float = 3.0,
        max_clock: int = 3600,
        engine: Engine = "auto",
        think_at_start: bool = False,
    ) -> None:
        """``engine``: "auto" (the default) plays on the reasoner at once and on the
        game's network as soon as a background grounding has it; "compiled" grounds
        within a third of the start clock first; "prolog" is the reasoner alone. A game
        that cannot be compiled is played on the reasoner whatever the engine (a player
        must play), and the log says why. ``think_at_start``: use the start clock
        before answering ``ready`` (on "auto", wait up to ``GROUND_SHARE`` of what is left
        of it for the network, then search the first state until the reply is due); a
        searching strategy also ponders, as it always does between plays."""
        if max_clock < 1:
            raise ValueError(f"max_clock must be at least 1 s, not {max_clock}")
        # Alike on purpose: the arguments kept as attributes, as ``manager._Match`` keeps
        # its own (``duplicates`` pairs the two lists of assignments by shape).
        self.new_strategy = strategy
        self.name = name
        self.margin = margin
        self.margin_fraction = margin_fraction
        self.check = check
        self.expiry_clocks = expiry_clocks
        self.max_clock = max_clock
        self.engine = engine
        self.think_at_start = think_at_start
        self._lock = threading.Lock()
        self._match: _Match | None = None
        self._retiring: list[_Worker] = []
        self._interrupter = _Interrupter()
        self._rescue = Rescue()
        self._workers = 0
        _start_prolog()

    # -- clocks ---------------------------------------------------------------------------

    def margin_for(self, clock: float) -> float:
        """Seconds kept in hand before a clock of ``clock`` seconds runs out."""
        return min(max(self.margin, self.margin_fraction * clock), clock / 2)

    def _deadline(self, received: float, clock: float) -> float:
        return received + clock - self.margin_for(clock)

    def _expiry(self, received: float, clock: float, play_clock: float) -> float:
        return received + clock + self.expiry_clocks * play_clock

    # -- ending matches -------------------------------------------------------------------

    def _retire(self, match: _Match, moves: tuple[Term, ...] | None = None) -> None:
        """Cancel ``match``'s work, interrupt its query, free it and retire its worker.
        The caller has already removed it from ``self._match``."""
        match.cancel.set()
        match.ponder_stop.set()
        match.loading.cancel()
        self._interrupter.interrupt(match.worker)
        if moves is None and match.sm is not None:
            # an abort or an expiry: the game is closed now, from here, so that a search
            # the interrupt cannot reach (one on the compiled network, in C) stops at its
            # next question instead of running out its clock in the retiring worker
            match.sm.close()
        match.worker.submit(
            f"{match.shown_id}: finish", lambda job: self._finish(match, moves), Budget(0)
        )
        match.worker.retire()
        with self._lock:
            self._retiring = [w for w in self._retiring if w.alive]
            self._retiring.append(match.worker)

    def _expire(self, now: float) -> None:
        with self._lock:
            match = self._match
            if match is None or now <= match.expires:
                return
            self._match = None
        log.warning(
            "%s expired: no message for %g play clock(s)", match.shown_id, self.expiry_clocks
        )
        self._retire(match)

    def close(self) -> None:
        """End any match, then stop the worker threads (waiting a few seconds at most)."""
        with self._lock:
            match, self._match = self._match, None
        if match is not None:
            self._retire(match)
        with self._lock:
            workers = list(self._retiring)
        for w in workers:
            w.thread.join(timeout=5)
        self._interrupter.close()
        self._rescue.close()

    @property
    def busy(self) -> bool:
        """A match is on, or too many old ones are still stopping to take a new one."""
        with self._lock:
            self._retiring = [w for w in self._retiring if w.alive]
            return self._match is not None or len(self._retiring) >= MAX_RETIRING

    # -- messages -------------------------------------------------------------------------

    def handle(self, text: str, received: float | None = None) -> Reply:
        """The reply to one message; ``received`` is when it arrived (``time.monotonic()``)."""
        received = time.monotonic() if received is None else received
        self._expire(received)
        try:
            msg = parse_message(text)
        except ProtocolError as e:
            log.warning("malformed message: %s: %s", shown(str(e)), shown(text))
            return Reply(400, f"error: malformed message: {shown(str(e))}")
        if isinstance(msg, Info):
            status = "busy" if self.busy else "available"
            return Reply(200, format_info_reply(self.name, status))
        if isinstance(msg, Preview):
            return Reply(200, "ready")
        if isinstance(msg, Start):
            return self._start(msg, received)
        if isinstance(msg, Play | PlayII):
            return self._play(msg, received)
        return self._end(msg)

    def _current(self, match_id: str) -> _Match | None:
        with self._lock:
            m = self._match
        return m if m is not None and m.id == match_id else None

    def _unknown(self, match_id: str, kind: str) -> Reply:
        log.warning("%s for unknown match %s", kind, shown(match_id, 80))
        return Reply(404, f"error: unknown match id {shown(match_id, 80)}")

    def _start(self, msg: Start, received: float) -> Reply:
        if max(msg.start_clock, msg.play_clock) > self.max_clock:
            log.warning(
                "start %s: clocks %d/%d cut to at most %d s (max_clock)",
                shown(msg.match_id, 80),
                msg.start_clock,
                msg.play_clock,
                self.max_clock,
            )
            msg = replace(
                msg,
                start_clock=min(msg.start_clock, self.max_clock),
                play_clock=min(msg.play_clock, self.max_clock),
            )
        if self.busy:
            with self._lock:
                why = (
                    f"busy with {self._match.shown_id}"
                    if self._match is not None
                    else f"{len(self._retiring)} old match(es) still stopping"
                )
            log.warning("start of %s refused: %s", shown(msg.match_id, 80), why)
            return Reply(200, "busy")
        with self._lock:
            if self._match is not None:  # another start won the race
                return Reply(200, "busy")
            self._workers += 1
            match = self._match = _Match(
                msg.match_id,
                msg.role,
                msg.start_clock,
                msg.play_clock,
                self.new_strategy(),
                _Worker(f"gdl2pl-player-{self._workers}"),
                self._expiry(received, msg.start_clock, msg.play_clock),
            )
        deadline = self._deadline(received, msg.start_clock)
        log.info(
            "start %s as %s (clocks %d/%d)",
            match.shown_id,
            shown(msg.role, 80),
            msg.start_clock,
            msg.play_clock,
        )
        job = match.worker.submit(
            f"{match.shown_id}: start",
            lambda job: self._load(match, msg.rules, job.budget),
            Budget(deadline - HANDOVER, match.cancel),
        )
        self._ponder_later(match)
        if not job.done.wait(max(0.0, deadline - time.monotonic())):
            match.late = True
            log.warning("%s: still loading the game when the start clock ran low", match.shown_id)
            return Reply(200, "ready")
        if job.error is not None:
            with self._lock:
                mine = self._match is match
                if mine:
                    self._match = None
            if mine:
                self._retire(match)
            return Reply(400, f"error: cannot load the game: {_reason(job.error)}")
        return Reply(200, "ready")

    def _load(self, match: _Match, rules: str, budget: Budget) -> None:
        """Worker: parse, check and load the game, then let the strategy metagame."""
        match.rules_size = len(rules)
        try:
            label = _label(match.id)
            with match.loading.running():
                compiled = compile_game(
                    text=rules, syntax="kif", name=label, check=self.check, translate=False
                )
            d, findings = compiled.description, compiled.findings
            match.description = d
            if self.check and has_errors(findings):
                errors = [format_finding(f) for f in findings if f.is_error]
                more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                raise GdlError(f"the rules are not valid GDL: {errors[0]}{more}")
            _log_read_as_meant(match, findings)
            if match.cancel.is_set():
                raise GdlError("the match ended before its game was loaded")
            prolog = StateMachine.from_description(d, name=label, compiling=match.loading.running())
            sm = prolog if self.engine == "prolog" else self._compiled(prolog, budget)
            match.sm = sm
            role = sm.term(match.role_name)
            if role not in sm.roles:
                raise GdlError(f"{match.role_name} is not a role of the game")
            if sm.is_random(role):
                raise GdlError(
                    "random is the role of chance, which the game manager plays: "
                    "a player cannot be given it"
                )
            match.role = role
            match.state = sm.initial_state
            match.reached = (0, match.state)
            match.strategy.metagame(sm, role, budget)
            if self.think_at_start and _searches(match.strategy):
                if isinstance(sm, AutoMachine):  # the first moves searched on the network
                    sm.wait_for_engine(GROUND_SHARE * budget.remaining())
                match.strategy.ponder(match.state, budget)
        except BaseException as e:
            match.failed = _reason(e)
            raise

    def _compiled(self, sm: StateMachine, budget: Budget) -> GameMachine:
        """The game ``sm`` loaded, on the player's engine: "auto", the reasoner at once
        and the network as soon as it is grounded in the background, within the start
        clock left before ``ready`` or ``AUTO_SECONDS``, whichever is longer; "compiled",
        the network grounded within a third of the start clock left. Whatever goes
        wrong, ``sm`` (never closed here) plays, and the log says why: a player must
        play."""
        if self.engine == "auto":
            seconds = max(AUTO_SECONDS, budget.remaining())
            return on_engine(sm, "auto", budget=GroundingBudget(seconds=seconds))
        seconds = max(0.1, budget.remaining() / 3)
        start = time.monotonic()
        try:
            compiled = CompiledMachine.from_machine(sm, GroundingBudget(seconds=seconds))
        except Exception as e:  # the reasoner still plays: never lose a match to this
            why = shown(str(e), 1000)  # it may quote the rules, which came from the network
            log.warning("%s: the compiled engine failed (%s); the reasoner plays", sm.name, why)
            sm.engine_choice = EngineChoice("prolog", why)
            return sm
        compiled.engine_choice = EngineChoice(
            "compiled", compiled_reason(compiled, time.monotonic() - start)
        )
        log.info("%s: %s", sm.name, compiled.engine_choice)
        return compiled

    def _play(self, msg: Play | PlayII, received: float) -> Reply:
        match = self._current(msg.match_id)
        if match is None:
            return self._unknown(msg.match_id, "play")
        gdl_ii = isinstance(msg, PlayII)
        if match.gdl_ii is None:
            match.gdl_ii = gdl_ii
        elif match.gdl_ii != gdl_ii:
            # the two kinds speak of different states: neither can follow the other
            kind, other = ("GDL-II", "GDL") if match.gdl_ii else ("GDL", "GDL-II")
            form = "(play ID TURN LASTMOVE PERCEPTS)" if match.gdl_ii else "(play ID MOVES)"
            log.warning("%s: a %s play in a %s match refused", match.shown_id, other, kind)
            return Reply(400, f"error: this match is played with {kind} plays, {form}")
        match.expires = self._expiry(received, match.play_clock, match.play_clock)
        deadline = self._deadline(received, match.play_clock)
        what = f"{match.shown_id}: play {len(match.plays) + 1 if not gdl_ii else match.steps + 1}"
        if isinstance(msg, Play):
            match.plays.append(msg.moves)
        match.ponder_stop.set()  # the worker stops pondering for this play
        job = match.worker.submit(
            what, lambda job: self._move(match, msg, job), Budget(deadline - HANDOVER, match.cancel)
        )
        if isinstance(msg, Play):
            self._ponder_later(match)
        rescue = self._await(match, job, received, deadline)
        if not job.done.is_set():
            return self._late(match, job, rescue, received)
        refused = job.error is not None and job.offered is None
        if refused and isinstance(msg, Play) and match.plays and match.plays[-1] is msg.moves:
            match.plays.pop()  # the worker did not apply it: neither may a rescue
        if job.error is not None and job.offered is not None:
            # the search failed (e.g. out of a Prolog resource) after a legal move was
            # offered: that move is the answer, never the error text
            log.warning(
                "%s: the search failed (%s), sending the move it offered",
                match.shown_id,
                _reason(job.error),
            )
            return self._searched(match, what, job, kif_term(job.offered), received)
        if job.error is not None:
            status = 400 if isinstance(job.error, (GdlError, ValueError)) else 500
            return Reply(status, f"error: {_reason(job.error)}")
        return self._searched(match, what, job, job.result, received)

    def _ponder_later(self, match: _Match) -> None:
        """Queue pondering on the match's state after the jobs queued (a searching
        strategy, GDL's plays: a GDL-II state is not known): it ends at the next message
        (``ponder_stop``) or when the match would expire."""
        if not _searches(match.strategy) or match.gdl_ii:
            return
        stop = match.ponder_stop = threading.Event()
        match.worker.submit(
            f"{match.shown_id}: ponder",
            lambda job: self._ponder(match, job.budget),
            Budget(match.expires, stop),
        )

    def _ponder(self, match: _Match, budget: Budget) -> None:
        """Worker: think about the state reached until ``budget`` ends."""
        state = match.state
        if match.failed is not None or match.cancel.is_set() or match.sm is None or state is None:
            return
        if budget.expired() or match.sm.is_terminal(state):
            return
        match.strategy.ponder(state, budget)

    def _await(
        self, match: _Match, job: _Job, received: float, deadline: float
    ) -> RescueRequest | None:
        """Wait for ``job`` until ``deadline``; if it has offered no move halfway there,
        ask the rescue thread for one (``fallback``), which is returned."""
        halfway = received + (deadline - received) / 2
        job.heard.wait(max(0.0, halfway - time.monotonic()))
        rescue = None
        if job.offered is None and not job.done.is_set() and not match.gdl_ii:
            rescue = self._ask_rescue(match)
        job.done.wait(max(0.0, deadline - time.monotonic()))
        return rescue

    def _ask_rescue(self, match: _Match) -> RescueRequest | None:
        """A rescue of the current play from the last state the worker reached (``None``
        while the game is not loaded)."""
        sm, role, reached = match.sm, match.role, match.reached
        if sm is None or role is None or reached is None:
            return None
        applied, state = reached
        return self._rescue.ask(sm, role, state, match.plays[applied:])

    def _late(
        self, match: _Match, job: _Job, rescue: RescueRequest | None, received: float
    ) -> Reply:
        """The reply to a play whose worker is still at work at the deadline: the move
        it offered, else the rescue's, else a guess (``fallback``); ``nil`` only when
        there is none of them."""
        match.late = True
        move, what = job.offered, "the best move so far"
        if move is None and match.gdl_ii and match.knowledge.spare is not None:
            # the worker is still on the turn before: a move legal then beats nil
            move, what = match.knowledge.spare, "a move legal on the turn before"
        if move is None and rescue is not None and rescue.done.is_set():
            if rescue.move is not None:
                move, what = rescue.move, "the first legal move (found by the rescue thread)"
            elif rescue.error is not None:
                log.warning("%s: the rescue failed: %s", match.shown_id, rescue.error)
        if move is None:
            move = guess_move(match.description, match.role_name)
            what = "a guess from the rules"
        log.warning(
            "%s: out of time, sending %s", match.shown_id, what if move is not None else "nil"
        )
        match.searches.add([], time.monotonic() - received, late=True)
        return Reply(200, kif_term(move) if move is not None else "nil")

    def _searched(self, match: _Match, what: str, job: _Job, sent: str, received: float) -> Reply:
        """The reply ``sent`` to a play, logged with what was searched for it."""
        reply = time.monotonic() - received
        match.searches.add(job.reports, reply)
        log.info("%s: %s", what, move_line(job.reports, sent, reply, match.play_clock))
        return Reply(200, sent)

    def _move(self, match: _Match, msg: Play | PlayII, job: _Job) -> str:
        """Worker: the move for ``msg`` (KIF text), with the strategy's reports of it."""
        try:
            if isinstance(msg, Play):
                return self._select(match, msg.moves, job)
            return self._select_hidden(match, msg, job)
        finally:
            job.reports = match.strategy.take_reports()

    def _select(self, match: _Match, moves: tuple[Term, ...] | None, job: _Job) -> str:
        """Worker: apply the last joint move, then choose a move (KIF text)."""
        if match.failed is not None:
            raise GdlError(f"the game could not be loaded: {match.failed}")
        if match.cancel.is_set():
            return "nil"
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
        match.reached = (match.steps, state)
        legal = sm.legal_moves(state, role) if not sm.is_terminal(state) else []
        if not legal:
            return "nil"
        job.offer(legal[0])
        if isinstance(match.strategy, Strategy):  # a hook of the contract's class
            match.strategy.reached(state)
        if len(legal) == 1:
            return kif_term(legal[0])
        move = match.strategy.select_move(state, legal, job.budget, job.offer)
        return kif_term(move)

    def _select_hidden(self, match: _Match, msg: PlayII, job: _Job) -> str:
        """Worker, GDL-II: learn the move and percepts of the turn before, then choose a
        move without knowing the state (``gdl2pl.ggp.hidden``)."""
        if match.failed is not None:
            raise GdlError(f"the game could not be loaded: {match.failed}")
        if match.cancel.is_set():
            return "nil"
        sm, role = match.sm, match.role
        if sm is None or role is None:
            raise GdlError("the game is not loaded")
        try:  # what is wrong here is the message's: the reply refuses it and says why
            match.knowledge.learn(sm, msg.turn, msg.last_move, msg.percepts)
        except GdlError:
            raise
        except Exception as e:
            raise GdlError(f"turn {msg.turn} cannot be read: {_reason(e)}") from e
        # choose_move answers whatever goes wrong inside (a guess, logged)
        rng = random.Random(f"{match.id}:{match.steps + 1}")
        try:
            move = choose_move(
                sm, role, match.knowledge, match.strategy, job.budget, job.offer, rng
            )
        except BaseException:
            if job.offered is None and not match.late:  # the reply refuses the turn
                match.knowledge.withdraw(msg.turn)
            raise
        match.steps += 1
        return "nil" if move is None else kif_term(move)

    def _end(self, msg: Stop | StopII | Abort) -> Reply:
        kind = "abort" if isinstance(msg, Abort) else "stop"
        with self._lock:
            match = self._match
            if match is None or match.id != msg.match_id:
                match = None
            else:
                self._match = None
        if match is None:
            return self._unknown(msg.match_id, kind)
        log.info("%s %s after %d step(s)", kind, match.shown_id, match.steps)
        log.info("%s: %s", match.shown_id, match.searches.line(match.play_clock))
        self._retire(match, msg.moves if isinstance(msg, Stop) else None)
        return Reply(200, "done" if kind == "stop" else "aborted")

    def _finish(self, match: _Match, moves: tuple[Term, ...] | None = None) -> None:
        """Worker: log the outcome if known (and cheap to know), free the strategy and
        the game."""
        sm = match.sm
        try:
            if sm is not None and match.state is not None and moves is not None and not match.late:
                final = sm.next_state(match.state, [sm.term(kif_term(m)) for m in moves])
                if sm.is_terminal(final) and match.role is not None:
                    log.info("%s: our goal: %s", match.shown_id, sm.goal(final, match.role))
        except GdlError as e:
            log.info("%s: final state unknown: %s", match.shown_id, _reason(e))
        finally:
            match.strategy.finish()
            if sm is not None:
                sm.close()
            match.sm = None
            if match.rules_size > LARGE_RULES:  # a big game's heap is worth a collection
                give_memory_back()


def _log_read_as_meant(match: _Match, findings: Sequence[Finding]) -> None:
    """Log the rules of ``match``'s game that a strict reader refuses but the managers
    play (``READ_AS_MEANT``), read as their authors meant: the first few, then how many
    more."""
    read = [f for f in findings if f.code in READ_AS_MEANT]
    for f in read[:3]:
        text = shown(format_finding(f), 300)
        log.warning("%s: read as the managers read it: %s", match.shown_id, text)
    if len(read) > 3:
        log.warning("%s: and %d more such rule(s)", match.shown_id, len(read) - 3)


def _searches(strategy: Strategy) -> bool:
    """The strategy searches, so thinks on time nobody waits for (``ponder``): one of the
    contract's class whose ``searches`` says so."""
    return isinstance(strategy, Strategy) and strategy.searches


def _reason(e: BaseException) -> str:
    """The first line of ``e``'s message (its type if empty), fit for a log line."""
    text = str(e).strip()
    return shown(text.splitlines()[0] if text else type(e).__name__, 300)
