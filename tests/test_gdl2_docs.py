"""docs/gdl2.md's Python examples print what the page says they print (``# -> value``)."""

from __future__ import annotations

import pytest
from conftest import REPO
from test_readme import _BLOCK
from test_readme import check_example
from test_readme import expected_lines

PAGE = REPO / "docs" / "gdl2.md"


def blocks() -> list[str]:
    return _BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_annotated_examples() -> None:
    assert len(blocks()) >= 2
    assert all(expected_lines(b) for b in blocks())


@pytest.mark.parametrize("index", range(len(blocks())))
def test_example_prints_what_the_page_says(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    check_example(blocks()[index], f"docs/gdl2.md python block {index + 1}", monkeypatch)
