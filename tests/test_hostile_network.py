"""The GGP player and the match manager under hostile network input (issue 12).

Player: a shell payload in a match id (the issue's first reproduction, through
``gdl2pl serve``), a stopped or aborted match whose Prolog work is slow (the next match must
not wait behind it), a match whose manager goes silent (it expires), log lines that a
message tries to forge, clients that reset their connections, and a hypothesis campaign of
generated malformed and adversarial messages. Manager: replies nested too deep or too
large, a game that raises a Prolog error, a bug in the middle of a match, and a game whose
quoted infix names KIF cannot write (scrambled or not).

Loopback only; clocks of 1-2 s; the campaign has a fixed number of examples.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from typing import ClassVar

import prolog_env
import pytest
from conftest import EXAMPLES

from gdl2pl.ggp.protocol import MAX_DEPTH
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.protocol import parse_info_reply
from gdl2pl.ggp.protocol import parse_message
from gdl2pl.load import read_game

GAMES = Path(__file__).resolve().parent / "games" / "network"
TTT = EXAMPLES / "ticTacToe.kif"
SLOW_LEGAL = GAMES / "slow_legal.kif"  # legal moves take seconds: interruptible
SLOW_LOAD = GAMES / "slow_load.kif"  # loading takes seconds
QUOTED = GAMES / "quoted_names.gdl"  # infix names KIF cannot write bare


def require_module(name: str) -> ModuleType:
    """Import an optional library: skip without it, except in CI, where it must be there."""
    if os.environ.get("CI") == "true":
        import importlib

        return importlib.import_module(name)
    return pytest.importorskip(name)


@pytest.fixture(autouse=True)
def prolog() -> None:
    prolog_env.require_prolog()
    from gdl2pl.bridge.swipl import attach_thread

    attach_thread()  # janus is started from the main thread, before any worker


def rules(path: Path = TTT) -> str:
    return one_line_rules(read_game(path))


def start(match_id: str, role: str, path: Path = TTT, clocks: tuple[int, int] = (2, 1)) -> str:
    return f"(start {match_id} {role} ({rules(path)}) {clocks[0]} {clocks[1]})"


@contextmanager
def player(kind: str = "legal", **options: Any) -> Iterator[Any]:
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.strategy import make_strategy

    p = GamePlayer(lambda: make_strategy(kind, 1), name=f"hostile-{kind}", **options)
    try:
        yield p
    finally:
        p.close()


@contextmanager
def serving(kind: str = "legal", **options: Any) -> Iterator[Any]:
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.server import PlayerServer
    from gdl2pl.ggp.strategy import make_strategy

    p = GamePlayer(lambda: make_strategy(kind, 2), name="hostile", **options)
    server = PlayerServer(p, "127.0.0.1", 0, read_timeout=1.0)
    server.start_in_thread()
    try:
        yield server
    finally:
        server.close()


def post(url_or_port: str | int, body: str, timeout: float = 10) -> tuple[int, str]:
    port = url_or_port if isinstance(url_or_port, int) else int(url_or_port.rsplit(":", 1)[1][:-1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/", body=body.encode("utf-8"), headers={"Content-Type": "text/acl"})
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", errors="replace")
    finally:
        conn.close()


def reset_after(port: int, data: bytes) -> None:
    """Send ``data`` and close with a TCP reset (SO_LINGER 0) without reading a reply."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.sendall(data)
    s.close()


def gdl2pl_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("gdl2pl")]


def one_clean_line(text: str) -> bool:
    """No line break, no control character: a log line nobody can forge."""
    return all(c.isprintable() for c in text)


