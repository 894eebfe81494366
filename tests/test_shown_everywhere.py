"""Outside text reaches no log line, warning, reply or terminal line raw (issue 48 item
8): a game's symbols and rules, its file's name, a match id, what a player or a game
manager sends, written with ESC (a terminal's escape sequence), BEL, CR and newline,
come out escaped (``gdl2pl.shown``) at every place that quotes them.

Where the text is read as KIF (symbols, match ids, moves), CR and newline separate
tokens and so never stand inside one: there the test's text holds them between tokens,
and ESC and BEL inside; a file's name, a reply and a message hold all four.
"""

from __future__ import annotations

import http.client
import logging
import random
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl.shown import shown
from gdl2pl.shown import shown_lines

#: What a stranger writes: a colour escape, a bell, a line's end.
ESC, BEL = "\x1b[31m", "\x07"
RAW = ESC + BEL + "\r\n"
#: The same, escaped.
ESCAPED = "\\x1b[31m\\x07"


def clean(text: str, lines: int = 1) -> bool:
    """Whether ``text`` holds no raw ESC, BEL or CR, and at most ``lines`` lines."""
    return not set(text) & {"\x1b", "\x07", "\r"} and len(text.split("\n")) <= lines


def game_file(folder: Path, text: str) -> Path:
    """``text`` in a file whose name holds ESC, BEL, CR and newline."""
    path = folder / f"g{RAW}x.kif"
    path.write_text(text, encoding="utf-8")
    return path


TICTACTOE = (EXAMPLES / "ticTacToe.kif").read_text(encoding="utf-8")

#: A game the reasoner plays and the grounder refuses: its goal rule is unsafe (a
#: variable of the head, named with ESC and BEL, that no body literal binds).
UNSAFE = f"""(role p) (init (c 0))
(<= (legal p go) (true (c 0)))
(<= (next (c 1)) (does p go))
(<= terminal (true (c 1)))
(<= (goal p ?v{ESC}{BEL}) (true (c 1)))
"""


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG, logger="gdl2pl")
    yield caplog


def messages(records: pytest.LogCaptureFixture, *parts: str) -> list[str]:
    """The messages logged so far that hold every one of ``parts``."""
    out = [r.getMessage() for r in records.records]
    return [m for m in out if all(p in m for p in parts)]


# -- the escaping itself -------------------------------------------------------------------


def test_shown_escapes_every_control_character_and_keeps_one_line() -> None:
    assert shown(f"a{RAW}b") == "a" + ESCAPED + "\\x0d\\x0ab"
    assert shown("x" * 10, None) == "x" * 10 and shown("x" * 10, 3) == "xxx..."
    assert shown_lines(f"one{ESC}\ntwo{BEL}\r") == "one\\x1b[31m\ntwo\\x07\\x0d"
    from gdl2pl.ggp.protocol import shown as protocol_shown

    assert protocol_shown is shown  # one escaping, where the player imports it from


def test_a_syntax_errors_excerpt_is_escaped_with_its_caret_under_the_place() -> None:
    from gdl2pl.errors import GdlSyntaxError
    from gdl2pl.kif import parse_kif

    with pytest.raises(GdlSyntaxError) as info:
        parse_kif(f"(role a{ESC}{BEL}) (init x))\n", file=f"f{RAW}.kif")
    line, caret = info.value.excerpt.split("\n")
    assert clean(line) and ESCAPED in line
    assert line[caret.index("^")] == ")"  # the unbalanced parenthesis, after the escapes


# -- the compiled engine's choice --------------------------------------------------------------


def test_the_refused_rule_is_logged_and_told_escaped(tmp_path: Path, records) -> None:  # type: ignore[no-untyped-def]
    require_prolog()
    from gdl2pl.compiled import load_machine

    with load_machine(game_file(tmp_path, UNSAFE), "auto") as sm:
        reason = sm.engine_choice.reason
    assert "the network cannot be built" in reason and clean(reason) and ESCAPED in reason
    [line] = messages(records, "the reasoner plays it")
    assert clean(line) and f"?v{ESCAPED}" in line and f"g{ESCAPED}\\x0d\\x0ax.kif" in line
    compiled = tmp_path / "compiled"
    compiled.mkdir()
    with load_machine(game_file(compiled, TICTACTOE), "compiled"):
        pass
    [line] = messages(records, "the compiled engine plays it")
    assert clean(line) and f"g{ESCAPED}\\x0d\\x0ax.kif" in line


# -- the player and its server -------------------------------------------------------------------


@contextmanager
def player(**options: Any) -> Iterator[Any]:
    require_prolog()
    from gdl2pl.ggp.player import GamePlayer
    from gdl2pl.ggp.strategy import make_strategy

    p = GamePlayer(lambda: make_strategy("legal", 1), name="test", **options)
    try:
        yield p
    finally:
        p.close()


