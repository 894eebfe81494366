"""Running the studio: ``serve`` listens on a host and port with uvicorn until Ctrl-C.

Bound to this machine (127.0.0.1, the default) the server answers only to local host
names. Bound elsewhere it warns first: anyone who can reach the address can run games on
this machine (within the limits of ``Limits``); it still answers only to the names it is
bound to (``host_names``): a page of another site that renames itself through DNS is
refused wherever the server listens.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import webbrowser
from collections.abc import Iterable
from pathlib import Path

from gdl2pl.load import read_text

from .limits import Limits

LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1")
#: Addresses that bind every interface of this machine.
WILDCARDS = ("0.0.0.0", "::", "")


def _as_host(address: str) -> str:
    """An address as a ``Host`` header names it (an IPv6 address in brackets)."""
    return f"[{address}]" if ":" in address else address.lower()


def host_names(host: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The names a server listening on ``host`` answers to: the local names, ``host``
    itself, for a wildcard address this machine's names and their addresses, and
    ``extra`` (names given on the command line: a DNS name of this machine)."""
    from .app import LOCAL_HOSTS

    names = {*LOCAL_HOSTS, *(_as_host(e.strip()) for e in extra if e.strip())}
    if host not in WILDCARDS:
        names.add(_as_host(host))
        return tuple(sorted(names))
    for name in {socket.gethostname(), socket.getfqdn()}:
        names.add(name.lower())
        with contextlib.suppress(OSError):  # a name that does not resolve: the name alone
            names |= {_as_host(str(info[4][0])) for info in socket.getaddrinfo(name, None)}
    return tuple(sorted(names))


def serve(
    host: str,
    port: int,
    game: str | None = None,
    open_browser: bool = False,
    limits: Limits | None = None,
    allow_hosts: Iterable[str] = (),
) -> int:
    """Serve the studio (``game``, a file, is read once and offered in the page),
    answering to the names of ``host_names(host, allow_hosts)``."""
    import uvicorn

    from .app import StartGame
    from .app import create_app

    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, not {port}")
    start = StartGame(Path(game).name, read_text(game)) if game else None
    local = host in LOCAL_ADDRESSES
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    names = host_names(host, allow_hosts)
    if not local:
        print(
            f"gdl2pl studio: warning: listening on {host}, not on this machine only: anyone "
            "who can reach it can load and run games here (within the server's limits). "
            "Use --host 127.0.0.1 unless the class needs it. It answers to these names "
            f"only (add one with --allow-host): {', '.join(names)}",
            file=sys.stderr,
        )
    print(f"gdl2pl studio: open {url} in a web browser (Ctrl-C stops the server)", flush=True)
    app = create_app(limits, start, allowed_hosts=names)
    # log_config=None: uvicorn leaves the process's logging alone (its default dictConfig
    # closes handlers other libraries installed, such as absl's, and their streams).
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    if open_browser:
        webbrowser.open(url)
    server.run(sockets=[sock])
    return 0
