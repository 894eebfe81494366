"""The README's Python examples print what the README says they print (``# -> value``
notes), so its outputs cannot go stale."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from conftest import REPO
from prolog_env import require_module
from prolog_env import require_prolog

README = REPO / "README.md"
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
_NOTE = re.compile(r"#\s*->\s*(.+)$")


def python_blocks() -> list[str]:
    return _BLOCK.findall(README.read_text(encoding="utf-8"))


def expected_lines(block: str) -> list[str]:
    return [m.group(1).strip() for line in block.splitlines() if (m := _NOTE.search(line))]


def test_the_readme_has_annotated_examples() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 2
    assert all(expected_lines(b) for b in blocks)


def check_example(block: str, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a page's Python ``block`` (``where``: the page and block, for tracebacks) from
    the repository's root and compare what it prints with its ``# ->`` notes."""
    require_prolog()
    if "gdl2pl.openspiel" in block:
        require_module("pyspiel")
    monkeypatch.chdir(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, where, "exec"), {})
    assert out.getvalue().splitlines() == expected_lines(block)


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_example_prints_what_the_readme_says(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_example(python_blocks()[index], f"README.md python block {index + 1}", monkeypatch)
