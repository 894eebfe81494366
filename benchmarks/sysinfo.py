"""A description of the machine and software a benchmark ran on."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (the platform's idea of it elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def prolog_version() -> str:
    """The version of the SWI-Prolog janus runs (this starts Prolog)."""
    from gdl2pl.bridge import runtime

    v = int(runtime().query_once("current_prolog_flag(version, V)")["V"])
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def source_revision() -> str:
    """The git commit of the source tree (read only), with "+dirty" if it has changes."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine_header() -> list[tuple[str, str]]:
    """(label, value) pairs: date, CPU, cores, Python, SWI-Prolog, source revision."""
    return [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("CPU", cpu_model()),
        ("cores", str(os.cpu_count())),
        ("Python", platform.python_version()),
        ("SWI-Prolog", prolog_version()),
        ("gdl2pl revision", source_revision()),
    ]


def header_markdown(pairs: list[tuple[str, str]]) -> str:
    """The header as a Markdown bullet list."""
    return "\n".join(f"- {label}: {value}" for label, value in pairs)
