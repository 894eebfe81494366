"""A GDL-II player under hostile play messages, driven over HTTP as a manager drives it
(issue 40, item 8): every ``play`` gets a move of the game in time, legal in a state
consistent with the history whenever the history can have happened; a message that is
itself wrong (a turn out of order, a missing move, a play of the other protocol) gets a
4xx saying why; nothing gets a 500."""

from __future__ import annotations

import http.client
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import hypothesis
import pytest
from conftest import EXAMPLES
from hypothesis import strategies as st
from prolog_env import require_prolog

from gdl2pl.bridge import StateMachine
from gdl2pl.bridge import swipl as engine
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.server import PlayerServer
from gdl2pl.ggp.strategy import Strategy
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.information import NoConsistentStateError
from gdl2pl.information import belief
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import read_game

MONTY = EXAMPLES / "montyHall.kif"
PLAY_CLOCK = 1
#: Every move the contestant has in some state of Monty Hall.
MONTY_MOVES = {"wait", "stay", "switch", "(pick 1)", "(pick 2)", "(pick 3)"}


@pytest.fixture(autouse=True)
def _needs_prolog() -> None:
    require_prolog()
    engine.attach_thread()  # janus is started from the main thread, before any worker


@contextmanager
def served(kind: str = "mcts") -> Iterator[int]:
    """A player with strategy ``kind`` behind a real HTTP server; yields its port."""
    player = GamePlayer(lambda: make_strategy(kind, 1), name="hostile-ii", margin=0.2)
    server = PlayerServer(player, "127.0.0.1", 0, read_timeout=2.0)
    server.start_in_thread()
    try:
        yield int(server.server_address[1])
    finally:
        server.close()