def test_the_players_replies_and_logs_escape_the_managers_text(records) -> None:  # type: ignore[no-untyped-def]
    with player() as p:
        reply = p.handle(f"(play m{ESC}{BEL} nil)")
        assert reply.status == 404 and clean(reply.body) and f"m{ESCAPED}" in reply.body
        reply = p.handle(f"(dance{ESC}{BEL}\r\n m)")
        assert reply.status == 400 and clean(reply.body) and "unknown message" in reply.body
    lines = messages(records, "unknown match") + messages(records, "malformed message")
    assert len(lines) == 2 and all(clean(m) for m in lines)
    assert all(ESCAPED in m for m in lines)


def test_a_refused_rule_of_the_game_master_is_logged_escaped(records) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.ggp.protocol import one_line_rules
    from gdl2pl.kif import parse_kif

    rules = one_line_rules(parse_kif(UNSAFE))
    with player(engine="compiled", check=False) as p:
        assert p.handle(f"(start m{ESC} p ({rules}) 30 5)").body == "ready"
        match = p._match
        assert match is not None and match.sm is not None
        reason = match.sm.engine_choice.reason
        assert p.handle(f"(abort m{ESC})").body == "aborted"
    assert clean(reason) and f"?v{ESCAPED}" in reason
    [line] = messages(records, "the compiled engine failed")
    assert clean(line) and f"?v{ESCAPED}" in line


def test_the_servers_answer_to_a_failure_is_escaped() -> None:
    from gdl2pl.ggp.server import PlayerServer

    class Failing:
        def handle(self, text: str, received: float) -> Any:
            raise ValueError(f"bad{RAW}text")

    server = PlayerServer(Failing(), port=0)  # type: ignore[arg-type]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
        conn.request("POST", "/", body=b"(info)")
        answer = conn.getresponse()
        body = answer.read().decode()
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert answer.status == 500 and clean(body) and f"bad{ESCAPED}\\x0d\\x0atext" in body


# -- the game manager ------------------------------------------------------------------------

#: One role, whose name and move hold ESC and BEL.
ONE_ROLE = f"""(role r{ESC}{BEL}) (init (c 0))
(<= (legal r{ESC}{BEL} (go{ESC} 1)) (true (c 0)))
(<= (next (c 1)) (does r{ESC}{BEL} (go{ESC} 1)))
(<= terminal (true (c 1)))
(goal r{ESC}{BEL} 100)
"""


class _Stranger(BaseHTTPRequestHandler):
    """A player that names itself, says it is busy, and answers every play with a move
    that holds ESC, BEL, CR and newline."""

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        text = self.rfile.read(int(self.headers["Content-Length"])).decode()
        if text.startswith("(info"):
            body = f"((name ev{ESC}il{BEL}) (status b{ESC}usy{BEL}))"
        elif text.startswith("(start"):
            body = f"ready{RAW}"
        else:
            body = f"(go{RAW}2)"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_the_managers_logs_and_summary_escape_players_and_the_game(records) -> None:  # type: ignore[no-untyped-def]
    require_prolog()
    from gdl2pl.ggp.manager import run_match
    from gdl2pl.ggp.manager import summary
    from gdl2pl.kif import parse_kif

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stranger)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        rec = run_match(parse_kif(ONE_ROLE), [url], start_clock=2, play_clock=1, seed=1,
                        match_id=f"m{RAW}1", grace=0.5, engine="prolog")
    finally:
        server.shutdown()
        server.server_close()
    assert rec["isCompleted"], rec
    said = {
        "says it is": messages(records, "says it is"),
        "to start": messages(records, "to start"),
        "instead": messages(records, "playing"),
        "completed": messages(records, "completed"),
    }
    assert all(len(v) == 1 for v in said.values()), said
    for line in (m for v in said.values() for m in v):
        assert clean(line) and ESCAPED[:8] in line, line
    assert f"m{ESCAPED}\\x0d\\x0a1 completed" in said["completed"][0]
    text = summary(rec)
    assert clean(text, lines=len(text.split("\n"))) and "\x1b" not in text
    assert f"ev{ESCAPED[:8]}il\\x07" in text and f"r{ESCAPED}" in text


# -- the GDL-II player's belief --------------------------------------------------------------


