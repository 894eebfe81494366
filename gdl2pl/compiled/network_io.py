"""A ``Network`` written to a folder and read back: how a grounding worker hands its
network to the process that plays (``compiled/build.py``).

The integer arrays go as raw C ints (``array('i')``), everything else as one JSON
document: raw forms (a constant's text, or a compound as a list ``[name, arg...]``),
numbers and lists only. Nothing is ever unpickled or evaluated; reading checks the
document's shape and the arrays' sizes, and the C evaluator checks every index again.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

from .errors import CompileRefusedError
from .network import GroundingStats
from .network import Network

#: The arrays of a network, in the order they are written.
ARRAYS = ("rule_start", "lit_start", "lits", "state_program", "move_program")

#: The JSON document's name, and its version (a reader refuses another).
DOCUMENT = "network.json"
VERSION = 2


def _json_raw(raw: Any) -> Any:
    return list(map(_json_raw, raw)) if isinstance(raw, tuple) else raw


def _raw(x: Any, depth: int = 0) -> Any:
    """A raw form from its JSON form: text stays, a list is a compound (a tuple)."""
    if isinstance(x, str):
        return x
    if isinstance(x, list) and x and depth < 200 and all(isinstance(a, (str, list)) for a in x):
        return tuple(_raw(a, depth + 1) for a in x)
    raise CompileRefusedError("the grounding worker's network is malformed (a term)")


def write_network(net: Network, folder: Path) -> None:
    """Write ``net`` into ``folder`` (which exists and is private to this build)."""
    for name in ARRAYS:
        values = getattr(net, name)
        data = values if isinstance(values, array) else array("i", values)
        (folder / f"{name}.bin").write_bytes(data.tobytes())
    s = net.stats
    doc = {
        "version": VERSION,
        "n_fluents": net.n_fluents,
        "n_moves": net.n_moves,
        "n_atoms": net.n_atoms,
        "legal": net.legal,
        "next": net.next,
        "terminal": net.terminal,
        "goals": [[[a, _json_raw(v)] for a, v in vs] for vs in net.goals],
        "sees": [[[a, _json_raw(p)] for a, p in ps] for ps in net.sees],
        "fluents": [_json_raw(f) for f in net.fluents],
        "moves": [[r, _json_raw(m)] for r, m in net.moves],
        "init": net.init,
        "stats": [s.seconds, s.facts, s.rules, [list(p) for p in s.phases],
                  [list(p) for p in s.relations]],
    }
    (folder / DOCUMENT).write_text(json.dumps(doc), encoding="utf-8")


def _ints(x: Any, what: str) -> list[int]:
    if not isinstance(x, list) or not all(type(i) is int for i in x):
        raise CompileRefusedError(f"the grounding worker's network is malformed ({what})")
    return x


def _pairs(x: Any, what: str) -> list[tuple[int, Any]]:
    if not isinstance(x, list) or not all(isinstance(p, list) and len(p) == 2 for p in x):
        raise CompileRefusedError(f"the grounding worker's network is malformed ({what})")
    return [(p[0], p[1]) for p in x]


def read_network(folder: Path) -> Network:
    """The network a worker wrote into ``folder``; ``CompileRefusedError`` if what is
    there is not one."""
    try:
        doc = json.loads((folder / DOCUMENT).read_text(encoding="utf-8"))
        arrays = {}
        for name in ARRAYS:
            data = array("i")
            data.frombytes((folder / f"{name}.bin").read_bytes())
            arrays[name] = data
    except (OSError, ValueError) as e:
        raise CompileRefusedError(f"the grounding worker's network cannot be read: {e}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise CompileRefusedError("the grounding worker's network is of another version")
    try:
        seconds, facts, rules, phases, relations = doc["stats"]
        legal = [
            [(a, m) for a, m in _pairs(ms, "legal")] for ms in doc["legal"]
        ]
        goals = [[(a, _raw(v)) for a, v in _pairs(vs, "goals")] for vs in doc["goals"]]
        sees = [[(a, _raw(p)) for a, p in _pairs(ps, "sees")] for ps in doc["sees"]]
        moves = [(r, _raw(m)) for r, m in _pairs(doc["moves"], "moves")]
        return Network(
            n_fluents=int(doc["n_fluents"]),
            n_moves=int(doc["n_moves"]),
            n_atoms=int(doc["n_atoms"]),
            legal=legal,
            next=[(a, f) for a, f in _pairs(doc["next"], "next")],
            terminal=int(doc["terminal"]),
            goals=goals,
            sees=sees,
            fluents=[_raw(f) for f in doc["fluents"]],
            moves=moves,
            init=_ints(doc["init"], "init"),
            stats=GroundingStats(
                float(seconds), int(facts), int(rules),
                [(str(n), float(t)) for n, t in phases],
                [(str(n), int(c)) for n, c in relations],
            ),
            **arrays,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise CompileRefusedError(f"the grounding worker's network is malformed ({e})") from None
