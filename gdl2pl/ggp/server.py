"""The player's HTTP server: ggp-base's wire format in front of a ``GamePlayer``.

A message arrives as the body of a POST (ggp-base sends ``Content-Type: text/acl``), or
URL-encoded in the path of a GET (``GET /%28info%29``; ``GET /`` alone means ``(info)``).
Each reply is ``text/acl`` with the CORS headers browsers need
(``Access-Control-Allow-Origin: *``, methods POST, GET, OPTIONS, header Content-Type); an
OPTIONS preflight gets them with an empty body. HTTP/1.0: one message per connection.

Nothing a client sends stops the server: malformed HTTP is answered by ``http.server``
(400), a message that cannot be read gets ``error: ...`` with status 400, a body longer
than ``MAX_BODY`` bytes 413, a bug 500, and a client that stalls is dropped after
``read_timeout`` seconds. Each bad request and each client that resets or drops its
connection is logged as one warning line, with the client's text escaped
(``gdl2pl.ggp.protocol.shown``); a traceback is logged only for a bug of the server itself.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote_plus

from gdl2pl.ggp.protocol import MAX_MESSAGE
from gdl2pl.ggp.protocol import shown

from .player import GamePlayer
from .player import Reply

log = logging.getLogger("gdl2pl.server")

MAX_BODY = MAX_MESSAGE  # bytes: far more than the largest game description

#: Errors of a client's connection (it went away, reset, or stalled): not bugs.
CLIENT_ERRORS = (ConnectionError, TimeoutError)

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, GET, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type",
    "Access-Control-Max-Age": "86400",
}


class _Handler(BaseHTTPRequestHandler):
    server: PlayerServer
    server_version = "gdl2pl"
    timeout = 30.0  # seconds a client may take to send its request (set per server)

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # type: ignore[misc]
        super().setup()

    def log_message(self, fmt: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), shown(fmt % args))

    def log_error(self, fmt: str, *args: object) -> None:
        """``http.server``'s complaints about a request (bad request line, headers...)."""
        log.warning("%s: bad request: %s", self.address_string(), shown(fmt % args))

    def _send(self, reply: Reply) -> None:
        data = reply.body.encode("utf-8")
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/acl; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in CORS_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _answer(self, text: str, received: float) -> None:
        try:
            reply = self.server.player.handle(text, received)
        except Exception as e:  # a bug: answer it and keep serving
            log.exception("internal error on %s", shown(text))
            reply = Reply(500, f"error: internal error: {type(e).__name__}: {shown(str(e))}")
        self._send(reply)

    def do_OPTIONS(self) -> None:
        self._send(Reply(200, ""))

    def do_GET(self) -> None:
        received = time.monotonic()
        text = unquote_plus(self.path.lstrip("/"))
        self._answer(text.replace("\r", " ") if text.strip() else "(info)", received)

    def do_POST(self) -> None:
        received = time.monotonic()
        length = self.headers.get("Content-Length")
        try:
            if length is None:
                if self.request_version != "HTTP/1.0":
                    log.warning("%s: POST without Content-Length", self.address_string())
                    self._send(Reply(411, "error: Content-Length required"))
                    return
                data = self.rfile.read(MAX_BODY + 1)  # HTTP/1.0: the body ends with the stream
            else:
                n = content_length(length)
                if n > MAX_BODY:
                    log.warning("%s: message of %d bytes refused", self.address_string(), n)
                    self._send(Reply(413, "error: message too large"))
                    return
                data = self.rfile.read(n)
        except ValueError:
            shown_length = shown(length or "", 40)
            log.warning("%s: bad Content-Length: %s", self.address_string(), shown_length)
            self._send(Reply(400, f"error: bad Content-Length: {shown_length}"))
            return
        except OSError as e:
            log.warning("%s: could not read the request: %s", self.address_string(),
                        shown(str(e)))
            self.close_connection = True
            return
        if length is not None and len(data) < int(length):
            log.warning(
                "%s: truncated request: %d of %s bytes", self.address_string(), len(data), length
            )
        self._answer(data.decode("utf-8", errors="replace"), received)


def content_length(text: str) -> int:
    """The value of a Content-Length header: ASCII digits only, as HTTP defines it (Python's
    ``int`` would also take ``6_0``, ``+60``, `` 60`` or other scripts' digits, and a
    reader and a writer could then disagree on where a message ends); spaces and tabs
    around it are the header's optional white space. ValueError else."""
    text = text.strip(" \t")
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise ValueError(text)
    return int(text)


class PlayerServer(ThreadingHTTPServer):
    """An HTTP server answering match-protocol messages with ``player``."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        player: GamePlayer,
        host: str = "127.0.0.1",
        port: int = 9147,
        read_timeout: float = 30.0,
    ) -> None:
        self.player = player
        self.read_timeout = read_timeout
        super().__init__((host, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line for a client that reset or dropped its connection; a traceback only
        for anything else (a bug)."""
        e = sys.exc_info()[1]
        if isinstance(e, CLIENT_ERRORS):
            log.warning(
                "%s: connection lost: %s", client_address[0], shown(str(e) or type(e).__name__)
            )
        else:
            log.exception("internal error serving %s", client_address[0])

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{port}/"

    def start_in_thread(self) -> threading.Thread:
        """Serve from a daemon thread; ``shutdown()`` then ``server_close()`` end it."""
        t = threading.Thread(
            target=self.serve_forever, args=(0.05,), name="gdl2pl-http", daemon=True
        )
        t.start()
        self._thread = t
        return t

    def close(self) -> None:
        """Stop serving (if serving from a thread), close the socket and the player."""
        thread = getattr(self, "_thread", None)
        if thread is not None and thread.is_alive():
            self.shutdown()
        self.server_close()
        self.player.close()


@contextmanager
def serving(players: Iterable[GamePlayer], host: str = "127.0.0.1") -> Iterator[list[PlayerServer]]:
    """Each of ``players`` served on ``host`` at a free port, from its own thread, for
    the ``with`` block (in the players' order; their ``url`` names them to a manager);
    every server started is closed at the end, its player with it, even after an error."""
    servers: list[PlayerServer] = []
    try:
        for p in players:
            servers.append(PlayerServer(p, host, 0))
            servers[-1].start_in_thread()
        yield servers
    finally:
        for s in servers:
            s.close()
