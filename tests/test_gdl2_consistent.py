"""What a GDL-II role cannot tell apart after a turn, found lazily
(``gdl2pl.contract.consistent``), and the belief's work that ends when its match does
(issue 48, items 4 and 8): the stream numbers joint moves as ``itertools.product`` does,
finds the same children on both engines in any order, stops and resumes, never skips a
batch an interrupt cut short; on a turn of 2 x 400 x 400 joint moves a witness needs a
batch, not the turn; a belief's, a witness's and a player's work stop within a second
of their cancellation; and the player's log lines escape what the manager sent."""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge.errors import QueryInterrupted
from gdl2pl.compiled import load_machine
from gdl2pl.contract import ConsistentStream
from gdl2pl.contract import JointMoves
from gdl2pl.contract import MachineState
from gdl2pl.contract.consistent import FIRST_BATCH
from gdl2pl.contract.consistent import shuffled
from gdl2pl.ggp.belief_tracker import BeliefTracker
from gdl2pl.ggp.cancel import WorkCancelled
from gdl2pl.ggp.hidden import Knowledge
from gdl2pl.ggp.hidden import choose_move
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import Strategy
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.ggp.witness import Witness
from gdl2pl.information import NoConsistentStateError
from gdl2pl.information import Turn
from gdl2pl.information import belief
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import read_game
from gdl2pl.syntax import Const

GAMES = Path(__file__).parent / "games" / "gdl2"
#: 2 x 400 x 400 joint moves on its first turn (its header says more).
HIDDEN = GAMES / "hidden_cell.kif"
KUHN = EXAMPLES / "kuhnPoker.kif"
MONTY = EXAMPLES / "montyHall.kif"
#: Seconds within which cancelled work must have stopped: a second by the rule, twice
#: that again for a machine half as fast with other work running.
STOPS_WITHIN = 3.0

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


# -- numbering and order --------------------------------------------------------------------


def test_joint_moves_are_numbered_as_itertools_product_orders_them() -> None:
    per_role = [[Const(m) for m in "ab"], [Const(m) for m in "xyz"], [Const(m) for m in "pq"]]
    joints = JointMoves(per_role, 1, Const("y"))
    assert joints.count == 4
    fixed = [per_role[0], [Const("y")], per_role[2]]
    assert [joints.joint(i) for i in range(joints.count)] == list(itertools.product(*fixed))
    assert joints.digits(3) == [1, 0, 1]
    assert JointMoves([[], [Const("a")]], 1, Const("a")).count == 0  # a role without a move


def test_a_shuffled_order_is_a_permutation_drawn_lazily() -> None:
    assert sorted(shuffled(1000, random.Random(1))) == list(range(1000))
    assert list(shuffled(1000, random.Random(1))) != list(range(1000))
    # a few numbers from 10**12 cost a few entries, not a list of 10**12
    order = shuffled(10**12, random.Random(2))
    first = [next(order) for _ in range(5)]
    assert len(set(first)) == 5 and all(0 <= n < 10**12 for n in first)


# -- the same children on both engines, in any order ----------------------------------------


def _history_of(sm: StateMachine, seed: int) -> list[tuple[MachineState, tuple, dict]]:  # type: ignore[type-arg]
    """States of a random match with their joint move and each player's percepts."""
    rng = random.Random(seed)
    s, out = sm.initial_state, []
    while not sm.is_terminal(s):
        joint = sm.random_joint_move(s, rng)
        out.append((s, joint, {r: sm.percepts(s, joint, r) for r in sm.players}))
        s = sm.next_state(s, joint)
    return out


