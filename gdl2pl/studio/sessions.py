"""Who sees what: sessions (one per browser) and the games they have loaded.

A session is named by a random id the server makes (the page keeps it in a cookie); an id
the server did not make is never accepted, so a page cannot pick another's session. A
loaded game belongs to one session: it is found by (session id, text), so two browsers
with the same text each load their own, and one never sees the other's matches. Games are
loaded from text held in memory, never written to disk. Past ``Limits.max_games`` loaded
games (over all sessions) the least recently used idle one is unloaded; past
``Limits.max_sessions`` the least recently seen session is forgotten with its games.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.bridge import ReasonerError
from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.errors import GdlError
from gdl2pl.load import Syntax
from gdl2pl.load import parse_game
from gdl2pl.syntax import Description

from .limits import Limits
from .limits import python_work

#: The name a game typed in the page goes by in messages, when the page names no file or
#: example it came from.
GAME_NAME = "game"
#: What a name the page gives may be: a file name's letters, digits, ``._-`` and spaces.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,99}")


class StudioError(GdlError):
    """A request the studio refuses: ``status`` is the HTTP status, ``line`` and
    ``column`` say where in the game text when the game is at fault; ``retry`` that the
    same request may well be answered in a moment (the server or the page was busy)."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        line: int | None = None,
        column: int | None = None,
        retry: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.line = line
        self.column = column
        self.retry = retry


@dataclass
class Loaded:
    """A game loaded for one session, with the states of the last history replayed on
    it (each request gives the whole history; the common prefix is not replayed again)."""

    sm: StateMachine
    #: The game's rules, as parsed (``gdl2pl analyze`` proves from their shape first).
    description: Description | None = None
    moves: list[tuple[str, ...]] = field(default_factory=list)
    states: list[MachineState] = field(default_factory=list)
    busy: int = 0

    def replay(self, moves: Sequence[Sequence[str]]) -> list[MachineState]:
        """The states along ``moves`` (joint moves, KIF, one per role), the initial state
        first. ``StudioError`` (422) names the first move that cannot be played."""
        wanted = [tuple(jm) for jm in moves]
        if not self.states:
            self.states = [self.sm.initial_state]
        keep = 0
        while keep < min(len(wanted), len(self.moves)) and wanted[keep] == self.moves[keep]:
            keep += 1
        del self.moves[keep:]
        del self.states[keep + 1 :]
        n_roles = len(self.sm.roles)
        for jm in wanted[keep:]:
            where = f"move {len(self.moves) + 1} ({' '.join(jm)})"
            if len(jm) != n_roles:
                raise StudioError(f"{where}: a joint move has one move per role ({n_roles})", 422)
            state = self.states[-1]
            if self.sm.is_terminal(state):
                raise StudioError(f"{where}: the match is already over", 422)
            try:
                nxt = self.sm.next_state(state, list(jm))
            except ReasonerError:  # a limit, not the move: the caller says which
                raise
            except GdlError as e:
                raise StudioError(f"{where}: {e}", 422) from None
            self.moves.append(jm)
            self.states.append(nxt)
        return list(self.states)


@dataclass
class Session:
    """One browser: its id and the locks that make its requests run one at a time (one
    running Prolog, one in the front end)."""

    id: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    front_end: threading.Lock = field(default_factory=threading.Lock)


class Studio:
    """The server's state: sessions and loaded games, under ``limits``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._games: OrderedDict[tuple[str, str], Loaded] = OrderedDict()
        self.busy = threading.BoundedSemaphore(limits.max_busy)

    # -- sessions --------------------------------------------------------------------------

    def session(self, sid: str | None) -> tuple[Session, bool]:
        """The session named ``sid``, or a new one (then ``True``) when there is none."""
        with self._lock:
            if sid is not None and sid in self._sessions:
                self._sessions.move_to_end(sid)
                return self._sessions[sid], False
            s = Session(secrets.token_urlsafe(24))
            self._sessions[s.id] = s
            forgotten = []
            while len(self._sessions) > self.limits.max_sessions:
                old, _ = self._sessions.popitem(last=False)
                forgotten += [k for k in self._games if k[0] == old and not self._games[k].busy]
            closing = [self._games.pop(k) for k in forgotten]
        for g in closing:
            g.sm.close()
        return s, True

    def sessions(self) -> int:
        return len(self._sessions)

    # -- games -----------------------------------------------------------------------------

    @contextmanager
    def game(
        self, session: Session, text: str, syntax: Syntax, name: str = GAME_NAME
    ) -> Iterator[Loaded]:
        """The game of ``text`` loaded for ``session`` (loaded now if it is not) under
        ``name`` (the file's or example's: messages and reports say it), held in use
        (never unloaded) for the block."""
        key = (session.id, hashlib.sha256(f"{syntax}\0{name}\0{text}".encode()).hexdigest())
        with self._lock:
            loaded = self._games.get(key)
            if loaded is not None:
                self._games.move_to_end(key)
                loaded.busy += 1
        if loaded is None:
            loaded = self._load(text, syntax, name)
            with self._lock:
                self._games[key] = loaded
                closing = self._evict()
            for g in closing:
                g.sm.close()
        try:
            yield loaded
        finally:
            with self._lock:
                loaded.busy -= 1

    def loaded_games(self, session: Session | None = None) -> int:
        """How many games are loaded (for ``session`` only, if given)."""
        with self._lock:
            return sum(1 for k in self._games if session is None or k[0] == session.id)

    def _load(self, text: str, syntax: Syntax, name: str) -> Loaded:
        with python_work():  # parsing and compiling stop at the request's deadline too
            d = parse_game(text, syntax, name)
        sm = StateMachine(
            d, name, inference_limit=self.limits.inference_limit, compiling=python_work()
        )
        if not sm.roles:
            sm.close()
            raise StudioError("not a game: it defines no role (the Model tab takes programs)", 422)
        return Loaded(sm, d, busy=1)

    def _evict(self) -> list[Loaded]:
        """Unload the least recently used idle games past the cap (called locked)."""
        out: list[Loaded] = []
        for key in list(self._games):
            if len(self._games) - len(out) <= self.limits.max_games:
                break
            if not self._games[key].busy:
                out.append(self._games.pop(key))
        return out

    def close(self) -> None:
        """Unload every game."""
        with self._lock:
            games = list(self._games.values())
            self._games.clear()
        for g in games:
            g.sm.close()
