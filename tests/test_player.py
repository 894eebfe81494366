"""The GGP player: the protocol logic (GamePlayer), its strategies (MCTS against random) and
its HTTP server (ggp-base's wire format, CORS, GET, bad input). Loopback only."""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import EXAMPLES
from conftest import REPO
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from gdl2pl.bridge import ReasonerError
from gdl2pl.bridge import StateMachine
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.protocol import parse_info_reply
from gdl2pl.ggp.protocol import parse_move
from gdl2pl.ggp.scramble import Scrambler
from gdl2pl.ggp.server import PlayerServer
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import Strategy
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.kif import parse_kif_term
from gdl2pl.load import read_game
from gdl2pl.syntax import Term

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


TTT = EXAMPLES / "ticTacToe.kif"
PENNIES = EXAMPLES / "matchingPennies.kif"


def rules(path=TTT) -> str:  # type: ignore[no-untyped-def]
    return one_line_rules(read_game(path))


def start(match_id: str, role: str, start_clock: int = 5, play_clock: int = 2, path=TTT) -> str:  # type: ignore[no-untyped-def]
    return f"(start {match_id} {role} ({rules(path)}) {start_clock} {play_clock})"


@contextmanager
def player(kind: str = "legal", **options: object) -> Iterator[GamePlayer]:
    p = GamePlayer(lambda: make_strategy(kind, 1), name=f"test-{kind}", **options)  # type: ignore[arg-type]
    try:
        yield p
    finally:
        p.close()


# -- the protocol logic ---------------------------------------------------------------------


def test_a_whole_match_message_by_message() -> None:
    with player("legal") as p:
        assert parse_info_reply(p.handle("(info)").body).status == "available"
        assert p.handle(start("m1", "xplayer")).body == "ready"
        assert parse_info_reply(p.handle("(info)").body).status == "busy"
        assert p.handle("(play m1 nil)").body == "(mark 1 1)"
        # oplayer's turn: xplayer's only legal move is noop
        assert p.handle("(play m1 ((mark 1 1) noop))").body == "noop"
        assert p.handle("( PLAY m1 ( NOOP ( MARK 2 2 ) ) )").body == "(mark 1 2)"
        assert p.handle("(stop m1 ((mark 1 2) noop))").body == "done"
        assert parse_info_reply(p.handle("(info)").body).status == "available"


def test_start_while_busy_unknown_ids_and_restarts() -> None:
    with player("random") as p:
        assert p.handle(start("a", "oplayer")).body == "ready"
        assert p.handle(start("b", "xplayer")).body == "busy"
        r = p.handle("(play b nil)")
        assert (r.status, r.body.startswith("error: unknown match")) == (404, True)
        assert p.handle("(stop b nil)").status == 404
        assert p.handle("(abort b)").status == 404
        assert p.handle("(play a nil)").body == "noop"
        assert p.handle("(abort a)").body == "aborted"
        # a new match after an abort, then after a stop
        assert p.handle(start("b", "xplayer")).body == "ready"
        assert parse_move(p.handle("(play b nil)").body).name == "mark"  # type: ignore[union-attr]
        assert p.handle("(stop b nil)").body == "done"
        assert p.handle(start("c", "oplayer")).body == "ready"
        assert p.handle("(play c nil)").body == "noop"
        assert p.handle("(play a nil)").status == 404  # the old match is gone


def test_illegal_joint_move_is_refused_and_the_match_goes_on() -> None:
    with player("legal") as p:
        p.handle(start("m", "oplayer"))
        assert p.handle("(play m nil)").body == "noop"
        r = p.handle("(play m ((mark 9 9) noop))")
        assert r.status == 400 and "not a legal move" in r.body
        r = p.handle("(play m ((mark 1 1)))")  # one move for two roles
        assert r.status == 400 and r.body.startswith("error:")
        assert p.handle("(play m ((mark 1 1) noop))").body == "(mark 1 2)"


@pytest.mark.parametrize(
    ("rules_text", "fragment"),
    [
        ("(role xplayer) (<=)", "cannot load"),  # a rule without a head
        ("(role xplayer) (init (p)) (<= (legal xplayer ?m) (q ?n))", "not valid GDL"),
    ],
)
def test_rules_that_cannot_be_loaded_get_an_error(rules_text: str, fragment: str) -> None:
    with player("legal") as p:
        r = p.handle(f"(start m xplayer ({rules_text}) 5 2)")
        assert r.status == 400 and fragment in r.body
        assert parse_info_reply(p.handle("(info)").body).status == "available"
        assert p.handle(start("m2", "xplayer")).body == "ready"


