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
