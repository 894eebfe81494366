"""The game manager against real and faulty players over loopback HTTP: whole matches,
a simultaneous game, scrambling, timeouts, garbage and unreachable players, the CLI."""

from __future__ import annotations

import argparse
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES

from gdl2pl.bridge import StateMachine
from gdl2pl.cli.network import add_subcommands
from gdl2pl.ggp.manager import Record
from gdl2pl.ggp.manager import run_match
from gdl2pl.ggp.manager import summary
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.player import Reply
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import Start
from gdl2pl.ggp.protocol import parse_message
from gdl2pl.ggp.server import PlayerServer
from gdl2pl.ggp.server import serving
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.load import read_game

pytestmark = pytest.mark.usefixtures("prolog_main_thread")


TTT = EXAMPLES / "ticTacToe.kif"
PENNIES = EXAMPLES / "matchingPennies.kif"

#: ggp-base's Match.toJSON fields that every record has.
GGP_FIELDS = {
    "matchId",
    "randomToken",
    "startTime",
    "isCompleted",
    "isAborted",
    "states",
    "moves",
    "stateTimes",
    "errors",
    "goalValues",
    "previewClock",
    "startClock",
    "playClock",
    "playerNamesFromHost",
    "scrambled",
}


@contextmanager
def players(
    *kinds: str, margin: float = 1.0, engine: str = "prolog"
) -> Iterator[list[PlayerServer]]:
    with serving(
        GamePlayer(
            lambda k=kind, i=i: make_strategy(k, i),
            name=f"{kind}{i}",
            margin=margin,
            engine=engine,  # type: ignore[arg-type]
        )
        for i, kind in enumerate(kinds)
    ) as servers:
        yield servers


def ttt_match(urls: list[str], seed: int, **options: Any) -> Record:
    """A tic-tac-toe match between the players at ``urls`` (5 s to start, 1 s a move)."""
    return run_match(
        read_game(TTT),
        urls,
        game_name="ticTacToe.kif",
        start_clock=5,
        play_clock=1,
        seed=seed,
        **options,
    )


def replay_is_legal(path: Path, record: dict) -> list[int]:
    """Follow the recorded moves with a fresh state machine; return the final goals."""
    with StateMachine.from_file(path) as sm:
        state = sm.initial_state
        assert record["states"][0] == str(state)
        for joint, text in zip(record["moves"], record["states"][1:], strict=True):
            state = sm.next_state(state, joint)  # raises IllegalMoveError otherwise
            assert text == str(state)
        assert sm.is_terminal(state)
        return sm.goals(state)


def test_turn_taking_match_mcts_against_random() -> None:
    with players("mcts", "random") as (a, b):
        t0 = time.monotonic()
        rec = ttt_match([a.url, b.url], seed=1)
        took = time.monotonic() - t0
    assert rec.keys() >= GGP_FIELDS
    assert rec["isCompleted"] and not rec["isAborted"]
    assert rec["playerNamesFromHost"] == ["mcts0", "random1"]
    assert len(rec["states"]) == len(rec["moves"]) + 1 == len(rec["stateTimes"])
    assert len(rec["errors"]) == len(rec["moves"]) + 1  # start, then each play
    assert all(e == ["", ""] for e in rec["errors"])
    assert rec["goalValues"] == replay_is_legal(TTT, rec)
    assert rec["goalValues"][0] >= 50  # X with search does not lose to random
    assert took < 1.2 * len(rec["moves"]) + 3
    json.dumps(rec)  # JSON-ready
    assert "result after" in summary(rec)