def test_the_beliefs_logs_escape_the_game_and_its_roles(tmp_path: Path, records,  # type: ignore[no-untyped-def]
                                                        monkeypatch) -> None:
    require_prolog()
    from gdl2pl.bridge import ReasonerError
    from gdl2pl.bridge import StateMachine
    from gdl2pl.ggp.belief_tracker import BeliefTracker
    from gdl2pl.information import Turn
    from gdl2pl.load import read_game

    marks = (Path(__file__).parent / "games" / "gdl2" / "blind_marks_5x5.kif").read_text()
    path = game_file(tmp_path, marks.replace("black", f"bl{ESC}ack{BEL}"))
    with StateMachine(read_game(path), name=path.name) as sm:
        black = sm.roles[1]
        assert str(black) == f"bl{ESC}ack{BEL}"
        start = sm.initial_state
        marked = sm.next_state(start, ["(try 1 1)", "noop"])
        for exact in (True, False):  # said at once, or after a search
            tracker = BeliefTracker(sm, black, random.Random(0))
            tracker.states, tracker.exact = {start: 0.5, marked: 0.5}, exact
            # no state agrees: from `marked` black is told (taken 1 1), from `start` yourturn
            tracker.update(Turn(sm.term("(try 1 1)"), ("(ok 1 1)",)), time.monotonic() + 2)
            assert tracker.lost
        lost = messages(records, "the history cannot have happened") + messages(
            records, "belief lost")
        assert len(lost) == 2, lost
        assert all(clean(m) and "bl\\x1b[31mack\\x07" in m for m in lost), lost

        def failing(*args: object, **kwargs: object) -> object:
            raise ReasonerError(f"out of{RAW}stack")

        tracker = BeliefTracker(sm, sm.roles[0], random.Random(0))
        monkeypatch.setattr(sm, "consistent_children", failing)
        tracker.update(Turn(sm.term("(try 1 1)"), ("(ok 1 1)",)), time.monotonic() + 5)
    [skipped] = messages(records, "a state of the belief was skipped")
    assert clean(skipped) and f"out of{ESCAPED}\\x0d\\x0astack" in skipped
    assert f"g{ESCAPED}\\x0d\\x0ax.kif" in skipped


# -- the studio ------------------------------------------------------------------------------


