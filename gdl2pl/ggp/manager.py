"""A game manager: runs one match between GGP players over HTTP and records it.

``run_match`` follows ggp-base's ``GameServer``: it asks every player for ``(info)`` (for
its name), sends ``start`` to all players in role order and waits for them up to the start
clock, then sends ``play`` with the previous joint move (``nil`` first) and waits up to the
play clock, and so on until a terminal state, where it sends ``stop`` with the last joint
move and reads the goals from its own state machine. Players are contacted in parallel;
every wait is the clock plus ``grace`` seconds (ggp-base allows one second).

A move that is late, unreadable or illegal is replaced by a random legal move and the
error recorded with ggp-base's codes: ``TO`` (timeout), ``CE`` (connection error), ``IL
<reply>`` (illegal or unreadable move). A reply body longer than ``MAX_REPLY`` bytes (1 MB)
is not read further, and a move nested deeper than ``gdl2pl.ggp.protocol.MAX_DEPTH`` (200) or
longer than ``gdl2pl.ggp.protocol.MAX_MOVE`` characters is not parsed: both are illegal moves
(``IL reply larger than ...``, ``IL nested deeper than ...``). With ``scramble`` the rules,
roles and moves sent are renamed (``gdl2pl.ggp.scramble``) and the replies renamed back; without
it, a game whose symbols KIF cannot write bare (infix's quoted ``'x player'``) cannot be
sent and the match is aborted before it starts, saying so.

Any failure ends the match cleanly: the game's own (no legal move, no goal value, a Prolog
error or resource limit while answering), the manager's (a bug, Ctrl-C), or a game that
cannot be loaded. The record is returned with ``isAborted`` and ``abortReason``, and every
player that was sent ``start`` gets ``abort``. ``run_match`` raises only ``ValueError`` for
a wrong number of players.

A GDL-II game (``StateMachine.gdl_ii``: chance or hidden information) is played with the
GDL-II protocol: the manager plays the role ``random`` itself, uniformly among its legal
moves, gets one player per other role, and sends each player ``(play ID TURN LASTMOVE
PERCEPTS)`` and ``(stop ...)`` with its own last move and only its own percepts. The
record then also holds ``percepts`` (per step, each role's percepts after it) and
``gdlII: true``; the random role's entry of ``playerURLs`` is null.

The record is a dict in the JSON shape of ggp-base's ``Match.toJSON`` (``matchId``,
``startClock``, ``playClock``, ``moves``, ``states``, ``errors``, ``goalValues``, ...);
as there, ``errors[0]`` is about ``start`` and ``errors[i + 1]`` about the play that gave
``moves[i]``. Moves and states are KIF strings in the game's own (unscrambled) names.
``gameName``, ``roles`` and ``playerURLs`` are additions of gdl2pl.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import http.client
import logging
import random
import secrets
import socket
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from gdl2pl.bridge.errors import GameError
from gdl2pl.bridge.errors import MoveDefinitionError
from gdl2pl.bridge.machine import StateMachine
from gdl2pl.compiled import on_engine
from gdl2pl.compiled.factory import Engine
from gdl2pl.contract import GameMachine
from gdl2pl.errors import GdlError
from gdl2pl.ggp.protocol import Abort
from gdl2pl.ggp.protocol import Info
from gdl2pl.ggp.protocol import Message
from gdl2pl.ggp.protocol import Play
from gdl2pl.ggp.protocol import PlayII
from gdl2pl.ggp.protocol import ProtocolError
from gdl2pl.ggp.protocol import Start
from gdl2pl.ggp.protocol import Stop
from gdl2pl.ggp.protocol import StopII
from gdl2pl.ggp.protocol import format_message
from gdl2pl.ggp.protocol import one_line_rules
from gdl2pl.ggp.protocol import parse_info_reply
from gdl2pl.ggp.protocol import parse_move
from gdl2pl.ggp.protocol import shown
from gdl2pl.ggp.scramble import Scrambler
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

log = logging.getLogger("gdl2pl.manager")

#: Longest reply body read from a player, in bytes.
MAX_REPLY = 1_000_000

Record = dict[str, Any]
_Outcome = tuple[str | None, str]  # (reply text or None, error "" / "TO" / "CE" / "IL ...")


# -- HTTP ---------------------------------------------------------------------------------


def normalize_url(url: str) -> str:
    """``host:port`` as ggp-base writes players, or a full ``http://`` URL."""
    return url if "://" in url else f"http://{url}"