def test_start_for_a_role_the_game_does_not_have() -> None:
    with player("legal") as p:
        r = p.handle(start("m", "zplayer"))
        assert r.status == 400 and "not a role" in r.body
        assert p.handle(start("m", "xplayer")).body == "ready"


def test_malformed_messages_get_400_and_the_player_goes_on() -> None:
    with player("legal") as p:
        for text in ("", "(play m nil", "(hello)", "\x00\xff", "(start m x"):
            r = p.handle(text)
            assert r.status == 400 and r.body.startswith("error: malformed message")
        assert p.handle(start("m", "xplayer")).body == "ready"
        assert p.handle("(play m nil)").body == "(mark 1 1)"


class _Slow(Strategy):
    """Offers its first legal move, then ignores the budget for ``delay`` seconds."""

    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def select_move(self, state, legal, budget, offer):  # type: ignore[no-untyped-def]
        offer(legal[-1])
        time.sleep(self.delay)
        return legal[0]


def test_reply_leaves_before_the_play_clock_even_if_the_strategy_is_slow() -> None:
    p = GamePlayer(lambda: _Slow(2.5), margin=0.5)
    try:
        p.handle(start("m", "xplayer", play_clock=2))
        t0 = time.monotonic()
        r = p.handle("(play m nil)", received=t0)
        took = time.monotonic() - t0
        assert r.body == "(mark 3 3)"  # the move offered, not the one returned late
        assert 1.0 <= took < 1.6  # clock 2 s, margin min(max(0.5, 0.2), 1) = 0.5 s
        assert p.handle("(stop m nil)").body == "done"
    finally:
        p.close()


class _Exhausted(Strategy):
    """A search that offers a move, then runs out of a Prolog resource."""

    def select_move(self, state, legal, budget, offer):  # type: ignore[no-untyped-def]
        offer(legal[-1])
        raise ReasonerError("game: Stack limit (1.0Gb) exceeded: out of a Prolog resource")


def test_an_error_in_the_search_sends_the_offered_move_not_the_error(caplog) -> None:  # type: ignore[no-untyped-def]
    p = GamePlayer(lambda: _Exhausted())
    try:
        p.handle(start("m", "xplayer", play_clock=5))
        r = p.handle("(play m nil)")
        assert r.status == 200 and r.body == "(mark 3 3)"  # the move offered
        assert "the search failed" in caplog.text and "Stack limit" in caplog.text
        assert p.handle("(stop m nil)").body == "done"
    finally:
        p.close()


class _FailsAtOnce(Strategy):
    """A search that fails before it offers anything (Python's own resource error)."""

    def select_move(self, state, legal, budget, offer):  # type: ignore[no-untyped-def]
        raise MemoryError


def test_a_search_that_fails_before_offering_sends_the_first_legal_move(caplog) -> None:  # type: ignore[no-untyped-def]
    p = GamePlayer(lambda: _FailsAtOnce())
    try:
        p.handle(start("m", "xplayer", play_clock=5))
        r = p.handle("(play m nil)")
        with StateMachine.from_file(TTT) as sm:
            first = sm.legal_moves(sm.initial_state, sm.roles[0])[0]
        assert r.status == 200 and parse_kif_term(r.body) == parse_kif_term(str(first))
        assert "the search failed (MemoryError)" in caplog.text
    finally:
        p.close()


def test_huge_clocks_are_cut_to_max_clock(caplog) -> None:  # type: ignore[no-untyped-def]
    p = GamePlayer(lambda: _Slow(30), margin=0.5, max_clock=2)
    try:
        assert p.handle(start("m", "xplayer", play_clock=999_999_999)).body == "ready"
        assert "cut to at most 2 s" in caplog.text
        t0 = time.monotonic()
        assert p.handle("(play m nil)", received=t0).body == "(mark 3 3)"
        assert time.monotonic() - t0 < 2.0  # the 2 s clock, not 999,999,999 s
        assert p.handle("(abort m)").body == "aborted"
    finally:
        p.close()