def test_a_match_on_the_compiled_engine_is_a_match_of_the_game(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Players and manager on the compiled engine play tic-tac-toe to its end; the
    reasoner replays every recorded move as legal and agrees on every state and goal."""
    caplog.set_level(logging.INFO, logger="gdl2pl")
    # the players ground within a third of the start clock (their worker runs niced, so
    # on a busy machine it is slow): a long start clock, which a match spends only until
    # both are ready, keeps this a test of the match, not of the machine's speed
    with players("mcts", "random", engine="compiled") as (a, b):
        rec = run_match(read_game(TTT), [a.url, b.url], game_name="ticTacToe.kif",
                        start_clock=60, play_clock=1, seed=3, engine="compiled")
    assert rec["isCompleted"] and not rec["isAborted"]
    assert all(e == ["", ""] for e in rec["errors"])
    assert rec["goalValues"] == replay_is_legal(TTT, rec)
    chosen = [r.getMessage() for r in caplog.records if r.name.startswith("gdl2pl")]
    manager = [m for m in chosen if "the compiled engine plays it" in m]
    players_ = [m for m in chosen if ": compiled engine: grounded" in m]
    assert (len(manager), len(players_)) == (1, 2), chosen


def test_simultaneous_match() -> None:
    with players("random", "legal") as servers:
        rec = run_match(
            read_game(PENNIES), [s.url for s in servers], start_clock=5, play_clock=1, seed=2
        )
    assert rec["isCompleted"]
    assert len(rec["moves"]) == 3 and all(len(j) == 2 for j in rec["moves"])
    assert all(m.startswith("(show ") for j in rec["moves"] for m in j)
    assert [j[1] for j in rec["moves"]] == ["(show heads)"] * 3  # the legal player
    assert sorted(rec["goalValues"]) == [0, 100]
    assert rec["goalValues"] == replay_is_legal(PENNIES, rec)


class _Spy(GamePlayer):
    """A legal player that records the messages it gets."""

    def __init__(self) -> None:
        super().__init__(lambda: make_strategy("legal"), name="spy")
        self.seen: list[str] = []
        self.replies: list[str] = []

    def handle(self, text: str, received: float | None = None) -> Reply:
        self.seen.append(text)
        reply = super().handle(text, received)
        self.replies.append(reply.body)
        return reply


def test_scrambled_match_translates_moves_both_ways() -> None:
    spies = [_Spy(), _Spy()]
    with serving(spies) as servers:
        rec = ttt_match([s.url for s in servers], seed=3, scramble=True)
    assert rec["isCompleted"] and rec["scrambled"]
    assert all(e == ["", ""] for e in rec["errors"])  # every scrambled reply was understood
    start = parse_message(spies[0].seen[1])
    assert isinstance(start, Start)
    for name in ("xplayer", "oplayer", "cell", "mark", "noop", "control", "line"):
        assert name not in start.rules and name not in start.role
    assert "role" in start.rules and "100" in start.rules
    plays = [parse_message(t) for t in spies[1].seen[2:] if t.startswith("(play")]
    assert all(isinstance(p, Play) for p in plays)
    assert "mark" not in " ".join(spies[1].seen[2:])
    # the record speaks the game's own names
    assert rec["moves"][0] == ["(mark 1 1)", "noop"]
    assert rec["goalValues"] == replay_is_legal(TTT, rec)


class _Faulty(BaseHTTPRequestHandler):
    """A player that is slow to its first play, then answers garbage and illegal moves."""

    plays = 0

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        text = self.rfile.read(int(self.headers["Content-Length"])).decode()
        msg = parse_message(text)
        if isinstance(msg, Play):
            type(self).plays += 1
            n = type(self).plays
            if n == 1:
                time.sleep(1.6)  # beyond play clock 1 s + grace 0.3 s
            body = {2: "((( garbage", 3: "(mark 9 9)"}.get(n, "noop")
        else:
            body = "ready"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    t = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_late_garbage_and_illegal_moves_are_replaced_and_recorded() -> None:
    with players("legal") as (good,), fake(_Faulty) as bad:
        rec = ttt_match([bad, good.url], seed=4, grace=0.3)
    assert rec["isCompleted"]
    bad_errors = [e[0] for e in rec["errors"][1:]]
    assert bad_errors[0] == "TO"
    assert "IL ((( garbage" in bad_errors
    assert "IL (mark 9 9)" in bad_errors
    assert all(e[1] == "" for e in rec["errors"])
    assert rec["goalValues"] == replay_is_legal(TTT, rec)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_player_plays_randomly() -> None:
    with players("legal") as (good,):
        rec = run_match(
            read_game(TTT),
            [good.url, f"127.0.0.1:{_closed_port()}"],
            start_clock=2,
            play_clock=1,
            seed=5,
        )
    assert rec["isCompleted"]
    assert all(e[1] == "CE" for e in rec["errors"])
    assert rec["goalValues"] == replay_is_legal(TTT, rec)


def test_wrong_number_of_players() -> None:
    with pytest.raises(ValueError, match="2 roles"):
        run_match(read_game(TTT), ["127.0.0.1:1"])


def _cli(argv: list[str]) -> tuple[argparse.Namespace, Callable[[argparse.Namespace], int]]:
    parser = argparse.ArgumentParser(prog="gdl2pl")
    handlers = add_subcommands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args, handlers[args.command]


def test_cli_match_writes_the_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "match.json"
    with players("legal", "random") as (a, b):
        args, handler = _cli(
            [
                "match",
                str(TTT),
                "--player",
                a.url,
                "--player",
                b.url,
                "--startclock",
                "3",
                "--playclock",
                "1",
                "--scramble",
                "--seed",
                "6",
                "--out",
                str(out),
            ]
        )
        assert handler(args) == 0
    rec = json.loads(out.read_text())
    assert rec["isCompleted"] and rec["scrambled"] and rec["gameName"] == "ticTacToe.kif"
    printed = capsys.readouterr().out
    assert printed.startswith(f"match {rec['matchId']}: ticTacToe.kif")
    assert "result after" in printed


def test_cli_match_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.kif"
    bad.write_text("(role a) (<= (legal a ?m) (q ?n))")
    args, handler = _cli(["match", str(bad), "--player", "127.0.0.1:1"])
    assert handler(args) == 1
    assert "error" in capsys.readouterr().err
    args, handler = _cli(["match", str(TTT), "--player", "127.0.0.1:1"])
    assert handler(args) == 2  # one player for two roles
    args, handler = _cli(["match", str(tmp_path / "missing.kif"), "--player", "x:1"])
    assert handler(args) == 2


def test_cli_serve_parses_its_options() -> None:
    args, handler = _cli(["serve", "--port", "0", "--player", "random", "--name", "my player"])
    assert (args.port, args.host, args.player, args.name) == (0, "127.0.0.1", "random", "my player")
    assert handler.__name__ == "serve"