def test_the_studios_log_of_a_failure_is_escaped(records, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from prolog_env import require_module

    with warnings.catch_warnings():  # Starlette would rather have httpx2 than httpx
        warnings.simplefilter("ignore")
        require_module("starlette.testclient")
    from starlette.testclient import TestClient

    from gdl2pl.studio import fields
    from gdl2pl.studio.app import create_app
    from gdl2pl.studio.limits import Limits
    from gdl2pl.studio.sessions import StudioError

    async def failing(*args: object) -> object:
        raise StudioError(f"the worker said{RAW}x", 500)

    monkeypatch.setattr(fields, "json_body", failing)
    with TestClient(create_app(Limits())) as client:
        r = client.post("/api/check", json={"text": "(role a)"})
    assert r.status_code == 500
    [line] = messages(records, "the worker said")
    assert clean(line) and f"said{ESCAPED}\\x0d\\x0ax" in line


# -- the adapters' warnings -------------------------------------------------------------------

#: The base omits a fluent the rules reach, whose name holds ESC and BEL; the terminal
#: state gives the role no goal; a move leads back (so a length bound is asked for).
UNDECLARED = f"""(role p) (init (c 0))
(base (c 0)) (base (c 1)) (input p go) (input p stay)
(<= (legal p go) (true (c 0)))
(<= (legal p stay) (true (c 0)))
(<= (next (c 1)) (does p go))
(<= (next (c 0)) (does p stay))
(<= (next (d{ESC}{BEL})) (does p go))
(<= terminal (true (c 1)))
(<= (goal p 100) (true (c 0)))
"""


def test_the_adapters_warnings_escape_the_game(tmp_path: Path) -> None:
    require_prolog()
    from gdl2pl.adapters import GdlGame
    from gdl2pl.adapters.errors import MissingGoalWarning
    from gdl2pl.adapters.errors import UndeclaredFluentWarning

    path = game_file(tmp_path, UNDECLARED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        game = GdlGame(path, engine="prolog")
    try:
        said = {w.category: str(w.message) for w in caught}
        assert UndeclaredFluentWarning in said and MissingGoalWarning in said, said
        for text in said.values():
            assert clean(text) and f"g{ESCAPED}\\x0d\\x0ax.kif" in text, text
        assert f"(d{ESCAPED})" in said[UndeclaredFluentWarning]
        from gdl2pl.length_bound import LengthBound

        # a defect of a proof, on purpose: a bound the play of one step refutes
        game.__dict__["length_bound"] = LengthBound(0, f"a wrong proof{RAW}")
        with pytest.warns(RuntimeWarning) as refuted:
            game.gdl_metadata()
        [text] = [str(w.message) for w in refuted]
        assert clean(text) and f"a wrong proof{ESCAPED}\\x0d\\x0a" in text
    finally:
        game.close()


# -- the command line ------------------------------------------------------------------------


def test_the_command_lines_messages_escape_the_game_and_its_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.cli import main

    bad_syntax = game_file(tmp_path, f"(role a{ESC}{BEL}) (init x))\n")
    status = main(["check", str(bad_syntax)])
    out = capsys.readouterr()
    assert status == 1 and clean(out.out.strip()) and f"g{ESCAPED}\\x0d\\x0ax.kif:1:" in out.out
    unsafe = tmp_path / "unsafe" / f"h{RAW}.kif"
    unsafe.parent.mkdir()
    unsafe.write_text(UNSAFE)
    status = main(["check", str(unsafe)])
    out = capsys.readouterr()
    lines = out.out.strip().split("\n")
    assert status == 1 and all(clean(line) for line in lines), lines
    assert any(f"?v{ESCAPED}" in line and f"h{ESCAPED}" in line for line in lines)
    # a syntax error (its line, the excerpt, the caret), a game check refused (what it
    # found, the finding), a file that cannot be read
    for argv, lines_said in ((["translate", str(bad_syntax)], 3),
                             (["translate", str(unsafe)], 2),
                             (["translate", str(tmp_path / f"none{RAW}.kif")], 1)):
        status = main(argv)
        err = capsys.readouterr().err.strip()
        assert status in (1, 2) and clean(err, lines=lines_said), (argv, err)
        assert len(err.split("\n")) == lines_said and ESCAPED in err, (argv, err)
    main(["simulate", str(unsafe), "--accept-errors", "-n", "1", "--engine", "auto"])
    lines = capsys.readouterr().err.strip().split("\n")
    assert all(clean(line) for line in lines), lines
    assert any("running anyway" in line and f"h{ESCAPED}" in line for line in lines), lines
    # (the reason was escaped where it was written, and the line escapes what it prints)
    assert any("the network cannot be built" in line and f"?v{shown(ESCAPED)}" in line
               for line in lines), lines


def test_the_match_command_prints_what_players_said_escaped(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from gdl2pl.ggp.manager import summary

    record = {
        "matchId": f"m{RAW}", "gameName": f"g{RAW}", "startClock": 1, "playClock": 1,
        "playerURLs": [f"http://p{RAW}/"], "playerNamesFromHost": [f"n{RAW}"],
        "roles": [f"r{ESC}"], "errors": [[f"IL {RAW}"]], "moves": [[f"(go{ESC})"]],
        "isCompleted": False, "abortReason": f"the player said{RAW}",
    }
    text = summary(record)
    assert all(clean(line) for line in text.split("\n")) and text.count("\n") == 4
    assert f"the player said{ESCAPED}\\x0d\\x0a" in text


# -- verify's report ----------------------------------------------------------------------------


def test_verifys_report_escapes_what_the_engine_and_the_game_said() -> None:
    from gdl2pl.verify.report import details
    from gdl2pl.verify.report import summary_table

    r = {"game": f"g{RAW}.kif", "verdict": "engine_error", "error": f"the engine said{RAW}",
         "reproduction": f"r{RAW}.json"}
    for text in (details(r), summary_table([r])):
        assert not set(text) & {"\x1b", "\x07", "\r"}, text
    assert details(r).count("\n") == 2 and summary_table([r]).count("\n") == 2


@pytest.mark.parametrize(
    ("error", "lines"),
    [
        ("GdlError", 2), ("ValueError", 2), ("RuntimeError", 2),  # listings keep their lines
        ("OSError", 1), ("Exception", 1), ("ImportError", 1),
    ],
)
def test_every_error_the_command_line_reports_is_escaped(error: str, lines: int,
                                                         capsys) -> None:  # type: ignore[no-untyped-def]
    """What ``run_guarded`` prints of any exception: ESC, BEL and CR escaped; a newline
    is a line break only in a message that may list findings, one per line."""
    import argparse
    import builtins

    from gdl2pl.cli.errors import run_guarded
    from gdl2pl.errors import GdlError

    def fail(args: argparse.Namespace) -> int:
        kind = GdlError if error == "GdlError" else getattr(builtins, error)
        if error == "OSError":
            raise OSError(2, f"gone{RAW}x", f"f{RAW}.kif")
        if error == "ImportError":
            raise ImportError(f"no{RAW}x", name=f"lib{RAW}x")
        raise kind(f"said{RAW}there")

    run_guarded(fail, argparse.Namespace(game=f"g{RAW}.kif", command="x"))
    err = capsys.readouterr().err.strip()
    assert clean(err, lines=lines) and len(err.split("\n")) == lines, err
    assert ESCAPED in err, err