@pytest.mark.parametrize("path", [KUHN, MONTY, GAMES / "coin_calls.kif"], ids=lambda p: p.name)
def test_the_stream_finds_the_children_expand_finds_in_any_order_on_both_engines(
    path: Path,
) -> None:
    """Against every legal joint move expanded and filtered (the old way): the same
    children in the same order without an order, the same set in a random one, with
    the same weights, on the reasoner and on the network."""
    with load_machine(path, "compiled") as c:
        p = c.prolog
        for seed in range(3):
            for state, joint, seen in _history_of(p, seed):
                for role in p.players:
                    i = p.role_index(role)
                    expected = [
                        (jm, step.state)
                        for jm, step in p.expand(state)
                        if jm[i] == joint[i] and p.percepts(state, jm, role) == seen[role]
                    ]
                    for sm in (p, c):
                        kids = sm.consistent_successors(state, role, joint[i], seen[role])
                        assert [(k.joint_move, k.state) for k in kids] == expected
                        assert len({k.weight for k in kids}) <= 1
                        stream = sm.consistent_children(
                            state, role, joint[i], seen[role], rng=random.Random(seed)
                        )
                        drawn = [(k.joint_move, k.state) for k in stream]
                        assert sorted(drawn, key=str) == sorted(expected, key=str)
                        assert stream.complete and stream.scale == 1.0


#: Two numbers drawn at once of 20 each, by a player and by chance; the watcher hears
#: whether they match: 400 joint moves, more than one batch.
MATCHING = """
(role watcher) (role picker) (role random)
""" + " ".join(f"(number {n})" for n in range(20)) + """
(init (round 0))
(<= (legal watcher look) (true (round 0)))
(<= (legal picker (pick ?n)) (true (round 0)) (number ?n))
(<= (legal random (pick ?n)) (true (round 0)) (number ?n))
(<= (next (picked ?r ?n)) (does ?r (pick ?n)))
(<= (next (round 1)) (true (round 0)))
(<= (sees watcher same) (does picker (pick ?n)) (does random (pick ?n)))
(<= terminal (true (round 1)))
(<= (goal watcher 100) (true (round 1)))
(<= (goal picker 100) (true (round 1)))
"""


def test_a_stream_stops_when_told_and_goes_on_where_it_stopped() -> None:
    with StateMachine.from_text(MATCHING, name="matching") as sm:
        s = sm.initial_state
        everything = sm.consistent_successors(s, "watcher", "look", [])
        assert len(everything) == 380
        asked = []

        def stop() -> bool:
            asked.append(1)
            return len(asked) > 1  # the first batch, then stop

        stream = sm.consistent_children(s, "watcher", "look", [], stop=stop)
        first = [stream.next_child()]
        while stream.pending:
            first.append(stream.next_child())
        # the first batch's joint moves, but those where the numbers matched
        assert stream.tried == FIRST_BATCH and FIRST_BATCH - 5 < len(first) < FIRST_BATCH
        assert stream.next_child() is None and stream.stopped and not stream.complete
        assert stream.scale == 400 / FIRST_BATCH
        stream.stop = None
        rest = list(stream)
        assert stream.complete and [*first, *rest] == everything


def test_a_batch_cut_short_by_an_error_is_tried_again_not_skipped() -> None:
    tried: list[list[int]] = []

    def test(numbers):  # type: ignore[no-untyped-def]
        tried.append(list(numbers))
        if len(tried) == 2:
            raise QueryInterrupted("the deadline's interrupt")
        return [(i, MachineState([str(n)])) for i, n in enumerate(numbers)]

    joints = JointMoves([[Const(str(m)) for m in range(300)], [Const("0")]], 1, Const("0"))
    stream = ConsistentStream(joints, Fraction(1), test)
    got = []
    while True:
        try:
            kid = stream.next_child()
        except QueryInterrupted:
            continue
        if kid is None:
            break
        got.append(kid.joint_move[0].name)
    assert got == [str(m) for m in range(300)] and tried[1] == tried[2]


# -- a turn of 2 x 400 x 400 joint moves ----------------------------------------------------


@pytest.fixture(scope="module")
def hidden() -> StateMachine:
    with load_machine(HIDDEN, "compiled") as c:
        yield c  # type: ignore[misc]


def test_a_witness_of_a_huge_turn_costs_a_batch_on_both_engines(hidden) -> None:  # type: ignore[no-untyped-def]
    """The scout asked for a row hint and heard nothing: 152,000 of the 160,000 joint
    moves agree. In a random order, the first child comes out of the first batch (the
    rule: 64 joint moves tried, not 160,000), and it is one of them."""
    s = hidden.initial_state
    for sm in (hidden.prolog, hidden):
        stream = sm.consistent_children(s, "scout", "(ask row)", [], rng=random.Random(3))
        assert stream.joints.count == 160_000
        kid = stream.next_child()
        assert kid is not None and stream.tried <= FIRST_BATCH and not stream.complete
        guess = kid.joint_move[1]
        hint = sm.percepts(s, kid.joint_move, "scout")
        assert hint == [] and kid.state == sm.next_state(s, kid.joint_move)
        assert str(guess).startswith("(guess ")