def test_the_search_tree_stays_within_max_nodes() -> None:
    from gdl2pl.ggp.mcts import MctsStrategy
    from gdl2pl.ggp.mcts import _size

    with StateMachine.from_file(TTT) as sm:
        s = MctsStrategy(seed=1, max_nodes=40)
        s.metagame(sm, sm.roles[0], Budget.seconds(1))
        state = sm.initial_state
        legal = sm.legal_moves(state, sm.roles[0])
        s.select_move(state, legal, Budget.seconds(0.5), lambda m: None)
        assert s.iterations > 40  # the search went on once the tree was full
        assert s.root is not None and _size(s.root) == s.nodes <= 40


def test_serve_max_nodes_reaches_the_mcts_tree_and_is_refused_elsewhere(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.cli.main import main
    from gdl2pl.ggp import server

    built: list[Strategy] = []

    class _NoServer:
        def __init__(self, player: GamePlayer, host: str, port: int) -> None:
            built.append(player.new_strategy())
            raise OSError("no port in this test")

    monkeypatch.setattr(server, "PlayerServer", _NoServer)
    assert main(["serve", "--port", "0", "--max-nodes", "40"]) == 2
    from gdl2pl.ggp.mcts import MctsStrategy

    assert isinstance(built[0], MctsStrategy) and built[0].max_nodes == 40
    assert main(["serve", "--port", "0", "--player", "legal", "--max-nodes", "40"]) == 2
    assert len(built) == 1  # refused before any server
    assert main(["serve", "--port", "0", "--max-nodes", "0"]) == 2 and len(built) == 1


def test_margin_rule() -> None:
    p = GamePlayer(lambda: make_strategy("legal"))
    try:
        assert p.margin_for(30) == 3.0  # 10 % of a long clock
        assert p.margin_for(5) == 1.0  # at least 1 s
        assert p.margin_for(1) == 0.5  # but never more than half the clock
    finally:
        p.close()


# -- strategies -----------------------------------------------------------------------------


def _play_out(sm: StateMachine, strategies: list[Strategy], think: float) -> list[int]:
    for s, role in zip(strategies, sm.roles, strict=True):
        s.metagame(sm, role, Budget.seconds(1))
    state = sm.initial_state
    while not sm.is_terminal(state):
        joint: list[Term] = []
        for s, role in zip(strategies, sm.roles, strict=True):
            legal = sm.legal_moves(state, role)
            move = (
                legal[0]
                if len(legal) == 1
                else s.select_move(state, legal, Budget.seconds(think), lambda m: None)
            )
            assert move in legal
            joint.append(move)
        state = sm.next_state(state, joint)
    return sm.goals(state)


def test_mcts_beats_random_at_tic_tac_toe() -> None:
    wins = losses = 0
    with StateMachine.from_file(TTT) as sm:
        for match in range(8):
            me = match % 2  # alternate roles: four matches as X, four as O
            strategies = [make_strategy("mcts" if i == me else "random", match) for i in range(2)]
            goal = _play_out(sm, strategies, think=0.15)[me]
            wins += goal == 100
            losses += goal == 0
    assert losses <= 1, (wins, losses)
    assert wins >= 5, (wins, losses)


def test_mcts_plays_a_simultaneous_game() -> None:
    with StateMachine.from_file(PENNIES) as sm:
        strategies = [make_strategy("mcts", 3), make_strategy("mcts", 4)]
        goals = _play_out(sm, strategies, think=0.1)
        assert sorted(goals) == [0, 100]
        # searched (a last round whose outcome is decided whatever is shown is proven
        # at once, with no iteration: count them all)
        assert sum(r.iterations for r in strategies[0].take_reports()) > 10


def test_mcts_keeps_its_tree_between_steps() -> None:
    with StateMachine.from_file(TTT) as sm:
        s = make_strategy("mcts", 5)
        x = sm.roles[0]
        s.metagame(sm, x, Budget.seconds(1))
        state = sm.initial_state
        move = s.select_move(state, sm.legal_moves(state, x), Budget.seconds(0.2), lambda m: None)
        root = s.root  # type: ignore[attr-defined]
        state = sm.next_state(state, [move, parse_kif_term("noop")])
        s.select_move(state, sm.legal_moves(state, x), Budget.seconds(0.05), lambda m: None)
        assert s.root in root.children.values()  # type: ignore[attr-defined]


# -- HTTP -----------------------------------------------------------------------------------


@contextmanager
def serving(kind: str = "legal", **options: object) -> Iterator[PlayerServer]:
    server = PlayerServer(
        GamePlayer(lambda: make_strategy(kind, 2), name="web", **options),  # type: ignore[arg-type]
        "127.0.0.1",
        0,
        read_timeout=2.0,
    )
    server.start_in_thread()
    try:
        yield server
    finally:
        server.close()


def request(
    server: PlayerServer,
    method: str,
    path: str = "/",
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> http.client.HTTPResponse:
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=10)
    conn.request(
        method,
        path,
        body=body.encode() if body is not None else None,
        headers=headers or ({"Content-Type": "text/acl"} if body is not None else {}),
    )
    r = conn.getresponse()
    r.body = r.read().decode()  # type: ignore[attr-defined]
    conn.close()
    return r


def raw(server: PlayerServer, data: bytes, shut: bool = True) -> bytes:
    """Send raw bytes, half-close, return everything the server answers."""
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=10) as s:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, GET, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type",
}


