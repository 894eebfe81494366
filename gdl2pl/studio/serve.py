"""Running the studio: ``serve`` listens on a host and port with uvicorn until Ctrl-C.

Bound to this machine (127.0.0.1, the default) the server answers only to local host
names. Bound elsewhere it warns first: anyone who can reach the address can run games on
this machine (within the limits of ``Limits``); it still answers only to the names it is
bound to (``host_names``): for every address of the machine (``0.0.0.0``, ``::``) the
machine's names and the addresses of its network interfaces (``machine_addresses``), so
that a student's browser that opens one of the printed ``student_urls`` is answered,
while a page of another site that renames itself through DNS is refused wherever the
server listens.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
import webbrowser
from collections.abc import Iterable
from pathlib import Path

from gdl2pl.load import read_text

from .limits import Limits

LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1")
#: How long an idle connection of a browser is kept open: longer than a student's pause
#: between requests (uvicorn's default, 5 s, is not), so that the server seldom closes a
#: connection just as a page sends its next request on it (the page then sees it reset).
KEEP_ALIVE_SECONDS = 75
#: Addresses that bind every interface of this machine.
WILDCARDS = ("0.0.0.0", "::", "")


def _as_host(address: str) -> str:
    """An address as a ``Host`` header names it (an IPv6 address in brackets)."""
    return f"[{address}]" if ":" in address else address.lower()


def host_names(host: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The names a server listening on ``host`` answers to: the local names, ``host``
    itself, for a wildcard address this machine's names and addresses, and ``extra``
    (names given on the command line: a DNS name of this machine)."""
    from .app import LOCAL_HOSTS

    names = {*LOCAL_HOSTS, *(_as_host(e.strip()) for e in extra if e.strip())}
    if host not in WILDCARDS:
        names.add(_as_host(host))
        return tuple(sorted(names))
    names |= {name.lower() for name in machine_names()}
    names |= {_as_host(a) for a in machine_addresses(host)}
    return tuple(sorted(names))


def machine_names() -> set[str]:
    """This machine's host names."""
    return {n for n in (socket.gethostname(), socket.getfqdn()) if n}


def machine_addresses(host: str = "0.0.0.0") -> list[str]:
    """This machine's IP addresses (of the family of ``host``: IPv4 for ``0.0.0.0``, both
    for ``::``), loopback ones last: those its names resolve to, the one it reaches other
    machines from (found without sending a packet) and, on Linux, every interface's
    (``/proc/net/fib_trie``, ``/proc/net/if_inet6``). An IPv6 link-local address, which
    a URL can only give with its interface, is left out."""
    found: set[str] = set()
    for name in machine_names():
        with contextlib.suppress(OSError):  # a name that does not resolve: the name alone
            found |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))  # UDP: chooses the route, sends nothing
            found.add(str(s.getsockname()[0]))
    found |= _linux_addresses()
    wanted = (4, 6) if ":" in host else (4,)
    out = []
    for a in found:
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(a.split("%")[0])
            if ip.version in wanted and not ip.is_link_local and not ip.is_unspecified:
                out.append(ip)
    return [str(ip) for ip in sorted(set(out), key=lambda ip: (ip.is_loopback, ip.version, ip))]


def _linux_addresses() -> set[str]:
    """The local addresses of every network interface, as Linux lists them (none
    elsewhere)."""
    out: set[str] = set()
    with contextlib.suppress(OSError):
        last = ""
        for line in Path("/proc/net/fib_trie").read_text().splitlines():
            words = line.split()
            if line.lstrip().startswith("|--") and len(words) == 2:
                last = words[1]
            elif "/32 host LOCAL" in line and last:
                out.add(last)
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            hexa = line.split()[0]
            out.add(str(ipaddress.IPv6Address(bytes.fromhex(hexa))))
    return out


def student_urls(host: str, port: int) -> list[str]:
    """The addresses of the page that a browser on another machine can open: the bound
    address, or for every address of the machine (``0.0.0.0``, ``::``) each of its
    addresses that is not a loopback one (the loopback URL last when there is no other)."""
    if host not in WILDCARDS:
        return [f"http://{_as_host(host)}:{port}/"]
    addresses = machine_addresses(host)
    outside = [a for a in addresses if not ipaddress.ip_address(a).is_loopback]
    return [f"http://{_as_host(a)}:{port}/" for a in (outside or ["127.0.0.1"])]


def serve(
    host: str,
    port: int,
    game: str | None = None,
    open_browser: bool = False,
    limits: Limits | None = None,
    allow_hosts: Iterable[str] = (),
) -> int:
    """Serve the studio (``game``, a file, is read once and offered in the page: a game
    or program, or an exercise, ``*.json``: see ``gdl2pl.studio.exercise``), answering to
    the names of ``host_names(host, allow_hosts)``."""
    import uvicorn

    from .app import StartGame
    from .app import create_app
    from .exercise import read_exercise

    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, not {port}")
    lim = limits or Limits()
    start, exercise = None, None
    if game and Path(game).suffix.lower() == ".json":
        exercise = read_exercise(read_text(game), game, lim.max_text)
    elif game:
        start = StartGame(Path(game).name, read_text(game))
    local = host in LOCAL_ADDRESSES
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    bound = sock.getsockname()[1]
    names = host_names(host, allow_hosts)
    urls = student_urls(host, bound) if not local else [f"http://{_as_host(host)}:{bound}/"]
    url = urls[0]
    if not local:
        print(
            f"gdl2pl studio: warning: listening on {host}, not on this machine only: anyone "
            "who can reach it can load and run games here (within the server's limits). "
            "Use --host 127.0.0.1 unless the class needs it. It answers to these names "
            f"only (add one with --allow-host): {', '.join(names)}",
            file=sys.stderr,
        )
        print("gdl2pl studio: students open, from their machines:", flush=True)
        for u in urls:
            print(f"  {u}", flush=True)
        print(
            f"gdl2pl studio: on this machine, open http://127.0.0.1:{bound}/ (Ctrl-C stops "
            "the server)",
            flush=True,
        )
    else:
        print(f"gdl2pl studio: open {url} in a web browser (Ctrl-C stops the server)", flush=True)
    app = create_app(lim, start, allowed_hosts=names, exercise=exercise)
    # log_config=None: uvicorn leaves the process's logging alone (its default dictConfig
    # closes handlers other libraries installed, such as absl's, and their streams).
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    server = uvicorn.Server(config)
    if open_browser:
        webbrowser.open(url)
    server.run(sockets=[sock])
    return 0
