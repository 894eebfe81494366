"""The GGP match protocol's messages: reading and writing them as text (no I/O, no Prolog).

A game manager sends a player one message per HTTP request::

    (info)
    (preview (RULES...) PREVIEWCLOCK)
    (start MATCHID ROLE (RULES...) STARTCLOCK PLAYCLOCK)
    (play MATCHID nil | (MOVE...))
    (stop MATCHID nil | (MOVE...))
    (abort MATCHID)

and, in a match of a GDL-II game (chance, hidden information), instead of ``play`` and
``stop``::

    (play MATCHID TURN LASTMOVE PERCEPTS)
    (stop MATCHID TURN LASTMOVE PERCEPTS)

where TURN counts the ``play``/``stop`` messages of the match from 0, LASTMOVE is the move
the player made on the turn before (the one the manager played for it if its own was late
or illegal) and PERCEPTS the list of what it perceived (``sees``) after it, both ``nil`` on
turn 0: a player is told only its own move and percepts, never the others' moves.

Keywords are read in any case (ggp-base sends ``( PLAY m1 NIL )``), extra white space and
line breaks are ignored, clocks and turns are whole numbers, and the moves of
``play``/``stop`` are the previous joint move in role order (``nil`` before the first
move). ``parse_message`` raises ``ProtocolError`` for anything else, saying why. The rules
of ``start`` are kept as the KIF text of the clauses, ready for ``gdl2pl.kif.parse_kif``.

Replies are plain text: ``ready``, a move in KIF, ``done``, ``aborted``, ``busy``; the reply to
``(info)`` is ggp-base's ``((name NAME) (status available|busy))``. ``parse_info_reply`` also
reads the bare atoms of older players and ggp-base's earlier JSON form.

Limits (the text comes from strangers): a message is at most ``MAX_MESSAGE`` characters, a
``play`` or ``stop`` message at most ``MAX_PLAY`` (its moves and percepts are terms of the
game, and it must be read and answered within a play clock), a move reply at most
``MAX_MOVE`` characters, and no list is nested deeper than ``MAX_DEPTH`` (the deepest real
game nests about 10); beyond them ``ProtocolError`` says which limit was hit. The reader
is iterative, so no input can exhaust the Python stack. ``shown(text)`` (``gdl2pl.shown``,
here for the room's modules) writes network text for a log line: control characters
escaped, length capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gdl2pl.errors import GdlError
from gdl2pl.jsonline import loads_line
from gdl2pl.kif import kif_term
from gdl2pl.shown import shown
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

__all__ = [
    "Abort",
    "Info",
    "InfoReply",
    "Message",
    "Play",
    "PlayII",
    "Preview",
    "ProtocolError",
    "Start",
    "Stop",
    "StopII",
    "format_info_reply",
    "format_message",
    "one_line_rules",
    "parse_info_reply",
    "parse_message",
    "parse_move",
    "shown",
]

#: Longest message accepted, in characters (a large game's rules are a few hundred KB).
MAX_MESSAGE = 8_000_000
#: Longest move reply accepted, in characters.
MAX_MOVE = 64_000
#: Longest ``play`` or ``stop`` message accepted, in characters: reading one this long
#: and taking in its percepts costs a few hundredths of a second; one of megabytes
#: took longer than a play clock.
MAX_PLAY = 64_000
#: Deepest nesting of lists accepted in a message or a reply.
MAX_DEPTH = 200


class ProtocolError(GdlError):
    """A message or reply that is not well-formed; the text says what is wrong."""


# -- messages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Info:
    """``(info)``: is the player there, and is it free?"""


@dataclass(frozen=True)
class Preview:
    """``(preview (RULES...) CLOCK)``: a game to look at before a match (ggp-base)."""

    rules: str
    preview_clock: int


@dataclass(frozen=True)
class Start:
    """``(start ID ROLE (RULES...) STARTCLOCK PLAYCLOCK)``; ``rules`` is the KIF text of the
    clauses (without the enclosing list)."""

    match_id: str
    role: str
    rules: str
    start_clock: int
    play_clock: int


@dataclass(frozen=True)
class Play:
    """``(play ID MOVES)``: the joint move just made (``None`` for ``nil``); reply a move."""

    match_id: str
    moves: tuple[Term, ...] | None


@dataclass(frozen=True)
class Stop:
    """``(stop ID MOVES)``: the match is over; ``moves`` is the last joint move."""

    match_id: str
    moves: tuple[Term, ...] | None


@dataclass(frozen=True)
class _TurnII:
    """The fields of a GDL-II turn message, ``(KIND ID TURN LASTMOVE PERCEPTS)``: the
    player's own move of the turn before and its percepts after it (``None`` for
    ``nil``, as on turn 0). A play and a stop are told apart by their class."""

    match_id: str
    turn: int
    last_move: Term | None
    percepts: tuple[Term, ...] | None


@dataclass(frozen=True)
class PlayII(_TurnII):
    """``(play ID TURN LASTMOVE PERCEPTS)`` (GDL-II): reply a move."""


@dataclass(frozen=True)
class StopII(_TurnII):
    """``(stop ID TURN LASTMOVE PERCEPTS)`` (GDL-II): the match is over."""


@dataclass(frozen=True)
class Abort:
    """``(abort ID)``: the match ended abnormally."""

    match_id: str


Message = Info | Preview | Start | Play | Stop | PlayII | StopII | Abort


# -- s-expressions with source spans ------------------------------------------------------

_TOKEN = re.compile(r"(\s+|;[^\n]*)|(\()|(\))|([^\s();]+)")


@dataclass(frozen=True)
class _Atom:
    text: str


@dataclass(frozen=True)
class _List:
    items: tuple[_Atom | _List, ...]
    start: int  # offset of "("
    end: int  # offset just after ")"


def _read(text: str, max_chars: int = MAX_MESSAGE) -> list[_Atom | _List]:
    """The s-expressions of ``text``; ``ProtocolError`` if unbalanced, longer than
    ``max_chars`` or nested deeper than ``MAX_DEPTH``."""
    if len(text) > max_chars:
        raise ProtocolError(f"too long: {len(text)} characters (at most {max_chars})")
    stack: list[tuple[int, list[_Atom | _List]]] = []
    current: list[_Atom | _List] = []
    for m in _TOKEN.finditer(text):
        if m.group(2):
            if len(stack) >= MAX_DEPTH:
                raise ProtocolError(f"nested deeper than {MAX_DEPTH} lists at offset {m.start()}")
            stack.append((m.start(), current))
            current = []
        elif m.group(3):
            if not stack:
                raise ProtocolError(f"unbalanced ')' at offset {m.start()}")
            start, outer = stack.pop()
            outer.append(_List(tuple(current), start, m.end()))
            current = outer
        elif m.group(4):
            current.append(_Atom(m.group(4)))
    if stack:
        raise ProtocolError(
            f"truncated message: {len(stack)} parenthesis(es) still open at the end"
        )
    return current


def _term(x: _Atom | _List, what: str) -> Term:
    """``x`` as a ground term (recursion depth is bounded by ``MAX_DEPTH``, see ``_read``)."""
    if isinstance(x, _Atom):
        if x.text.startswith("?"):
            raise ProtocolError(f"{what}: a variable ({x.text}) is not a ground term")
        return Const(x.text)
    if not x.items or not isinstance(x.items[0], _Atom):
        raise ProtocolError(f"{what}: a compound term must start with a symbol")
    head = x.items[0].text
    if head.startswith("?"):
        raise ProtocolError(f"{what}: a variable ({head}) is not a function name")
    return Func(head, tuple(_term(a, what) for a in x.items[1:]))


def _clock(x: _Atom | _List, what: str) -> int:
    if isinstance(x, _Atom) and re.fullmatch(r"\d{1,9}", x.text):
        return int(x.text)
    shown = x.text if isinstance(x, _Atom) else "a list"
    raise ProtocolError(f"{what} must be a whole number of seconds, found {shown}")


def _atom(x: _Atom | _List, what: str) -> str:
    if isinstance(x, _Atom):
        return x.text
    raise ProtocolError(f"{what} must be a symbol, found a list")


def _terms_or_nil(x: _Atom | _List, what: str, items: str, each: str) -> tuple[Term, ...] | None:
    """``nil`` as None, or the list ``x`` of terms; ``what`` names the list in errors,
    ``items`` what it must hold, ``each`` one of them."""
    if isinstance(x, _Atom):
        if x.text.lower() == "nil":
            return None
        raise ProtocolError(f"{what} must be nil or a list of {items}, found {x.text[:40]}")
    return tuple(_term(m, each) for m in x.items)


def _turn(x: _Atom | _List) -> int:
    if isinstance(x, _Atom) and re.fullmatch(r"\d{1,9}", x.text):
        return int(x.text)
    shown = x.text[:40] if isinstance(x, _Atom) else "a list"
    raise ProtocolError(f"the turn must be a whole number, found {shown}")


def _last_move(x: _Atom | _List) -> Term | None:
    if isinstance(x, _Atom) and x.text.lower() == "nil":
        return None
    return _term(x, "the last move")


_ARITY = {"info": 0, "preview": 2, "start": 5, "play": 2, "stop": 2, "abort": 1}
#: Messages that GDL-II gives a longer form (``(play ID TURN LASTMOVE PERCEPTS)``).
_GDL_II_ARITY = {"play": 4, "stop": 4}


_WORD = re.compile(r"[^\s();]+")


def _keyword(text: str) -> str:
    """The first symbol of ``text`` after white space, comments and one ``(`` at most,
    in lower case ("" if none): a message's keyword, found without reading the rest."""
    i, opened = 0, False
    while i < len(text):
        c = text[i]
        if c == ";":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end + 1
        elif c.isspace():
            i += 1
        elif c == "(" and not opened:
            i, opened = i + 1, True
        else:
            word = _WORD.match(text, i)
            return word.group().lower() if word else ""
    return ""


def parse_message(text: str) -> Message:
    """The message ``text`` holds; ``ProtocolError`` if it is not one well-formed message."""
    kind = _keyword(text)
    if kind in ("play", "stop") and len(text) > MAX_PLAY:
        raise ProtocolError(f"a {kind} message is at most {MAX_PLAY} characters, found {len(text)}")
    items = _read(text)
    if not items:
        raise ProtocolError("empty message")
    if len(items) > 1:
        raise ProtocolError(f"expected one message, found {len(items)} expressions")
    msg = items[0]
    if not isinstance(msg, _List):
        if msg.text.lower() in _ARITY:  # tolerate a bare "info"
            msg = _List((msg,), 0, len(text))
        else:
            raise ProtocolError(f"a message is a list like (info), found {msg.text[:40]}")
    if not msg.items or not isinstance(msg.items[0], _Atom):
        raise ProtocolError("a message must start with its keyword")
    kind = msg.items[0].text.lower()
    args = msg.items[1:]
    if kind not in _ARITY:
        raise ProtocolError(f"unknown message {msg.items[0].text[:40]!r}")
    n = _ARITY[kind]
    if kind in _GDL_II_ARITY and len(args) == _GDL_II_ARITY[kind]:
        cls_ii = PlayII if kind == "play" else StopII
        return cls_ii(
            _atom(args[0], "the match id"),
            _turn(args[1]),
            _last_move(args[2]),
            _terms_or_nil(args[3], "percepts", "terms", "a percept"),
        )
    if len(args) < n or (len(args) > n and kind != "start"):  # start may grow new fields
        also = f" (or {_GDL_II_ARITY[kind]} in GDL-II)" if kind in _GDL_II_ARITY else ""
        raise ProtocolError(f"({kind} ...) takes {n} argument(s){also}, found {len(args)}")
    if kind == "info":
        return Info()
    if kind == "abort":
        return Abort(_atom(args[0], "the match id"))
    if kind in ("play", "stop"):
        cls = Play if kind == "play" else Stop
        return cls(
            _atom(args[0], "the match id"), _terms_or_nil(args[1], "moves", "moves", "a move")
        )
    if kind == "preview":
        return Preview(_rules(text, args[0]), _clock(args[1], "the preview clock"))
    return Start(
        _atom(args[0], "the match id"),
        _atom(args[1], "the role"),
        _rules(text, args[2]),
        _clock(args[3], "the start clock"),
        _clock(args[4], "the play clock"),
    )


def _rules(text: str, x: _Atom | _List) -> str:
    if not isinstance(x, _List):
        raise ProtocolError(f"the rules must be a list of clauses, found {x.text[:40]}")
    return text[x.start + 1 : x.end - 1].strip()


# -- writing messages -----------------------------------------------------------------------


def one_line_rules(d: Description) -> str:
    """The clauses of ``d`` as KIF on one line, separated by single spaces."""
    parts = []
    for c in d.clauses:
        if isinstance(c, Fact):
            parts.append(kif_term(c.head))
        else:
            parts.append("(<= " + " ".join([kif_term(c.head), *map(kif_term, c.body)]) + ")")
    return " ".join(parts)


def _format_moves(moves: tuple[Term, ...] | None) -> str:
    return "nil" if moves is None else "(" + " ".join(map(kif_term, moves)) + ")"


def format_message(msg: Message) -> str:
    """The text of a message, as a manager sends it (lowercase keywords, one line)."""
    if isinstance(msg, Info):
        return "(info)"
    if isinstance(msg, Preview):
        return f"(preview ({msg.rules}) {msg.preview_clock})"
    if isinstance(msg, Start):
        return f"(start {msg.match_id} {msg.role} ({msg.rules}) {msg.start_clock} {msg.play_clock})"
    if isinstance(msg, Play):
        return f"(play {msg.match_id} {_format_moves(msg.moves)})"
    if isinstance(msg, Stop):
        return f"(stop {msg.match_id} {_format_moves(msg.moves)})"
    if isinstance(msg, PlayII | StopII):
        kind = "play" if isinstance(msg, PlayII) else "stop"
        last = "nil" if msg.last_move is None else kif_term(msg.last_move)
        return f"({kind} {msg.match_id} {msg.turn} {last} {_format_moves(msg.percepts)})"
    if isinstance(msg, Abort):
        return f"(abort {msg.match_id})"
    raise TypeError(f"not a protocol message: {msg!r}")


# -- replies --------------------------------------------------------------------------------


def parse_move(text: str) -> Term:
    """The move in a player's reply to ``play``: one ground KIF term (at most ``MAX_MOVE``
    characters)."""
    items = _read(text, MAX_MOVE)
    if len(items) != 1:
        raise ProtocolError(f"a move reply is one term, found {len(items)} expressions")
    return _term(items[0], "the move")


@dataclass(frozen=True)
class InfoReply:
    """What a player said to ``(info)``: its status (lowercase; "" if unknown) and name."""

    status: str
    name: str | None = None
    species: str | None = None

    @property
    def available(self) -> bool:
        return self.status in ("available", "ready")


def format_info_reply(name: str, status: str) -> str:
    """ggp-base's reply to ``(info)``: ``((name NAME) (status STATUS))``."""
    return f"((name {name}) (status {status}))"


def parse_info_reply(text: str) -> InfoReply:
    """Read a reply to ``(info)``: ``((name N) (status S) ...)``, a bare status atom
    (``ready``, ``available``, ``busy``) or a JSON object; unreadable text gives status ""."""
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = loads_line(text)  # nesting bounded: a reply comes from a stranger
        except ValueError:
            return InfoReply("")
        if not isinstance(obj, dict):
            return InfoReply("")
        return InfoReply(
            str(obj.get("status", "")).lower(),
            _opt(obj.get("name")),
            _opt(obj.get("species")),
        )
    try:
        items = _read(text)
    except ProtocolError:
        return InfoReply("")
    if len(items) != 1:
        return InfoReply("")
    x = items[0]
    if isinstance(x, _Atom):
        return InfoReply(x.text.lower())
    fields: dict[str, str] = {}
    for pair in x.items:
        if isinstance(pair, _List) and len(pair.items) >= 2 and isinstance(pair.items[0], _Atom):
            fields[pair.items[0].text.lower()] = " ".join(
                a.text if isinstance(a, _Atom) else "(...)" for a in pair.items[1:]
            )
    return InfoReply(fields.get("status", "").lower(), fields.get("name"), fields.get("species"))


def _opt(v: object) -> str | None:
    return None if v is None else str(v)