def test_post_replies_in_text_acl_with_cors_headers() -> None:
    with serving() as server:
        r = request(server, "POST", body="( INFO )")
        assert r.status == 200 and r.getheader("Content-Type", "").startswith("text/acl")
        assert parse_info_reply(r.body).status == "available"  # type: ignore[attr-defined]
        for k, v in CORS.items():
            assert r.getheader(k) == v


def test_options_preflight() -> None:
    with serving() as server:
        r = request(
            server,
            "OPTIONS",
            headers={"Origin": "http://example.org", "Access-Control-Request-Method": "POST"},
        )
        assert r.status == 200 and r.body == ""  # type: ignore[attr-defined]
        for k, v in CORS.items():
            assert r.getheader(k) == v


def test_get_with_the_message_in_the_path() -> None:
    with serving() as server:
        # as java.net.URLEncoder writes it: spaces as '+'
        r = request(server, "GET", "/" + urllib.parse.quote_plus("( info )"))
        assert parse_info_reply(r.body).status == "available"  # type: ignore[attr-defined]
        assert r.getheader("Access-Control-Allow-Origin") == "*"
        r = request(server, "GET", "/")
        assert parse_info_reply(r.body).name == "web"  # type: ignore[attr-defined]
        msg = urllib.parse.quote(start("g", "xplayer"))
        assert request(server, "GET", "/" + msg).body == "ready"  # type: ignore[attr-defined]
        assert request(server, "GET", "/" + urllib.parse.quote("(play g nil)")).body == "(mark 1 1)"  # type: ignore[attr-defined]
        assert request(server, "GET", "/%28abort%20g%29").body == "aborted"  # type: ignore[attr-defined]