def test_the_filter_gathers_what_the_belief_holds_and_weighs_them_for_all(hidden) -> None:  # type: ignore[no-untyped-def]
    """A tracker of the scout after that turn holds particles drawn from at most
    ``GATHER`` children, not the 152,000; every one agrees with the turn."""
    from gdl2pl.ggp import belief_tracker

    tracker = BeliefTracker(hidden, hidden.term("scout"), random.Random(1))
    tracker.update(Turn(hidden.term("(ask row)"), ()), time.monotonic() + 60)
    assert not tracker.exact and 0 < len(tracker.states) <= belief_tracker.EXACT_LIMIT
    for s in list(tracker.states)[:20]:
        assert not hidden.is_terminal(s) and "(round 2)" in str(s)
    assert abs(sum(tracker.states.values()) - 1.0) < 1e-9


def test_a_belief_dropped_is_freed_without_the_collector(hidden) -> None:  # type: ignore[no-untyped-def]
    """Its witness keeps streams half read (here: the filter stopped at ``GATHER``); they
    make no reference cycle with it, so reference counting frees it all at once, and the
    collector, whose pauses hold every thread (the manager's replies too), has nothing
    to do (``gdl2pl.ggp.collection``)."""
    import gc
    import weakref

    gc.disable()
    try:
        tracker = BeliefTracker(hidden, hidden.term("scout"), random.Random(4))
        tracker.update(Turn(hidden.term("(ask row)"), ()), time.monotonic() + 60)
        assert any(k.stream is not None for k in tracker.witness._kids.values())
        refs = [weakref.ref(tracker), weakref.ref(tracker.witness)]
        del tracker
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


def test_an_exact_belief_of_a_huge_turn_ends_at_its_deadline(hidden) -> None:  # type: ignore[no-untyped-def]
    """152,000 children, tens of seconds on the reasoner: with a deadline, the belief
    says it ran out (within a batch of it), instead of answering when the turn is done."""
    start = time.monotonic()
    with pytest.raises(NoConsistentStateError) as e:
        belief(hidden.prolog, [("(ask row)", [])], "scout", deadline=start + 0.3)
    assert not e.value.exhausted and time.monotonic() - start < STOPS_WITHIN


# -- cancellation -----------------------------------------------------------------------------