def post(port: int, text: str) -> tuple[int, str, float]:
    """POST ``text`` as a manager does: the reply's status, body and seconds taken."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.monotonic()
    try:
        conn.request("POST", "/", body=text.encode(), headers={"Content-Type": "text/acl"})
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", errors="replace"), time.monotonic() - start
    finally:
        conn.close()


def start(port: int, match_id: str) -> None:
    rules = one_line_rules(read_game(MONTY))
    status, body, _ = post(port, f"(start {match_id} contestant ({rules}) 10 {PLAY_CLOCK})")
    assert (status, body) == (200, "ready")


def test_the_issue_reproduction_gets_a_move_for_every_play_never_a_500() -> None:
    """Impossible percepts, then a move that is no move of the game: the next plays
    (the game is over in every reading) still get a move of the game."""
    with served() as port:
        start(port, "g1")
        for text in [
            "(play g1 0 nil nil)",
            "(play g1 1 wait ((halt)))",
            "(play g1 2 (pick 1) ((zzz)))",
            "(play g1 3 wait ((zzz)))",
            "(play g1 4 (fly away) ((zzz)))",
            "(play g1 5 stay nil)",
            "(play g1 6 stay nil)",
        ]:
            status, body, took = post(port, text)
            assert status == 200 and body in MONTY_MOVES, (text, status, body)
            assert took < PLAY_CLOCK, (text, took)


def test_a_play_of_the_other_protocol_is_refused_and_the_match_goes_on() -> None:
    """A match is played with GDL-II's plays or with GDL's, never both: the player could
    not know which state the other kind of message speaks of."""
    with served() as port:
        start(port, "g2")
        assert post(port, "(play g2 0 nil nil)")[:2] == (200, "wait")
        status, body, _ = post(port, "(play g2 (wait (hide 1)))")
        assert status == 400 and "GDL-II" in body, body
        status, body, _ = post(port, "(play g2 1 wait nil)")
        assert status == 200 and body.startswith("(pick "), body
    with served() as port:
        start(port, "g3")
        assert post(port, "(play g3 nil)")[:2] == (200, "wait")
        status, body, _ = post(port, "(play g3 1 wait nil)")
        assert status == 400 and "(play ID MOVES)" in body, body


# -- a campaign of generated GDL-II histories ----------------------------------------------

#: What a hostile manager may put in a turn instead of the truth.
JUNK_MOVES = ["(fly away)", "(pick 9)", "stay", "wait", "(pick 1)", "nil", "(zzz)", "0"]
JUNK_PERCEPTS = ["((zzz))", "((opened 1))", "((car 2) (car 3))", "()", "((halt) (x ?))", "nil"]


def _true_turns(sm: StateMachine, rng: random.Random) -> list[tuple[str, str]]:
    """A real match of Monty Hall played at random: the contestant's (move, percepts)
    of each turn, as KIF text."""
    role = sm.term("contestant")
    index = sm.roles.index(role)
    state, turns = sm.initial_state, []
    while not sm.is_terminal(state):
        joint = [rng.choice(ms) for ms in sm.all_legal_moves(state)]
        seen = sm.percepts(state, joint, role)
        turns.append((kif_term(joint[index]), "(" + " ".join(map(kif_term, seen)) + ")"))
        state = sm.next_state(state, joint)
    return turns


def _legal_somewhere(sm: StateMachine, history: list[tuple[str, str]], move: str) -> bool | None:
    """Whether ``move`` is legal for the contestant in some state consistent with
    ``history``; None when no state is (the history cannot have happened)."""
    role = sm.term("contestant")
    try:
        turns = [(parse_kif_term(m), [parse_kif_term(p) for p in _items(ps)]) for m, ps in history]
        states = belief(sm, turns, role)
    except (NoConsistentStateError, ValueError):
        return None
    live = [s for s in states if not sm.is_terminal(s)]
    if not live:
        return None
    return any(sm.term(move) in sm.legal_moves(s, role) for s in live)


def _items(percepts: str) -> list[str]:
    """The items of a KIF list of percepts (``nil`` or ``(...)``), as text."""
    from gdl2pl.ggp.protocol import parse_message

    msg = parse_message(f"(play m 1 x {percepts})")
    return [kif_term(p) for p in (msg.percepts or ())]  # type: ignore[union-attr]


def test_generated_gdl_ii_histories_always_get_a_move_in_time() -> None:
    """Matches of Monty Hall told truthfully or with lies (moves the player did not
    make or that are no moves, percepts it cannot have, turns skipped or repeated):
    each play is answered 200 with a move of the game within the clock, legal in a
    state consistent with the history while there is one, or 400 for a turn out of
    order or a missing move; never anything else."""
    lies = st.lists(
        st.tuples(
            st.sampled_from(["truth", "truth", "move", "percepts", "skip", "repeat", "nil"]),
            st.sampled_from(JUNK_MOVES),
            st.sampled_from(JUNK_PERCEPTS),
        ),
        min_size=1,
        max_size=6,
    )
    matches = [0]
    with served("random") as port, StateMachine.from_file(MONTY) as sm:

        @hypothesis.settings(
            max_examples=25,
            deadline=None,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        @hypothesis.given(st.integers(0, 10_000), lies)
        def campaign(seed: int, plan: list[tuple[str, str, str]]) -> None:
            matches[0] += 1
            match_id = f"h{matches[0]}"
            start(port, match_id)
            try:
                truth = _true_turns(sm, random.Random(seed))
                status, body, _ = post(port, f"(play {match_id} 0 nil nil)")
                assert (status, body) == (200, "wait")
                told: list[tuple[str, str]] = []
                for (kind, junk_move, junk_percepts), (move, percepts) in zip(
                    plan, truth, strict=False
                ):
                    turn = len(told) + 1
                    if kind == "move":
                        move = junk_move
                    elif kind == "percepts":
                        percepts = junk_percepts
                    sent_turn = {"skip": turn + 1, "repeat": turn - 1}.get(kind, turn)
                    sent_move = "nil" if kind == "nil" else move
                    text = f"(play {match_id} {sent_turn} {sent_move} {percepts})"
                    status, body, took = post(port, text)
                    assert took < PLAY_CLOCK, (text, took)
                    if kind in ("skip", "repeat", "nil") or not _well_formed(move, percepts):
                        assert status == 400 and body.startswith("error: "), (text, status, body)
                        continue
                    told.append((move, percepts))
                    assert status == 200 and body in MONTY_MOVES, (text, status, body)
                    legal = _legal_somewhere(sm, told, body)
                    assert legal is not False, (told, body)
            finally:
                post(port, f"(abort {match_id})")

        campaign()
    assert matches[0] >= 10


def _well_formed(move: str, percepts: str) -> bool:
    """A move and percepts the protocol can carry: a ground move, not ``nil``, and a
    list of ground percepts."""
    return move != "nil" and "?" not in percepts


# -- messages too large, and a worker that runs over ------------------------------------------


def test_a_play_too_large_to_read_in_time_is_refused_at_once() -> None:
    """A play of megabytes of percepts took seconds to read (the reply came after the
    clock, and every later play got nil): past ``MAX_PLAY`` it is refused at once,
    saying why, and the turn sent again in a readable size gets a move."""
    from gdl2pl.ggp.protocol import MAX_PLAY

    percepts = "(" + " ".join(f"(opened {i})" for i in range(MAX_PLAY // 8)) + ")"
    with served() as port:
        start(port, "big")
        assert post(port, "(play big 0 nil nil)")[:2] == (200, "wait")
        status, body, took = post(port, f"(play big 1 wait {percepts})")
        assert status == 400 and f"at most {MAX_PLAY} characters" in body, body
        assert took < PLAY_CLOCK / 2
        status, body, took = post(port, "(play big 1 wait nil)")
        assert status == 200 and body.startswith("(pick "), body
        assert took < PLAY_CLOCK


MARKS = Path(__file__).parent / "games" / "gdl2" / "blind_marks_5x5.kif"


class _Overrunning(Strategy):
    """The legal strategy, but its second choice takes three play clocks (a search
    that does not watch its budget)."""

    searches = False

    def __init__(self) -> None:
        self.calls = 0

    def select_move(self, state, legal, budget, offer):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 2:
            time.sleep(3 * PLAY_CLOCK)
        return legal[0]


def test_a_play_answered_while_the_turn_before_still_runs_gets_a_move_not_nil() -> None:
    """White's search of turn 2 runs over its clock; turn 3 (its try was taken: white
    tries again) arrives while the worker is still on turn 2, and its reply leaves at
    the clock with a move legal on the turn before, other than the one played: legal
    here, where nil never is."""
    player = GamePlayer(_Overrunning, name="overrun", margin=0.2)
    server = PlayerServer(player, "127.0.0.1", 0, read_timeout=2.0)
    server.start_in_thread()
    port = int(server.server_address[1])
    try:
        rules = one_line_rules(read_game(MARKS))
        assert post(port, f"(start o1 white ({rules}) 10 {PLAY_CLOCK})")[:2] == (200, "ready")
        assert post(port, "(play o1 0 nil nil)")[:2] == (200, "(try 1 1)")
        assert post(port, "(play o1 1 (try 1 1) ((ok 1 1)))")[:2] == (200, "noop")
        status, mine, took = post(port, "(play o1 2 noop (yourturn))")  # runs over
        assert status == 200 and mine.startswith("(try ") and took < PLAY_CLOCK
        cell = mine.removeprefix("(try ").rstrip(")")
        # black had marked that very cell on turn 1: white's try is taken, white again
        status, body, took = post(port, f"(play o1 3 {mine} ((taken {cell})))")
        assert status == 200 and took < PLAY_CLOCK, (status, body, took)
        with StateMachine.from_file(MARKS) as sm:
            state = sm.initial_state
            for joint in (["(try 1 1)", "noop"], ["noop", mine], [mine, "noop"]):
                state = sm.next_state(state, joint)
            assert body in {kif_term(m) for m in sm.legal_moves(state, "white")}, body
    finally:
        server.close()