def test_bad_input_never_stops_the_server() -> None:
    with serving() as server:
        r = request(server, "POST", body="(play nothing")
        assert r.status == 400 and r.body.startswith("error:")  # type: ignore[attr-defined]
        # a message cut short: Content-Length promises more than arrives
        answer = raw(server, b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n(start m x ((role")
        assert b" 400 " in answer.split(b"\r\n")[0] and b"error:" in answer
        # not HTTP at all
        assert b"400" in raw(server, b"\x16\x03\x01 hello there\r\n\r\n")
        # a client that connects and says nothing is dropped after read_timeout
        raw(server, b"", shut=False)
        # HTTP/1.1 without Content-Length
        assert b" 411 " in raw(server, b"POST / HTTP/1.1\r\nHost: x\r\n\r\n(info)")
        assert request(server, "POST", body="(info)").status == 200
        assert request(server, "PUT", body="(info)").status == 501
        # HTTP/1.0 without Content-Length: the body ends with the stream (as ggp-base reads)
        assert b"status available" in raw(server, b"POST / HTTP/1.0\r\n\r\n(info)")
        assert request(server, "POST", body=start("m", "oplayer")).body == "ready"  # type: ignore[attr-defined]
        assert request(server, "POST", body="(play m nil)").body == "noop"  # type: ignore[attr-defined]


def test_scrambled_rules_are_played_without_names() -> None:
    scrambler = Scrambler()
    game = read_game(TTT)
    text = one_line_rules(scrambler.description(game))
    x = scrambler.symbol("xplayer")
    with serving("mcts", margin=0.8) as server, StateMachine.from_description(game) as sm:
        assert "mark" not in text and "cell" not in text
        assert request(server, "POST", body=f"(start s {x} ({text}) 5 1)").body == "ready"  # type: ignore[attr-defined]
        reply = request(server, "POST", body="(play s nil)").body  # type: ignore[attr-defined]
        move = sm.term(str(scrambler.unterm(parse_move(reply))))
        assert move in sm.legal_moves(sm.initial_state, "xplayer")
        assert request(server, "POST", body="(abort s)").body == "aborted"  # type: ignore[attr-defined]


@pytest.mark.parametrize("length", ["6_0", "+6", "٦", "0x6", "-0", "1e1", "6.0", ""])
def test_content_length_is_ascii_digits_only(length: str) -> None:
    with serving() as server:
        head = f"POST / HTTP/1.0\r\nContent-Length: {length}\r\n\r\n".encode()
        answer = raw(server, head + b"(info)")
        assert b" 400 " in answer.split(b"\r\n")[0] and b"bad Content-Length" in answer
        assert b" 200 " in raw(server, b"POST / HTTP/1.0\r\nContent-Length:  6 \r\n\r\n(info)")


def _big_game(facts: int) -> str:
    head = (
        "(role xplayer) (init (c 1)) (<= (legal xplayer go) (true (c 1))) "
        "(<= (next (c 1)) (does xplayer go)) (<= terminal (true (c 2))) (goal xplayer 0) "
    )
    return head + " ".join(f"(fact{i % 97} {i} (g {i}))" for i in range(facts))


def test_an_aborted_start_stops_compiling_at_once() -> None:
    p = GamePlayer(lambda: make_strategy("legal"), margin=0.2)
    try:
        rules = _big_game(150_000)  # several seconds of compiling in Python
        before = set(threading.enumerate())  # other tests' workers may still be stopping
        t0 = time.monotonic()
        # the match must not expire (3 play clocks of silence) while the message's 150,000
        # facts are still being read: on a machine four times as slow as this one that
        # took more than 15 s, so a play clock of 600 s (expiry is not what is tested
        # here); the start clock stays 1 s
        assert p.handle(f"(start big xplayer ({rules}) 1 600)", received=t0).body == "ready"
        assert p.handle("(abort big)").body == "aborted"
        aborted = time.monotonic()
        while any(
            t.name.startswith("gdl2pl-player") and t not in before for t in threading.enumerate()
        ):
            assert time.monotonic() - aborted < 3.0, "the worker goes on compiling"
            time.sleep(0.05)
        assert p.handle(start("next", "xplayer")).body == "ready"  # the next match plays
        assert p.handle("(play next nil)").status == 200
    finally:
        p.close()


#: A game whose one fluent doubles in size each step.
DOUBLING = (REPO / "tests" / "games" / "doubling.kif").read_text(encoding="utf-8")


def test_a_game_that_grows_a_term_ends_its_match_not_the_player() -> None:
    p = GamePlayer(lambda: make_strategy("mcts", 1), margin=0.2)
    try:
        # the clock is not what is tested: near the cap a step's state has 65,536 nodes,
        # which on a machine four times as slow as this one took longer than a 1 s clock
        # to compute (the reply was nil); with one legal move each reply leaves as soon
        # as the state is known, so a 10 s clock costs no time
        assert p.handle(f"(start g xplayer ({DOUBLING}) 2 10)").body == "ready"
        replies = [p.handle("(play g nil)")]
        for _ in range(25):
            replies.append(p.handle("(play g (stay))"))
            if replies[-1].status != 200:
                break
        last = replies[-1]
        assert last.status == 400 and "more than 100,000 nodes" in last.body
        assert all(r.body == "stay" for r in replies[:-1])
        p.handle("(abort g)")
        assert p.handle(start("next", "xplayer")).body == "ready"  # the player goes on
        assert p.handle("(play next nil)").status == 200
    finally:
        p.close()


@settings(max_examples=8, deadline=None)
@given(
    start_clock=st.integers(1, 999_999_999),  # the protocol refuses longer ones
    play_clock=st.integers(1, 999_999_999),
)
def test_any_clocks_are_answered_within_max_clock(start_clock: int, play_clock: int) -> None:
    p = GamePlayer(lambda: make_strategy("mcts", 1), margin=0.2, max_clock=1)
    try:
        t0 = time.monotonic()
        r = p.handle(start("m", "xplayer", start_clock=start_clock, play_clock=play_clock))
        assert r.body == "ready"
        r = p.handle("(play m nil)")
        assert r.status == 200 and r.body.startswith("(mark")
        assert time.monotonic() - t0 < 2 * 1 + 1.0  # two clocks of at most 1 s, and slack
        p.handle("(abort m)")
    finally:
        p.close()
