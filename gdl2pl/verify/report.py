"""Where results go: the ``--out`` file (appended as results arrive, put in game order at
the end, read back by ``--resume``), the reproduction files, and the terminal summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gdl2pl.jsonline import loads_line

from .games import output_name
from .outfiles import append_text
from .outfiles import write_file

Result = dict[str, Any]
FAILING = frozenset({"diverge", "engine_error", "timeout", "gdl2pl_error"})


def read_results(out: Path) -> dict[str, Result]:
    """The results saved in ``out`` by game; empty if the file does not exist. A torn last
    line (from a killed run) is ignored; any other line that is not a result as
    ``verify`` writes it raises ``ValueError`` naming the file, the line and what is
    wrong, since a run resumed from it would report what nobody verified."""
    if not out.is_file():
        return {}
    saved: dict[str, Result] = {}
    lines = out.read_text(encoding="utf-8", errors="replace").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = loads_line(line)
        except ValueError as e:
            if n == len(lines):
                continue  # the torn last line of a run that was killed
            raise ValueError(f"{out}:{n}: not a saved result: {e}") from None
        problem = result_problem(r)
        if problem is not None:
            raise ValueError(f"{out}:{n}: not a saved result: {problem}")
        saved[r["game"]] = r
    return saved


#: What a result may say of a game.
VERDICTS = frozenset({"agree", "diverge", "engine_error", "timeout", "gdl2pl_error", "skipped"})


def result_problem(r: Any) -> str | None:
    """What makes ``r`` no result as ``verify`` writes it (None if it is one)."""
    if not isinstance(r, dict):
        return "not a JSON object"
    if not isinstance(r.get("game"), str):
        return "no game name"
    if r.get("verdict") not in VERDICTS:
        return f"the verdict {r.get('verdict')!r} is none of {', '.join(sorted(VERDICTS))}"
    for key in ("matches", "steps_compared"):
        value = r.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key} is not a count: {value!r}"
    if not isinstance(r.get("error"), str | None):
        return "error is not a text"
    d = r.get("first_divergence")
    if d is not None:
        problem = _divergence_problem(d, "first_divergence")
        if problem:
            return problem
    listed = r.get("divergences")
    if listed is not None:
        if not isinstance(listed, list):
            return "divergences is not a list"
        for n, x in enumerate(listed):
            problem = _divergence_problem(x, f"divergences[{n}]")
            if problem:
                return problem
    counts = r.get("differences_by_kind", {})
    if not isinstance(counts, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in counts.values()
    ):
        return "differences_by_kind is not a count per kind"
    steps = r.get("diverging_steps", 0)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        return f"diverging_steps is not a count: {steps!r}"
    return None


def _divergence_problem(d: Any, name: str) -> str | None:
    if not isinstance(d, dict):
        return f"{name} is not an object"
    for key in ("match", "step"):
        if not isinstance(d.get(key), int) or isinstance(d.get(key), bool):
            return f"{name}.{key} is not a number"
    diffs = d.get("differences")
    if not isinstance(diffs, list) or not all(
        isinstance(x, dict) and isinstance(x.get("field"), str) for x in diffs
    ):
        return f"{name}.differences is not a list of differences"
    return None


def append_result(out: Path, r: Result) -> None:
    """Add one result to ``out`` at once (so an interrupted run loses nothing)."""
    append_text(out, json.dumps(r, separators=(",", ":")) + "\n")


def rewrite_in_order(out: Path, results: list[Result]) -> None:
    """Replace ``out`` by ``results`` in the given (game) order."""
    write_file(out, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in results))


def repro_name(rel: str) -> str:
    """The reproduction file's name for a game named ``rel`` (path below its directory):
    one name per game (see ``output_name``)."""
    return output_name(rel) + ".moves.jsonl"


def write_repro(folder: Path, rel: str, divergence: dict[str, Any]) -> Path:
    """Write the divergence's move prefix as a ``gdl2pl replay`` input file; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / repro_name(rel)
    write_file(path, json.dumps({"moves": divergence["moves"]}) + "\n")
    return path


