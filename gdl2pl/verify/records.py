"""Comparing two engines' records of one state (the reference JSON-lines format).

Strings compare case-insensitively and ignoring white space, as the reference README says:
``(cell 1 1 X)`` equals ``( CELL 1  1 x )``; differences are reported in each side's own
spelling. Pure functions, no reasoner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]
FIELDS = ("state", "legal", "terminal", "goals")

_SPACE = re.compile(r"\s+")
_INNER = re.compile(r"\(\s+|\s+\)")


def canonical(kif: str) -> str:
    """``kif`` lowercased, with single spaces and none just inside parentheses."""
    s = _SPACE.sub(" ", kif.strip().lower())
    return _INNER.sub(lambda m: m.group(0).strip(), s)


@dataclass(frozen=True)
class Difference:
    """One field of one state on which the engines disagree. ``only_gdl2pl`` and
    ``only_engine`` hold the facts (KIF, or a value as text) one side has, each side in
    its own spelling: gdl2pl's is the game's. ``kind`` is ``"differs"``,
    ``"duplicate"`` for facts the engine lists more than once (in ``only_engine``),
    ``"unsorted"`` for a list out of the format's order (``only_engine``: the first two
    facts out of order), or ``"malformed"`` for a record that is not one (the problem in
    ``only_engine``)."""

    field: str
    role: str | None
    only_gdl2pl: list[str]
    only_engine: list[str]
    why: str = ""
    kind: str = "differs"

    def as_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "kind": self.kind,
            "role": self.role,
            "only_gdl2pl": self.only_gdl2pl,
            "only_engine": self.only_engine,
            "why": self.why,
        }


class MalformedRecord(ValueError):
    """An engine record that lacks a field or has one of the wrong type."""


def _strings(rec: Record, key: str) -> list[str]:
    xs = rec.get(key)
    if not isinstance(xs, list) or not all(isinstance(x, str) for x in xs):
        raise MalformedRecord(f"'{key}' must be a list of strings")
    return xs


def _by_role(rec: Record, key: str) -> dict[str, Any]:
    xs = rec.get(key)
    if not isinstance(xs, dict):
        raise MalformedRecord(f"'{key}' must be an object with one entry per role")
    return {canonical(str(r)): v for r, v in xs.items()}


def _set_difference(
    name: str, role: str | None, mine: list[str], theirs: list[str]
) -> list[Difference]:
    """The facts one side has and the other lacks (compared as ``canonical`` texts, each
    reported as its side wrote it), the engine's facts listed twice (a set that holds a
    fact twice is a bug of its own, which comparing sets would hide), and the first two
    facts the engine lists out of order (the format asks sorted lists)."""
    ours = {canonical(x): x for x in mine}
    seen: dict[str, str] = {}
    twice: list[str] = []
    for x in theirs:
        c = canonical(x)
        if c in seen:
            twice.append(x)
        else:
            seen[c] = x
    diffs = []
    if twice:
        diffs.append(Difference(name, role, [], sorted(twice), kind="duplicate"))
    keys = [canonical(x) for x in theirs]
    for a, b, x, y in zip(keys, keys[1:], theirs, theirs[1:], strict=False):
        if b < a:  # the format lists facts sorted (as canonical text): the first pair out
            diffs.append(Difference(name, role, [], [x, y], kind="unsorted"))
            break
    if ours.keys() != seen.keys():
        diffs.append(
            Difference(
                name,
                role,
                sorted(ours[c] for c in ours.keys() - seen.keys()),
                sorted(seen[c] for c in seen.keys() - ours.keys()),
            )
        )
    return diffs


def _value(v: Any) -> list[str]:
    return [] if v is None else [str(v).lower()]


def compare(mine: Record, theirs: Record) -> list[Difference]:
    """The differences between gdl2pl's record ``mine`` and the engine's ``theirs`` for the
    same state, in field order (state, legal per role, terminal, goals per role); an error
    record matches only an error record. Raises ``MalformedRecord`` if ``theirs`` is not a
    well-formed record."""
    if not isinstance(theirs, dict):
        raise MalformedRecord("a record must be a JSON object")
    if "error" in mine or "error" in theirs:
        if ("error" in mine) == ("error" in theirs):
            return []
        return [
            Difference(
                "error",
                None,
                [str(mine["error"])] if "error" in mine else [],
                [str(theirs["error"])] if "error" in theirs else [],
            )
        ]
    diffs = _set_difference("state", None, mine["state"], _strings(theirs, "state"))
    legal = _by_role(theirs, "legal")
    for role, moves in mine["legal"].items():
        got = legal.get(canonical(role), [])
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            raise MalformedRecord(f"'legal' of {role} must be a list of strings")
        diffs += _set_difference("legal", role, moves, got)
    extra = set(legal) - {canonical(r) for r in mine["legal"]}
    if extra:
        diffs.append(Difference("legal", None, [], sorted(f"role {r}" for r in extra)))
    terminal = theirs.get("terminal")
    if not isinstance(terminal, bool):
        raise MalformedRecord("'terminal' must be true or false")
    if terminal != mine["terminal"]:
        diffs.append(
            Difference("terminal", None, [str(mine["terminal"]).lower()], [str(terminal).lower()])
        )
    goals = _by_role(theirs, "goals")
    for role, value in mine["goals"].items():
        got = goals.get(canonical(role))
        if got is not None and (isinstance(got, bool) or not isinstance(got, int)):
            raise MalformedRecord(f"goal of {role} must be an integer or null")
        if got != value:
            diffs.append(Difference("goals", role, _value(value), _value(got)))
    return diffs
