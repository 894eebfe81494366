"""Plain tables: Markdown and CSV text from a header and rows of strings."""

from __future__ import annotations

import argparse
import csv
import io
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-style Markdown table."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(r) for r in rows)])


def csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """The rows as CSV (with a header line)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue()


def rate(x: float) -> str:
    """A rate with a precision that suits its size (12,345 / 123.4 / 1.23)."""
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.1f}"
    return f"{x:.2f}"


def ratio(x: float) -> str:
    """A ratio to the reference, e.g. ``12.3x``."""
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def publish(text: str, out: str | None) -> None:
    """Print a report, and write it to ``out`` too when a file is named."""
    print(text)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


def replace_section(path: Path, heading: str, text: str) -> None:
    """Put ``text`` (a Markdown section starting with ``heading``) into the file at
    ``path``: in place of that section (up to the next ``## ``) if present, else at the
    end."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    if heading in old:
        head, rest = old.split(heading, 1)
        tail = rest.split("\n## ", 1)
        old = head + text + ("\n## " + tail[1] if len(tail) > 1 else "")
    else:
        old = old.rstrip("\n") + "\n\n" + text
    path.write_text(old, encoding="utf-8")


def section_main(
    ap: argparse.ArgumentParser, report: Callable[[argparse.Namespace], str], heading: str
) -> int:
    """A section benchmark's ``main``: with ``ap``'s options and ``--results FILE``, print
    ``report(args)`` and put it in place of its section ``heading`` of that file."""
    ap.add_argument("--results", default=None, help="replace this section of that file")
    args = ap.parse_args()
    text = report(args)
    print(text)
    if args.results:
        replace_section(Path(args.results), heading, text)
    return 0