def shown_name(name: str) -> str:
    """A file name as the terminal may show it: control characters (a newline, an escape)
    written as Python escapes, so a name cannot forge or hide lines of the report."""
    return name if name.isprintable() else repr(name)[1:-1]


def _field(x: dict[str, Any]) -> str:
    """A difference's field as the summary names it (``state (duplicate)``)."""
    kind = x.get("kind", "differs")
    return x["field"] if kind == "differs" else f"{x['field']} ({kind})"


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def summary_table(results: list[Result]) -> str:
    """One line per game (verdict, matches, steps compared, where it diverged), then the
    totals."""
    width = min(60, max([len(shown_name(r["game"])) for r in results] + [4]))
    lines = [f"{'game':<{width}}  {'verdict':<12}  {'matches':>7}  {'steps':>6}  first divergence"]
    for r in results:
        d = r.get("first_divergence")
        kinds = r.get("differences_by_kind")
        where = (
            f"{r.get('diverging_steps', 0)} steps: "
            + ", ".join(f"{kind} {n}" for kind, n in kinds.items())
            if kinds
            else f"match {d['match']} step {d['step']}: "
            + ", ".join(sorted({_field(x) for x in d["differences"]}))
            if d
            else _cut(shown_name(r.get("error") or ""), 60)
        )
        lines.append(
            f"{_cut(shown_name(r['game']), width):<{width}}  {r['verdict']:<12}  "
            f"{r.get('matches', 0):>7}  {r.get('steps_compared', 0):>6}  {where}"
        )
    verdicts: dict[str, int] = {}
    for r in results:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    steps = sum(r.get("steps_compared", 0) for r in results)
    lines.append(
        f"{len(results)} games, {steps} steps compared: "
        + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
    )
    return "\n".join(lines)


def details(r: Result) -> str:
    """The full story of one failing game: its error, and each difference with gdl2pl's
    reason; each line as the terminal may show it (``shown_name``: what the engine and
    the game said is quoted, control characters and all)."""
    out = [f"{shown_name(r['game'])}: {r['verdict']}"]
    if r.get("error"):
        out.append(f"  error: {r['error']}")
    listed = r.get("divergences")
    if isinstance(listed, list):
        total = r.get("diverging_steps", len(listed))
        counts = r.get("differences_by_kind") or {}
        if total:
            out.append(
                f"  {total} steps diverge, with differences in: "
                + ", ".join(f"{k} {n}" for k, n in counts.items())
            )
        out.extend(f"  {fault} (skipped)" for fault in r.get("protocol_faults", []))
        for d in listed:
            out.extend(_divergence_lines(d))
        if total > len(listed):
            out.append(f"  ... {total - len(listed)} more, counted above")
        out.extend(f"  note: {n}" for n in r.get("notes", []))
    elif r.get("first_divergence"):
        out.extend(_divergence_lines(r["first_divergence"]))
    if r.get("reproduction_error"):
        out.append(f"  {r['reproduction_error']}")
    if r.get("reproduction"):
        out.append(f"  reproduce: gdl2pl replay {r['game']} < {r['reproduction']}")
    return "\n".join(shown_name(line) for line in out)


def _divergence_lines(d: dict[str, Any]) -> list[str]:
    """One divergence: where, then each difference with gdl2pl's reason."""
    out = [f"  match {d['match']} step {d['step']}, after {len(d['moves'])} joint moves"]
    for x in d["differences"]:
        role = f" of {x['role']}" if x["role"] else ""
        out.append(f"  {_field(x)}{role}:")
        kind = x.get("kind")
        if kind == "duplicate":
            out.append(f"    listed more than once by the engine: {x['only_engine']}")
        elif kind == "unsorted":
            out.append(f"    out of order in the engine's list: {x['only_engine']}")
        elif kind == "malformed":
            out.append(f"    not a record: {'; '.join(x['only_engine'])}")
        else:
            out.append(f"    only gdl2pl: {x['only_gdl2pl']}")
            out.append(f"    only engine: {x['only_engine']}")
        if x.get("why"):
            out.append("    why:")
            out.extend(f"      {line}" for line in x["why"].splitlines())
    return out
