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
    "RLlib": "ray.rllib",
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


REPO = DOC.parent.parent
#: The pages a reader meets pyspiel.load_game("gdl", ...) in.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _first_registry_load(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if re.search(r'load_game\("gdl', line)), None)


def test_the_first_registry_load_of_each_page_says_the_import_comes_first():
    """pyspiel.load_game("gdl", ...) fails with OpenSpiel's "Unknown game 'gdl'" unless
    gdl2pl.openspiel was imported: where a page (or the modules' own docs) first shows
    it, the import is said to come first, in that line or the two before."""
    require_module("pyspiel")
    import gdl2pl.openspiel
    import gdl2pl.openspiel.imperfect

    texts = {str(p): p.read_text() for p in PAGES}
    for module in (gdl2pl.openspiel, gdl2pl.openspiel.imperfect):
        texts[module.__name__] = module.__doc__ or ""
    shown = 0
    for where, text in texts.items():
        lines = text.splitlines()
        i = _first_registry_load(lines)
        if i is None:
            continue
        shown += 1
        before = " ".join(lines[max(0, i - 2) : i + 1])
        assert "import gdl2pl.openspiel" in before, (where, lines[i])
    assert shown >= 4  # README, docs/adapters.md, docs/gdl2.md, the modules


def test_load_times_say_which_engine():
    """"checkers loads in under 2 s" holds on the reasoner (and on auto, which grounds
    in the background): the compiled engine grounds it first, for several times as
    long, and the page says so with the network's size."""
    text = " ".join(DOC.read_text().split())
    sentence = next(s for s in re.split(r"(?<=\.) ", text) if "checkers loads" in s)
    assert "On the reasoner" in text[: text.index(sentence)][-200:] + sentence
    after = text[text.index(sentence) :][:700]
    assert 'engine="auto"' in after and "worker process" in after
    assert 'engine="compiled"' in after
    assert re.search(r"checkers[-\w]*' [\d,]+ ground rules", after), after


def test_every_example_of_the_batches_section_runs(capsys):
    """The batch, its vector environment and self-play, as docs/adapters.md shows them."""
    require_module("gymnasium")
    body = DOC.read_text().split("\n## Batches\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert len(blocks) == 3
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC}:Batches:{i}", "exec"), {})
        assert capsys.readouterr().out.strip()