def _stops_when_cancelled(work, cancel: threading.Event, after: float = 0.3) -> float:  # type: ignore[no-untyped-def]
    """Run ``work()`` in a thread, set ``cancel`` after ``after`` seconds, and return how
    long the work ran on after that; it must end with ``WorkCancelled``."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(after)
    assert thread.is_alive(), "the work ended before it was cancelled: the test proves nothing"
    cancel.set()
    start = time.monotonic()
    thread.join(30)
    took = time.monotonic() - start
    assert not thread.is_alive(), "the cancelled work runs on"
    assert isinstance(outcome[0], WorkCancelled), outcome
    return took


@pytest.mark.parametrize("engine", ["prolog", "compiled"])
def test_a_belief_update_stops_within_a_second_of_its_cancellation(hidden, engine: str) -> None:  # type: ignore[no-untyped-def]
    """The scout's row hint said yes: 8,000 of the 160,000 joint moves agree, so the
    filter tries them all, for a minute on the reasoner (seconds on the network): a
    cancellation ends it at its next batch."""
    sm = hidden.prolog if engine == "prolog" else hidden
    cancel = threading.Event()
    tracker = BeliefTracker(sm, sm.term("scout"), random.Random(2), cancel=cancel)
    yes = Turn(sm.term("(ask row)"), (sm.term("(same row)"),))
    # the witness comes first, whatever the clock: then the filter, which takes long
    tracker.witness.extend(time.monotonic() + 60)
    after = 0.3 if engine == "prolog" else 0.05
    took = _stops_when_cancelled(lambda: tracker.update(yes, time.monotonic() + 600), cancel, after)
    assert took < STOPS_WITHIN


def test_a_witness_search_stops_within_a_second_of_its_cancellation(hidden) -> None:  # type: ignore[no-untyped-def]
    """A history no state fits (a column hint after a row was asked): the search tries
    every joint move of the turn, again and again in rounds, until its deadline, or its
    cancellation."""
    sm = hidden.prolog
    cancel = threading.Event()
    lie = [Turn(sm.term("(ask row)"), (sm.term("(same col)"),))]
    witness = Witness(sm, sm.term("scout"), lie, random.Random(1), cancel)
    took = _stops_when_cancelled(lambda: witness.search([], time.monotonic() + 600), cancel)
    assert took < STOPS_WITHIN


def _resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.parametrize(
    ("end", "answer"), [("(abort h1)", "aborted"), ("(stop h1 2 (ask row) nil)", "done")]
)
def test_a_gdl_ii_match_ended_stops_its_work_and_a_new_one_starts(end: str, answer: str) -> None:
    """A play of the hidden-cell game with a long clock: the belief's work runs for many
    seconds; an abort (or a stop) ends the match, the worker of the old one stops within
    a second or so, the process's CPU and memory stay still, and a new match plays."""
    player = GamePlayer(lambda: make_strategy("random", 1), name="p", margin=0.5, engine="prolog")
    try:
        rules = one_line_rules(read_game(HIDDEN))
        assert player.handle(f"(start h1 scout ({rules}) 60 60)").body == "ready"
        assert player.handle("(play h1 0 nil nil)").status == 200
        # the reply comes at the clock; it runs in the background meanwhile
        reply: list[object] = []
        play = threading.Thread(
            target=lambda: reply.append(player.handle("(play h1 1 (ask row) ((same row)))")),
            daemon=True,
        )
        play.start()
        time.sleep(1.0)
        with player._lock:
            worker = player._match.worker  # type: ignore[union-attr]
        assert worker.alive and not reply
        assert player.handle(end).body == answer
        start = time.monotonic()
        worker.thread.join(30)
        assert not worker.thread.is_alive() and time.monotonic() - start < STOPS_WITHIN
        before, resident = time.process_time(), _resident_mb()
        time.sleep(1.0)
        assert time.process_time() - before < 0.5  # nothing runs on
        assert _resident_mb() - resident < 20
        monty = one_line_rules(read_game(MONTY))
        assert player.handle(f"(start h2 contestant ({monty}) 10 2)").body == "ready"
        assert player.handle("(play h2 0 nil nil)").body == "wait"
        assert player.handle("(play h2 1 wait nil)").body.startswith("(pick ")
    finally:
        player.close()


# -- what the log quotes of the manager's text ------------------------------------------------


class _Failing(Strategy):
    """A strategy whose search fails with a message of many lines and control codes."""

    searches = False

    def select_move(self, state, legal, budget, offer):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom\x1b[2J\x07\r\nforged: INFO fake line")


def test_the_player_log_escapes_the_managers_move_and_a_failure_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The manager's move (here with ESC and BEL in a symbol) and an error's message (CR,
    newline) reach the log escaped: no record holds a raw control character."""
    with StateMachine.from_file(MONTY) as sm:
        role = sm.term("contestant")
        knowledge = Knowledge()
        knowledge.learn(sm, 0, None, None)
        knowledge.learn(sm, 1, parse_kif_term("wait"), ())
        with caplog.at_level(logging.WARNING, logger="gdl2pl.player"):
            move = choose_move(
                sm, role, knowledge, _Failing(), Budget.seconds(2), lambda m: None,
                random.Random(1),
            )
            assert str(move).startswith("(pick ")
            knowledge.learn(sm, 2, parse_kif_term("(pick\x1b[31m\x07 1)"), ())
            choose_move(
                sm, role, knowledge, make_strategy("random", 1), Budget.seconds(2),
                lambda m: None, random.Random(1),
            )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "choosing contestant's move failed" in text and "instead of" in text
    assert "\\x1b[2J\\x07" in text and "\\x1b[31m\\x07" in text
    for record in caplog.records:
        message = record.getMessage()
        assert not any(ch in message for ch in "\x1b\x07\r\n"), repr(message)
