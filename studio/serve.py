"""Running the studio: ``serve`` listens on a host and port with uvicorn until Ctrl-C.

Bound to this machine (127.0.0.1, the default) the server answers only to local host
names. Bound elsewhere it warns first: anyone who can reach the address can run games on
this machine (within the limits of ``Limits``).
"""

from __future__ import annotations

import socket
import sys
import webbrowser
from pathlib import Path

from gdl2pl.load import read_text

from .limits import Limits

LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1")


def serve(
    host: str,
    port: int,
    game: str | None = None,
    open_browser: bool = False,
    limits: Limits | None = None,
) -> int:
    """Serve the studio (``game``, a file, is read once and offered in the page)."""
    import uvicorn

    from .app import LOCAL_HOSTS
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
    if not local:
        print(
            f"gdl2pl studio: warning: listening on {host}, not on this machine only: anyone "
            "who can reach it can load and run games here (within the server's limits). "
            "Use --host 127.0.0.1 unless the class needs it.",
            file=sys.stderr,
        )
    print(f"gdl2pl studio: open {url} in a web browser (Ctrl-C stops the server)", flush=True)
    app = create_app(limits, start, allowed_hosts=LOCAL_HOSTS if local else None)
    # log_config=None: uvicorn leaves the process's logging alone (its default dictConfig
    # closes handlers other libraries installed, such as absl's, and their streams).
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    if open_browser:
        webbrowser.open(url)
    server.run(sockets=[sock])
    return 0
