"""The reachability analysis' results kept per game: in this process, and on disk as JSON.

A game's move and fluent tables are a function of its rules alone (``reach.py`` is bounded
by inferences, never by the clock), so they can be kept: ``rules_key(d)`` hashes the
normalized rules with the analysis' version and bound, and a result found under that key
is the result the analysis would give. Two levels:

- in this process (``remember`` / ``recall``): what a game loaded here found, or what a
  pickled game or an RLlib worker's config brought with it (``gdl2pl.adapters.GdlGame``
  ships its tables), so that a worker does not analyse the game again;
- on disk, one JSON file per key in ``cache_dir()``: ``$GDL2PL_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/gdl2pl/tables``, else ``~/.cache/gdl2pl/tables``;
  ``GDL2PL_CACHE_DIR=off`` (or empty) keeps nothing on disk.

The disk is not trusted: a file is read only up to ``MAX_FILE_BYTES``, as JSON (never a
pickle), and used only if it is exactly the shape written (its key and version, the game's
roles, terms as nested lists of names within ``MAX_TERM_DEPTH`` levels); anything else is
ignored (a miss: the analysis runs again and rewrites it). Files are written whole (a
temporary file renamed) into a directory only the user may enter; a failure to write is
not an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gdl2pl.normalize import normalize_case
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

from .reach import REACH_INFERENCES
from .reach import REACH_VERSION
from .reach import Reachable

#: The environment variable naming the cache's directory (``off`` or empty: none).
CACHE_VARIABLE = "GDL2PL_CACHE_DIR"
#: The largest file read from the cache (the amazons games' tables are about 5 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The deepest term read from the cache (the bridge refuses deeper ones too).
MAX_TERM_DEPTH = 200
#: Results kept in this process (least recently used beyond).
MAX_REMEMBERED = 64
_FORMAT = "gdl2pl reachable tables"

log = logging.getLogger(__name__)

_remembered: OrderedDict[str, Reachable] = OrderedDict()
_lock = threading.Lock()


def rules_key(d: Description) -> str:
    """The key of ``d``'s tables: a SHA-256 of its normalized rules (one spelling per
    symbol, clause by clause as KIF), the analysis' version and its inference bound."""
    h = hashlib.sha256(f"{REACH_VERSION}\n{REACH_INFERENCES}\n".encode())
    for c in normalize_case(d).clauses:
        h.update(str(c).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()


def cache_dir() -> Path | None:
    """The directory of the cache on disk, or None when it is switched off."""
    named = os.environ.get(CACHE_VARIABLE)
    if named is not None:
        return None if named.strip() in ("", "off") else Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gdl2pl" / "tables"


def remember(key: str, found: Reachable) -> None:
    """Keep ``found`` as the tables of ``key`` in this process."""
    with _lock:
        _remembered[key] = found
        _remembered.move_to_end(key)
        while len(_remembered) > MAX_REMEMBERED:
            _remembered.popitem(last=False)


def recall(key: str, roles: Sequence[Term]) -> Reachable | None:
    """The tables of ``key``: kept in this process, else read from the disk (then kept),
    else None. A result whose roles are not ``roles`` is none."""
    with _lock:
        found = _remembered.get(key)
    if found is None:
        found = _read(key, roles)
        if found is not None:
            remember(key, found)
    if found is None or set(found.moves) != set(roles):
        return None
    return found


def store(key: str, roles: Sequence[Term], found: Reachable) -> None:
    """Keep ``found`` in this process and write it to the disk (when there is one)."""
    remember(key, found)
    where = cache_dir()
    if where is None:
        return
    body = to_json(key, roles, found)
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tables-", suffix=".json", dir=where)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(body)
            os.replace(tmp, where / f"{key}.json")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        log.debug("gdl2pl tables not written to the cache %s: %s", where, e)


def to_json(key: str, roles: Sequence[Term], found: Reachable) -> str:
    """The JSON text of a result (what ``from_json`` reads back)."""
    return json.dumps({
        "format": _FORMAT,
        "version": REACH_VERSION,
        "key": key,
        "roles": [_encode(r) for r in roles],
        "moves": [sorted((_encode(m) for m in found.moves[r]), key=_order) for r in roles],
        "fluents": sorted((_encode(f) for f in found.fluents), key=_order),
    }, separators=(",", ":"))


def from_json(text: str, key: str, roles: Sequence[Term]) -> Reachable:
    """The result a JSON text holds; ``ValueError`` unless it is exactly what ``to_json``
    writes for ``key`` and ``roles``."""
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) != {
        "format", "version", "key", "roles", "moves", "fluents"
    }:
        raise ValueError("not a table of gdl2pl's")
    if (data["format"], data["version"], data["key"]) != (_FORMAT, REACH_VERSION, key):
        raise ValueError("another format, version or game")
    if [_decode(r) for r in _list(data["roles"])] != list(roles):
        raise ValueError("other roles")
    moves = _list(data["moves"])
    if len(moves) != len(roles):
        raise ValueError("moves for other roles")
    return Reachable(
        {r: frozenset(_decode(m) for m in _list(ms)) for r, ms in zip(roles, moves, strict=True)},
        frozenset(_decode(f) for f in _list(data["fluents"])),
    )


def remember_json(text: str) -> str:
    """Keep in this process the result a JSON text of ``to_json`` holds (brought by a
    pickled game or a worker's configuration); its key. ``ValueError`` if it is not
    such a text."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a table of gdl2pl's")
    key = data.get("key")
    if not isinstance(key, str) or not _is_key(key):
        raise ValueError("a table without a key")
    roles = [_decode(r) for r in _list(data.get("roles"))]
    remember(key, from_json(text, key, roles))
    return key


def _is_key(key: str) -> bool:
    return len(key) == 64 and all(c in "0123456789abcdef" for c in key)


def _read(key: str, roles: Sequence[Term]) -> Reachable | None:
    where = cache_dir()
    if where is None or not _is_key(key):
        return None
    try:
        with open(where / f"{key}.json", "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    try:
        if len(raw) > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
        return from_json(raw.decode("utf-8"), key, roles)
    except (ValueError, RecursionError) as e:  # json's and ours; UnicodeDecodeError too
        log.warning("gdl2pl: ignored the cached tables %s: %s", where / f"{key}.json", e)
        return None


def _list(x: Any) -> list[Any]:
    if not isinstance(x, list):
        raise ValueError("a list expected")
    return x


def _encode(t: Term) -> Any:
    """A ground term as JSON: a constant is its name, ``(f a b)`` the list ``["f", a, b]``."""
    if isinstance(t, Const):
        return t.name
    if isinstance(t, Func):
        return [t.name, *(_encode(a) for a in t.args)]
    raise ValueError(f"not a ground term: {t}")


def _order(x: Any) -> str:
    return json.dumps(x)


def _decode(x: Any, depth: int = 0) -> Term:
    if isinstance(x, str) and x:
        return Const(x)
    if depth >= MAX_TERM_DEPTH:
        raise ValueError(f"a term deeper than {MAX_TERM_DEPTH} levels")
    if isinstance(x, list) and x and isinstance(x[0], str) and x[0]:
        return Func(x[0], tuple(_decode(a, depth + 1) for a in x[1:]))
    raise ValueError("not a term")


__all__ = [
    "CACHE_VARIABLE",
    "MAX_FILE_BYTES",
    "cache_dir",
    "from_json",
    "recall",
    "remember",
    "remember_json",
    "rules_key",
    "store",
    "to_json",
]
