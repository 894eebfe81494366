"""The adapter examples of docs/adapters.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from adapters_support import require_module

DOC = Path(__file__).resolve().parent.parent / "docs" / "adapters.md"
LIBRARIES = {
    "OpenSpiel": "pyspiel",
    "Boards": "pyspiel",
    "PettingZoo": "pettingzoo",
    "Gymnasium": "gymnasium",
    "Batches": "numpy",
}


def examples() -> dict[str, str]:
    """Each section's fenced python block, by section title."""
    text = DOC.read_text()
    found = {}
    for title, body in re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, re.S | re.M):
        block = re.search(r"```python\n(.*?)```", body, re.S)
        if block:
            found[title] = block.group(1)
    return found


def test_every_library_has_a_short_example():
    found = examples()
    assert set(found) == set(LIBRARIES)
    for code in found.values():
        assert len(code.strip().splitlines()) <= 12


@pytest.mark.parametrize("title", sorted(LIBRARIES))
def test_example_runs(title, capsys):
    require_module(LIBRARIES[title])
    exec(compile(examples()[title], f"{DOC}:{title}", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_every_example_of_the_batches_section_runs(capsys):
    """The batch, its vector environment and self-play, as docs/adapters.md shows them."""
    require_module("gymnasium")
    body = DOC.read_text().split("\n## Batches\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert len(blocks) == 3
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC}:Batches:{i}", "exec"), {})
        assert capsys.readouterr().out.strip()
