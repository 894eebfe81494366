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


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_example_prints_what_the_readme_says(index: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    require_prolog()
    block = python_blocks()[index]
    if "gdl2pl.openspiel" in block:
        require_module("pyspiel")
    monkeypatch.chdir(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, f"README.md python block {index + 1}", "exec"), {})
    assert out.getvalue().splitlines() == expected_lines(block)