# -- the first reproduction -----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def gdl2pl_serve(*options: str) -> Iterator[int]:
    """``gdl2pl serve --port P ...`` as a child process; yields P once it answers."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "gdl2pl.cli", "serve", "--port", str(port), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(300):  # up to 30 s to start
            if proc.poll() is not None:
                pytest.fail(f"gdl2pl serve exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize("where", ["match id", "fluent symbol"])
def test_shell_payload_through_the_network_runs_nothing(tmp_path: Path, where: str) -> None:
    """The issue's reproduction: Prolog code in a match id (or a symbol of the rules)
    must stay data. No file appears; the player answers ready, or a clear 400."""
    target = tmp_path / "pwned"
    payload = f"x*/:-X=..[shell,'touch\\x20{target}'],X.%"
    game = rules()
    if where == "match id":
        match_id = payload
    else:
        match_id = "m"
        game += f" (init (junk {payload}))"
    with gdl2pl_serve("--player", "random") as port:
        status, body = post(port, f"(start {match_id} xplayer ({game}) 10 5)")
        assert (status, body) == (200, "ready") or (status == 400 and body.startswith("error:"))
        if status == 200:
            status, body = post(port, f"(play {match_id} nil)")
            assert status == 200 and body.startswith("(mark ")
            assert post(port, f"(abort {match_id})") == (200, "aborted")
        assert parse_info_reply(post(port, "(info)")[1]).status == "available"
    assert not target.exists(), f"the payload ran: {target} was created"


# -- stopped, aborted and abandoned matches ------------------------------------------------


@pytest.mark.parametrize("end", ["stop", "abort"])
def test_a_stopped_slow_match_frees_the_player_at_once(
    end: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gdl2pl")
    with player("legal", margin=0.3) as p:
        assert p.handle(start("slow", "a", SLOW_LEGAL)).body == "ready"
        # the legal moves take too long, for the worker and the rescue thread alike: the
        # reply is the rules' guess (legal here), never nil
        assert p.handle("(play slow nil)").body == "go"
        old = p._match.worker
        reply = p.handle(f"({end} slow nil)" if end == "stop" else "(abort slow)")
        assert reply.body == ("done" if end == "stop" else "aborted")
        # the next match is loaded and played for real, not queued behind the old query
        assert p.handle(start("next", "xplayer")).body == "ready"
        assert p.handle("(play next nil)").body == "(mark 1 1)"
        old.thread.join(timeout=10)  # liveness bound: the interrupt ends it in milliseconds
        assert not old.alive
        assert p.handle("(stop next nil)").body == "done"
    lines = [r.getMessage() for r in gdl2pl_records(caplog)]
    # the stop ended the query: interrupted, or (on auto, if the machine's close came
    # first) the machine closed under it; never a query left to run to its end
    ended = ("interrupted", "closed during the query")
    assert any("slow: play 1: stopped" in m and any(e in m for e in ended) for m in lines), lines


def test_a_match_stopped_while_loading_does_not_hold_up_the_next() -> None:
    with player("legal") as p:
        # start clock 1 s: "ready" is sent while the game is still loading
        assert p.handle(start("load", "a", SLOW_LOAD, clocks=(1, 1))).body == "ready"
        assert p.handle("(abort load)").body == "aborted"
        assert p.handle(start("next", "oplayer")).body == "ready"
        assert p.handle("(play next nil)").body == "noop"
        assert p.handle("(play next ((mark 2 2) noop))").body == "(mark 1 1)"


def test_a_silent_match_expires() -> None:
    with player("legal", expiry_clocks=2) as p:
        t0 = time.monotonic()
        assert p.handle(start("quiet", "xplayer"), received=t0).body == "ready"
        # start clock 2 + 2 play clocks of 1 s: still on at 3.5 s, gone after 4 s
        assert p.handle("(play quiet nil)", received=t0 + 0.5).body == "(mark 1 1)"
        assert parse_info_reply(p.handle("(info)", received=t0 + 3.4).body).status == "busy"
        # after the play at 0.5 s: play clock 1 + 2 play clocks = 3.5 s
        assert parse_info_reply(p.handle("(info)", received=t0 + 4.1).body).status == "available"
        assert p.handle("(play quiet nil)", received=t0 + 4.2).status == 404
        assert p.handle(start("fresh", "oplayer"), received=t0 + 4.3).body == "ready"
        assert p.handle("(play fresh nil)", received=t0 + 4.4).body == "noop"


class _Stuck:
    """A strategy whose metagame is work nothing can interrupt: it waits for ``release``."""

    name = "stuck"

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def metagame(self, sm: Any, role: Any, budget: Any) -> None:
        self.release.wait(timeout=30)

    def select_move(self, state: Any, legal: list[Any], budget: Any, offer: Any) -> Any:
        return legal[0]

    def finish(self) -> None:
        pass


def test_too_many_stopping_matches_make_the_player_busy() -> None:
    from gdl2pl.ggp.player import MAX_RETIRING
    from gdl2pl.ggp.player import GamePlayer

    release = threading.Event()
    p = GamePlayer(lambda: _Stuck(release), margin=0.5)  # type: ignore[arg-type, return-value]
    try:
        for i in range(MAX_RETIRING):
            assert p.handle(start(f"stuck{i}", "xplayer", clocks=(1, 1))).body == "ready"
            assert p.handle(f"(abort stuck{i})").body == "aborted"
        # every old worker is still busy: no more threads are started for a stranger
        assert p.handle(start("more", "xplayer", clocks=(1, 1))).body == "busy"
        assert parse_info_reply(p.handle("(info)").body).status == "busy"
        release.set()
        for w in list(p._retiring):
            w.thread.join(timeout=10)
        assert p.handle(start("more", "xplayer")).body == "ready"
    finally:
        release.set()
        p.close()


# -- logs ---------------------------------------------------------------------------------


FORGERIES = [
    "(hello)\n2026-01-01 00:00:00 gdl2pl.player INFO: forged line",
    "(play m\r\nERROR forged)",
    "(abort \x1b[2J\x1b[31mred)",
    "(play id\x00\x07\x08 nil)",
    "(stop \u2028forged nil)",
    "(start m x ((role x)) 5 5)\n(info)",
]


def test_no_message_can_forge_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="gdl2pl")
    with serving() as server:
        port = server.server_address[1]
        for text in FORGERIES:
            status, _ = post(port, text)
            assert status in (400, 404)
        # http.server's own complaints: a request line with control characters
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /\x1b[31m\x00 HTTP/1.0 junk\r\n\r\n")
            s.shutdown(socket.SHUT_WR)
            assert b"400" in s.recv(65536)
        assert post(port, "(info)")[0] == 200
    records = gdl2pl_records(caplog)
    assert len(records) >= len(FORGERIES)
    for r in records:
        assert one_clean_line(r.getMessage()), repr(r.getMessage())
        assert r.exc_info is None
    assert any("bad request" in r.getMessage() for r in records)


def test_client_resets_are_one_line_each(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="gdl2pl")
    with serving() as server:
        port = server.server_address[1]
        reset_after(port, b"POST / HTTP/1.0\r\nContent-Le")  # in the headers
        reset_after(port, b"POST / HTTP/1.0\r\nContent-Length: 50\r\n\r\n(inf")  # in the body
        # a client that hangs up before its reply is written
        big = start("r", "xplayer").encode()
        reset_after(port, b"POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(big) + big)
        for _ in range(50):  # the server sees the resets asynchronously
            lost = [r for r in gdl2pl_records(caplog) if r.levelno == logging.WARNING]
            if len(lost) >= 2:
                break
            time.sleep(0.1)
        assert post(port, "(info)")[0] == 200
        post(port, "(abort r)")
    warnings = [r for r in gdl2pl_records(caplog) if r.levelno >= logging.WARNING]
    assert len(warnings) >= 2
    assert all(r.exc_info is None and one_clean_line(r.getMessage()) for r in warnings)
    assert "Traceback" not in capfd.readouterr().err


# -- a campaign of generated messages -----------------------------------------------------


def test_generated_hostile_messages_never_break_the_player() -> None:
    hypothesis = require_module("hypothesis")
    st = require_module("hypothesis.strategies")

    ttt = rules()
    atoms = st.sampled_from(
        ["info", "START", "play", "stop", "abort", "preview", "nil", "NIL", "m", "xplayer",
         "oplayer", "noop", "mark", "1", "3", "0", "-1", "999999999999", "?x", "<=", "role",
         "x*/:-halt.%", "'quoted'", "\\", "\x00", "\u00e9t\u00e9", "\U0001f600"]
    )  # fmt: skip
    sexprs = st.recursive(
        atoms, lambda inner: st.lists(inner, max_size=6).map(lambda xs: xs), max_leaves=40
    )

    def write(x: Any) -> str:
        return x if isinstance(x, str) else "(" + " ".join(map(write, x)) + ")"

    ids = st.sampled_from(["m", "M", "m2", "\x1bid", "x*/:-halt.%"])
    messages = st.one_of(
        st.text(max_size=300),
        sexprs.map(write),
        st.integers(0, 3 * MAX_DEPTH).map(lambda n: "(" * n + "play m nil" + ")" * n),
        st.builds(
            lambda i, role, a, b: f"(start {i} {role} ({ttt}) {a} {b})",
            ids,
            st.sampled_from(["xplayer", "oplayer", "nobody", "(xplayer)"]),
            st.integers(0, 2),
            st.integers(0, 2),
        ),
        st.builds(
            lambda kind, i, moves: f"({kind} {i} {write(moves)})",
            st.sampled_from(["play", "stop"]),
            ids,
            st.one_of(st.just("nil"), st.lists(sexprs, max_size=3)),
        ),
        ids.map(lambda i: f"(abort {i})"),
    )
    seen: list[str] = []

    with serving("random") as server:
        port = server.server_address[1]

        @hypothesis.settings(
            max_examples=200,
            deadline=None,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        @hypothesis.given(messages)
        def campaign(text: str) -> None:
            seen.append(text)
            status, body = post(port, text)
            assert status in (200, 400, 404), (status, body)
            assert body and "\n" not in body and "Traceback" not in body

        campaign()
        for i in ["m", "M", "m2", "\x1bid", "x*/:-halt.%"]:
            post(port, f"(abort {i})")
        # after all that, the player still plays
        assert parse_info_reply(post(port, "(info)")[1]).status == "available"
        assert post(port, start("after", "xplayer")) == (200, "ready")
        status, body = post(port, "(play after nil)")
        assert status == 200 and body.startswith("(mark ")
    assert len(seen) >= 100


# -- the manager ----------------------------------------------------------------------------


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the manager hangs up on a reply it will not read: expected here


@contextmanager
def fake_player(answer: Callable[[Any, int], str]) -> Iterator[str]:
    """A player answering ``answer(message, play_number)`` to every message; it records the
    messages it got in ``.seen`` of the yielded URL's handler class."""

    class Handler(BaseHTTPRequestHandler):
        plays = 0
        seen: ClassVar[list[str]] = []

        def log_message(self, fmt: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            text = self.rfile.read(int(self.headers["Content-Length"])).decode()
            msg = parse_message(text)
            type(self).seen.append(text)
            if isinstance(msg, Play):
                type(self).plays += 1
            body = answer(msg, type(self).plays).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = _QuietServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        fake_player.seen[url] = Handler.seen  # type: ignore[attr-defined]
        yield url
    finally:
        server.shutdown()
        server.server_close()


fake_player.seen = {}  # type: ignore[attr-defined]


def _hostile_replies(msg: Any, n: int) -> str:
    if not isinstance(msg, Play):
        return "ready" if msg.__class__.__name__ == "Start" else "done"
    if n == 1:
        return "(" * 400 + "mark 1 1" + ")" * 400  # beyond MAX_DEPTH: not even parsed
    if n == 2:
        return "(mark " + "9" * 10_000_000 + " 1)"  # 10 MB
    if n == 3:
        return "(mark (((((((((((((1))))))))))))) 1)"
    return "noop"


def test_too_deep_and_too_large_replies_are_illegal_moves() -> None:
    from gdl2pl.ggp.manager import MAX_REPLY
    from gdl2pl.ggp.manager import run_match

    with fake_player(_hostile_replies) as bad, serving("legal") as good:
        rec = run_match(read_game(TTT), [bad, good.url], start_clock=2, play_clock=1, seed=1)
    assert rec["isCompleted"], rec.get("abortReason")
    errors = [e[0] for e in rec["errors"][1:]]
    assert errors[0].startswith("IL " + "(" * 100)  # as ggp-base records it: IL <the reply>
    assert errors[1] == f"IL reply larger than {MAX_REPLY} bytes"
    assert errors[2].startswith("IL (mark (((")
    assert all(e[1] == "" for e in rec["errors"])
    assert len(rec["moves"]) >= 3  # each replaced by a legal move, and the match went on


class _Dripping(BaseHTTPRequestHandler):
    """A player that answers ``play`` one byte every 0.2 s, forever."""

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        text = self.rfile.read(int(self.headers["Content-Length"])).decode()
        play = isinstance(parse_message(text), Play)
        self.send_response(200)
        self.send_header("Content-Length", "1000000" if play else "5")
        self.end_headers()
        if not play:
            self.wfile.write(b"ready")
            return
        with contextlib.suppress(OSError):
            for _ in range(500):
                self.wfile.write(b"(")
                self.wfile.flush()
                time.sleep(0.2)


def test_a_player_dripping_its_reply_is_cut_at_the_clock() -> None:
    from gdl2pl.ggp.manager import run_match

    server = _QuietServer(("127.0.0.1", 0), _Dripping)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        with serving("legal") as good:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            rec = run_match(
                read_game(EXAMPLES / "matchingPennies.kif"),
                [url, good.url],
                start_clock=1,
                play_clock=1,
                grace=0.3,
                seed=3,
            )
    finally:
        server.shutdown()
        server.server_close()
    assert rec["isCompleted"]
    assert all(e[0] == "TO" for e in rec["errors"][1:]), rec["errors"]
    # no thread of the manager is left reading a reply (liveness bound, not a speed test)
    for t in threading.enumerate():
        if t.name.startswith("gdl2pl-send"):
            t.join(timeout=5)
            assert not t.is_alive()


PROLOG_ERROR_GAME = """
(role a) (role b)
(init s0)
(n 1) (n 2) (n 3) (n 4) (n 5) (n 6) (n 7) (n 8) (n 9) (n 10)
(n 11) (n 12) (n 13) (n 14) (n 15) (n 16) (n 17) (n 18) (n 19) (n 20)
(<= (legal ?r go) (role ?r))
(<= (next s1) (true s0))
(<= (next s2) (true s1))
(<= heavy (true s1) (n ?a) (n ?b) (n ?c) (n ?d) (n ?e) (distinct ?e ?e))
(<= terminal (true s2))
(<= terminal heavy)
(<= (goal ?r 50) (role ?r))
"""


def test_a_game_raising_a_prolog_error_aborts_every_player() -> None:
    """After one step the manager's own question to the game exceeds its inference limit:
    the match ends with a record saying so, and both players get ``abort``."""
    from gdl2pl import parse_kif
    from gdl2pl.ggp.manager import run_match

    def ready(msg: Any, n: int) -> str:
        return "go" if isinstance(msg, Play) else "ready"

    with fake_player(ready) as a, fake_player(ready) as b:
        rec = run_match(
            parse_kif(PROLOG_ERROR_GAME),
            [a, b],
            start_clock=1,
            play_clock=1,
            seed=2,
            inference_limit=20_000,
        )
        seen = [fake_player.seen[a], fake_player.seen[b]]  # type: ignore[attr-defined]
    assert rec["isAborted"] and not rec["isCompleted"]
    assert "limit" in rec["abortReason"] or "Prolog" in rec["abortReason"], rec["abortReason"]
    assert rec["moves"] == [["go", "go"]]
    for messages in seen:
        assert messages[-1] == f"(abort {rec['matchId']})"
    json.dumps(rec)


def test_a_manager_bug_mid_match_still_aborts_the_players(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from gdl2pl.ggp import manager

    real = manager._Match._play

    def broken(self: Any, previous: Any) -> Any:
        if self.record["moves"]:
            raise RuntimeError("a bug")
        return real(self, previous)

    monkeypatch.setattr(manager._Match, "_play", broken)
    with serving("legal") as x, serving("legal") as o:
        rec = manager.run_match(read_game(TTT), [x.url, o.url], start_clock=2, play_clock=1)
        assert rec["isAborted"] and rec["abortReason"] == "internal error: RuntimeError: a bug"
        for server in (x, o):  # both were told: they are free again
            assert parse_info_reply(post(server.url, "(info)")[1]).status == "available"
    assert any(r.exc_info for r in caplog.records if r.name == "gdl2pl.manager")


def _cli_match(game: Path, urls: list[str], out: Path, *extra: str) -> int:
    import argparse

    from gdl2pl.cli.network import add_subcommands

    parser = argparse.ArgumentParser(prog="gdl2pl")
    handlers = add_subcommands(parser.add_subparsers(dest="command"))
    argv = ["match", str(game), "--startclock", "2", "--playclock", "1", "--out", str(out)]
    for u in urls:
        argv += ["--player", u]
    args = parser.parse_args([*argv, *extra])
    return handlers[args.command](args)


def test_quoted_infix_names_scrambled_play_and_unscrambled_abort_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "match.json"
    with serving("random") as x, serving("random") as o:
        assert _cli_match(QUOTED, [x.url, o.url], out, "--scramble", "--seed", "3") == 0
        rec = json.loads(out.read_text())
        assert rec["isCompleted"] and rec["scrambled"]
        assert all(e == ["", ""] for e in rec["errors"]), rec["errors"]
        assert "x player" in rec["roles"]
        # without scrambling the rules cannot be sent as KIF: a clean abort, not a traceback
        out.unlink()
        assert _cli_match(QUOTED, [x.url, o.url], out) == 1
        rec = json.loads(out.read_text())
        assert rec["isAborted"] and "--scramble" in rec["abortReason"]
        assert rec["errors"] == []  # nobody was started
        for server in (x, o):
            assert parse_info_reply(post(server.url, "(info)")[1]).status == "available"
    err = capsys.readouterr().err
    assert "Traceback" not in err and "aborted" in err


def test_a_game_that_cannot_be_loaded_gives_a_record() -> None:
    from gdl2pl import parse_kif
    from gdl2pl.ggp.manager import run_match

    # an unsafe fact (the checker would refuse it; run_match does not check): Prolog cannot
    # build the initial state
    game = parse_kif("(role a) (init (f ?x)) (<= (legal a go) (role a)) (goal a 0)")
    rec = run_match(game, ["127.0.0.1:1"], start_clock=1, play_clock=1)
    assert rec["isAborted"] and not rec["isCompleted"]
    assert rec["abortReason"].startswith("the game cannot be loaded: ")
    assert rec["errors"] == [] and rec["moves"] == []
    json.dumps(rec)