def send(
    url: str,
    text: str,
    timeout: float,
    receiver: str = "",
    opened: list[socket.socket] | None = None,
) -> str:
    """POST one message as ggp-base does and return the reply text (stripped). Raises
    ``TimeoutError`` (also when the whole exchange takes longer than ``timeout``) or
    ``OSError``/``http.client.HTTPException`` on failure, and ``ProtocolError`` for a body
    longer than ``MAX_REPLY`` bytes. The socket is appended to ``opened``, if given, so
    that the caller can cut a player that keeps it busy (``_broadcast``)."""
    parts = urlsplit(normalize_url(url))
    if parts.scheme != "http" or not parts.hostname:
        raise OSError(f"not an http URL: {url}")
    deadline = time.monotonic() + timeout
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.connect()
        if opened is not None and conn.sock is not None:
            opened.append(conn.sock)
        data = text.encode("utf-8")
        conn.request(
            "POST",
            parts.path or "/",
            body=data,
            headers={
                "Content-Type": "text/acl",
                "Accept": "text/delim",
                "Sender": "GAMESERVER",
                "Receiver": receiver,
                "Connection": "close",
            },
        )
        response = conn.getresponse()
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read1(65536):  # a player dripping bytes is cut at the clock
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY:
                raise ProtocolError(f"reply larger than {MAX_REPLY} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError("the reply took longer than the clock")
        return b"".join(chunks).decode("utf-8", errors="replace").strip()
    finally:
        conn.close()


def _broadcast(urls: Sequence[str], texts: Sequence[str], wait: float) -> list[_Outcome]:
    """Send ``texts[i]`` to ``urls[i]`` in parallel; wait at most ``wait`` seconds overall,
    then cut the connections still open (no thread is left reading a player's reply)."""
    pool = cf.ThreadPoolExecutor(max_workers=max(1, len(urls)), thread_name_prefix="gdl2pl-send")
    opened: list[socket.socket] = []
    futures = [pool.submit(send, u, t, wait, "", opened) for u, t in zip(urls, texts, strict=True)]
    cf.wait(futures, timeout=wait)
    late = [not f.done() for f in futures]
    if any(late):
        for sock in list(opened):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
    pool.shutdown(wait=False, cancel_futures=True)
    outcomes: list[_Outcome] = []
    for f, is_late in zip(futures, late, strict=True):
        if is_late:
            outcomes.append((None, "TO"))
            continue
        e = f.exception()
        if e is None:
            outcomes.append((f.result(), ""))
        elif isinstance(e, TimeoutError):
            outcomes.append((None, "TO"))
        elif isinstance(e, ProtocolError):
            outcomes.append((None, f"IL {e}"))
        else:
            log.info("connection error: %s", shown(str(e)))
            outcomes.append((None, "CE"))
    return outcomes


# -- the match ----------------------------------------------------------------------------


def run_match(
    game: Description,
    players: Sequence[str],
    *,
    game_name: str = "game",
    start_clock: int = 10,
    play_clock: int = 5,
    scramble: bool = False,
    seed: int | None = None,
    match_id: str | None = None,
    grace: float = 1.0,
    max_steps: int = 10_000,
    inference_limit: int = 100_000_000,
    engine: Engine = "auto",
) -> Record:
    """Play one match of ``game`` between the players at ``players`` (URLs, in role
    order) and return its record (see the module doc). ``ValueError`` if the number of
    players is not the number of roles. ``inference_limit`` bounds each of the manager's
    own questions to the game (``StateMachine``); ``engine`` answers them ("compiled":
    the game's network, "auto", the default: the reasoner until the network is grounded in
    the background)."""
    from gdl2pl.bridge.swipl import attach_thread

    attach_thread()  # janus needs an engine in every thread that calls Prolog
    rng = random.Random(seed)
    try:
        sm = on_engine(StateMachine(game, name=game_name, inference_limit=inference_limit), engine)
    except GdlError as e:
        log.error("the game cannot be loaded: %s", shown(str(e)))
        record = _new_record(match_id or "gdl2pl.unstarted", game_name, [], players, scramble)
        record.update(isAborted=True, abortReason=f"the game cannot be loaded: {e}")
        record.update(startClock=start_clock, playClock=play_clock)
        return record
    with sm:
        seats = sm.players if sm.gdl_ii else sm.roles
        if len(players) != len(seats):
            chance = " besides random, which the manager plays" if sm.gdl_ii else ""
            raise ValueError(
                f"{game_name} has {len(seats)} roles{chance} ({', '.join(map(str, seats))}) "
                f"but {len(players)} player(s) were given"
            )
        return _Match(
            sm,
            game,
            list(map(normalize_url, players)),
            rng,
            game_name,
            start_clock,
            play_clock,
            scramble,
            match_id,
            grace,
            max_steps,
        ).run()


class _Match:
    def __init__(
        self,
        sm: GameMachine,
        game: Description,
        urls: list[str],
        rng: random.Random,
        game_name: str,
        start_clock: int,
        play_clock: int,
        scramble: bool,
        match_id: str | None,
        grace: float,
        max_steps: int,
    ) -> None:
        self.sm = sm
        self.game = game
        self.urls = urls
        self.rng = rng
        self.grace = grace
        self.max_steps = max_steps
        self.scrambler = Scrambler(random.Random(rng.random())) if scramble else None
        self.rules = ""
        self.started = False  # start was sent: an aborted match must be aborted at the players
        self.id = match_id or f"gdl2pl.{int(time.time())}.{rng.getrandbits(32):08x}"
        self.state = sm.initial_state
        # GDL-II: the manager plays random; the players sit at the other roles
        self.gdl_ii = sm.gdl_ii
        self.seats = [i for i, r in enumerate(sm.roles) if not (self.gdl_ii and sm.is_random(r))]
        self.last: list[Term | None] = [None] * len(sm.roles)  # each role's last move
        self.seen: list[tuple[Term, ...] | None] = [None] * len(sm.roles)  # and percepts
        role_urls: list[str | None] = [None] * len(sm.roles)
        for seat, url in zip(self.seats, urls, strict=True):
            role_urls[seat] = url
        self.record = _new_record(
            self.id, game_name, [str(r) for r in sm.roles], role_urls, scramble
        )
        self.record.update(startClock=start_clock, playClock=play_clock)
        if self.gdl_ii:
            self.record.update(gdlII=True, percepts=[])
        self.record["states"].append(str(self.state))
        self.record["stateTimes"].append(_now_ms())

    def _rules(self) -> str:
        """The rules as sent: scrambled or not, one line of KIF that reads back the same."""
        sent = self.scrambler.description(self.game) if self.scrambler else self.game
        text = one_line_rules(sent)
        try:
            same = one_line_rules(parse_kif(text, "the rules sent")) == text
        except GdlError:
            same = False
        if not same:
            raise GameError(
                "the game's symbols cannot all be written in KIF (quoted infix names?): "
                "use scrambling (--scramble) to send it"
            )
        return text

    # -- translation between the game's names and the names the players see ----------------

    def _out(self, t: Term) -> Term:
        return self.scrambler.term(t) if self.scrambler else t

    def _in(self, reply: str, legal: list[Term]) -> Term | None:
        """The legal move ``reply`` names (symbols compared case-insensitively), or None."""
        t = parse_move(reply)
        if self.scrambler:
            try:
                t = self.scrambler.unterm(t)
            except KeyError as e:
                raise ProtocolError(f"unknown symbol {e}") from None
        key = _folded(t)
        return next((m for m in legal if _folded(m) == key), None)

    def _all(self, message: Message | list[Message], wait: float) -> list[_Outcome]:
        msgs = message if isinstance(message, list) else [message] * len(self.urls)
        return _broadcast(self.urls, [format_message(m) for m in msgs], wait)

    # -- phases ---------------------------------------------------------------------------

    def run(self) -> Record:
        rec = self.record
        try:
            self.rules = self._rules()
            self._info()
            self._start()
            moves: tuple[Term, ...] | None = None
            while not self.sm.is_terminal(self.state):
                if len(rec["moves"]) >= self.max_steps:
                    raise GameError(f"no terminal state after {self.max_steps} steps")
                moves = self._play(moves)
            rec["goalValues"] = self.sm.goals(self.state)
            rec["isCompleted"] = True
            self._all(self._messages(Stop, moves), self.record["playClock"] + self.grace)
            log.info("%s completed: goals %s", shown(self.id), rec["goalValues"])
        except (Exception, KeyboardInterrupt) as e:
            if isinstance(e, KeyboardInterrupt):
                reason = "interrupted"
            elif isinstance(e, GdlError):
                reason = str(e)
            else:  # a bug of the manager: say what it was, end the match all the same
                log.exception("%s: internal error", shown(self.id))
                reason = f"internal error: {type(e).__name__}: {e}"
            log.error("%s aborted: %s", shown(self.id), shown(reason))
            rec["isCompleted"] = False
            rec["isAborted"] = True
            rec["abortReason"] = reason
            if self.started:
                self._all(Abort(self.id), min(self.record["playClock"], 5) + self.grace)
        return rec

    def _sent(self, moves: tuple[Term, ...] | None) -> tuple[Term, ...] | None:
        return None if moves is None else tuple(self._out(m) for m in moves)

    def _messages(
        self, kind: type[Play] | type[Stop], previous: tuple[Term, ...] | None
    ) -> list[Message]:
        """The ``play`` or ``stop`` message of each player: the joint move before, or in
        GDL-II the turn, the player's own last move and its own percepts only."""
        if not self.gdl_ii:
            return [kind(self.id, self._sent(previous))] * len(self.seats)
        cls = PlayII if kind is Play else StopII
        turn = len(self.record["moves"])
        out: list[Message] = []
        for seat in self.seats:
            last, seen = self.last[seat], self.seen[seat]
            out.append(
                cls(
                    self.id,
                    turn,
                    None if last is None else self._out(last),
                    None if seen is None else tuple(self._out(p) for p in seen),
                )
            )
        return out

    def _info(self) -> None:
        wait = min(2.0, float(self.record["startClock"])) + self.grace
        names = self.record["playerNamesFromHost"]
        for i, (reply, _) in enumerate(self._all(Info(), wait)):
            if reply is not None:
                info = parse_info_reply(reply)
                if info.name:
                    names[self.seats[i]] = info.name
                if info.status and not info.available:
                    log.warning("player %s says it is %s", shown(self.urls[i]),
                                shown(info.status, 80))

    def _start(self) -> None:
        msgs: list[Message] = [
            Start(
                self.id,
                kif_term(self._out(role)),
                self.rules,
                self.record["startClock"],
                self.record["playClock"],
            )
            for role in (self.sm.roles[i] for i in self.seats)
        ]
        self.started = True
        errors = []
        for url, (reply, error) in zip(
            self.urls, self._all(msgs, self.record["startClock"] + self.grace), strict=True
        ):
            if error:
                log.warning("%s: no reply to start (%s)", shown(url), shown(error))
            elif reply is None or reply.lower() != "ready":
                log.warning("%s: replied %s to start", shown(url), shown(reply or "", 100))
            errors.append(error)
        self.record["errors"].append(errors)

    def _play(self, previous: tuple[Term, ...] | None) -> tuple[Term, ...]:
        legal = self.sm.all_legal_moves(self.state)
        for role, moves in zip(self.sm.roles, legal, strict=True):
            if not moves:
                raise MoveDefinitionError(f"{role} has no legal move in {self.state}")
        replies = self._all(self._messages(Play, previous), self.record["playClock"] + self.grace)
        outcomes: list[_Outcome] = [(None, "")] * len(self.sm.roles)
        for seat, outcome in zip(self.seats, replies, strict=True):
            outcomes[seat] = outcome
        joint: list[Term] = []
        errors: list[str] = []
        for i, (role, moves, (reply, error)) in enumerate(
            zip(self.sm.roles, legal, outcomes, strict=True)
        ):
            move: Term | None = None
            if i not in self.seats:  # GDL-II's random: chance, uniformly
                joint.append(self.rng.choice(moves))
                errors.append("")
                continue
            if not error:
                try:
                    move = self._in(reply or "", moves)
                except ProtocolError:
                    move = None
                if move is None:
                    error = "IL " + " ".join((reply or "").split())[:200]
            if move is None:
                move = self.rng.choice(moves)
                log.warning(
                    "%s: step %d: %s: %s, playing %s instead",
                    shown(self.id),
                    len(self.record["moves"]) + 1,
                    shown(str(role)),
                    shown(error),
                    shown(str(move)),
                )
            joint.append(move)
            errors.append(error)
        if self.gdl_ii:
            self.last = list(joint)
            self.seen = [
                tuple(self.sm.percepts(self.state, joint, r)) if i in self.seats else ()
                for i, r in enumerate(self.sm.roles)
            ]
            self.record["percepts"].append([[kif_term(p) for p in ps or ()] for ps in self.seen])
        self.state = self.sm.next_state(self.state, joint)
        rec = self.record
        rec["moves"].append([kif_term(m) for m in joint])
        rec["states"].append(str(self.state))
        rec["stateTimes"].append(_now_ms())
        rec["errors"].append(errors)
        return tuple(joint)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _new_record(
    match_id: str,
    game_name: str,
    roles: list[str],
    urls: Sequence[str | None],
    scramble: bool,
) -> Record:
    """A record of a match not played yet (ggp-base's Match.toJSON fields)."""
    return {
        "matchId": match_id,
        "randomToken": secrets.token_urlsafe(24),
        "startTime": _now_ms(),
        "gameName": game_name,
        "roles": roles,
        "playerURLs": list(urls),
        "playerNamesFromHost": [u if u is not None else "chance (the manager)" for u in urls],
        "previewClock": -1,
        "startClock": 0,
        "playClock": 0,
        "scrambled": scramble,
        "isCompleted": False,
        "isAborted": False,
        "states": [],
        "stateTimes": [],
        "moves": [],
        "errors": [],
        "goalValues": [],
    }


def _folded(t: Term) -> object:
    """``t`` with case-folded names (a constant is a string, ``(f a)`` a tuple), to compare
    moves as GDL does."""
    if isinstance(t, Func):
        return (t.name.casefold(), *map(_folded, t.args))
    if isinstance(t, Const):
        return t.name.casefold()
    raise ProtocolError(f"a move must be ground, found {t}")


# -- the summary ----------------------------------------------------------------------------


def summary(record: Record) -> str:
    """A readable account of a match record: players, moves with errors, result; what
    the record holds from the network (players' names, replies) or the game is written
    with its control characters escaped (``shown``), each line whole."""
    roles = record.get("roles") or [f"role{i + 1}" for i in range(len(record["playerURLs"]))]
    lines = [
        f"match {record['matchId']}: {record.get('gameName', '?')}, start clock "
        f"{record['startClock']} s, play clock {record['playClock']} s"
        + (", scrambled" if record.get("scrambled") else "")
    ]
    urls = record.get("playerURLs", [])
    names = record.get("playerNamesFromHost") or urls
    for role, url, name in zip(roles, urls, names, strict=False):
        lines.append(f"  {role}: {name}" + (f" ({url})" if url and name != url else ""))
    errors = record.get("errors", [])
    if errors and any(errors[0]):
        lines.append("  start: " + _errors(roles, errors[0]))
    for i, joint in enumerate(record["moves"], 1):
        line = f"  {i:3d}. " + "  ".join(joint)
        if i < len(errors) and any(errors[i]):
            line += "   [" + _errors(roles, errors[i]) + "]"
        lines.append(line)
    if record.get("isCompleted"):
        result = ", ".join(f"{r} {g}" for r, g in zip(roles, record["goalValues"], strict=False))
        lines.append(f"result after {len(record['moves'])} step(s): {result}")
    else:
        lines.append(
            f"aborted after {len(record['moves'])} step(s): "
            f"{record.get('abortReason', 'unknown reason')}"
        )
    return "\n".join(shown(line, None) for line in lines)


def _errors(roles: Sequence[str], errors: Sequence[str]) -> str:
    return "; ".join(f"{r}: {e}" for r, e in zip(roles, errors, strict=False) if e)
