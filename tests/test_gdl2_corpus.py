"""The GDL-II games of the Dresden GGP GameController's collection, read as their authors
meant and played against gdl2pl's own manager, which speaks to players as the
GameController does.

The games are others' data and are not in the repository: ``GDL2_CORPUS`` names the
folder that holds them (the collection's ``games_gdl`` folder, one sub-folder per game,
e.g. from github.com/SafetyInObscurity/ggp-gamecontroller, ``testdata/games/games_gdl``).
They are an opt-in suite (marker ``external_corpus``, left out of the default run and of
CI, which cannot hold others' files): ``GDL2_CORPUS=DIR pytest -m external_corpus``. Asked
for without the folder, they fail under ``CI=true`` and are skipped otherwise. Our own
GDL-II games (tests/games/gdl2/) test the same behaviours in every run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import REPO
from prolog_env import require_prolog
from prolog_env import unavailable

from gdl2pl.bridge import swipl as engine
from gdl2pl.check import check_description
from gdl2pl.ggp.manager import run_match
from gdl2pl.ggp.player import GamePlayer
from gdl2pl.ggp.player import Reply
from gdl2pl.ggp.server import serving
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.load import read_game

sys.path.insert(0, str(REPO / "benchmarks"))

import gdl2_corpus

pytestmark = pytest.mark.external_corpus


def corpus() -> Path:
    folder = os.environ.get("GDL2_CORPUS")
    if not folder or not Path(folder).is_dir():
        unavailable("GDL2_CORPUS does not name the GameController's games_gdl folder")
    return Path(folder)  # type: ignore[arg-type]


def game(name: str) -> Path:
    path = corpus() / name
    if not path.is_file():
        unavailable(f"{path} is missing from GDL2_CORPUS")
    return path


@pytest.mark.parametrize(
    ("name", "readings"),
    [
        ("montyhall/montyhall.gdl", {"does-in-percept", "sees-random"}),
        ("mastermind/mastermind.gdl", {"does-in-percept", "sees-random"}),
        ("transit/transit.gdl", {"next-in-sees"}),
        ("vis_pacman3p/vis_pacman3p.gdl", {"next-in-sees"}),
        (
            "blind_breakthrough_5x5/blind_breakthrough_5x5.gdl",
            {"sees-any-role", "keyword-in-percept", "next-in-sees"},
        ),
    ],
)
def test_the_older_dialects_are_read_with_warnings_that_say_how(
    name: str, readings: set[str]
) -> None:
    path = game(name)
    found = check_description(read_game(path), str(path))
    assert [f for f in found if f.is_error] == []
    assert {f.code for f in found if f.code in gdl2_corpus.DIALECTS} == readings


def test_sees_in_a_goal_rule_is_still_refused_with_its_place() -> None:
    path = game("mastermind/mastermind.kif")
    errors = [f for f in check_description(read_game(path), str(path)) if f.is_error]
    assert {f.code for f in errors} == {"sees-in-body"}
    assert all(f.pos is not None and f.pos.line > 0 and f.pos.column > 0 for f in errors)


class _Clocked(GamePlayer):
    """A gdl2pl player that records each play message, its reply and how long it took."""

    def __init__(self, kind: str, seed: int) -> None:
        super().__init__(lambda: make_strategy(kind, seed), name=kind, margin=0.2)
        self.plays: list[tuple[str, str, float]] = []

    def handle(self, text: str, received: float | None = None) -> Reply:
        import time

        start = time.monotonic()
        reply = super().handle(text, start)
        if text.lower().startswith("(play"):
            self.plays.append((text, reply.body, time.monotonic() - start))
        return reply


@pytest.mark.parametrize(
    ("name", "kinds", "clock", "steps"),
    [
        # the belief holds the terminal state in which the guess was right
        ("guessSix/guessSix.gdl", ("mcts",), 1, 100),
        ("montyhall/montyhall.gdl", ("mcts",), 1, 100),
        # the exact belief has thousands of states after five turns
        ("kriegTTT_5x5/kriegTTT_5x5.gdl", ("mcts", "random"), 2, 10),
        ("kriegTTT_5x5/kriegTTT_5x5.gdl", ("random", "mcts"), 2, 10),
        # sees rules whose role nothing binds: read as every role (issue 51)
        ("blind_breakthrough_5x5/blind_breakthrough_5x5.gdl", ("mcts", "random"), 2, 10),
    ],
)
def test_matches_get_a_legal_move_every_turn_within_the_clock(
    name: str, kinds: tuple[str, ...], clock: int, steps: int
) -> None:
    path = game(name)
    require_prolog()
    engine.attach_thread()
    players = [_Clocked(k, seed) for seed, k in enumerate(kinds, 7)]
    with serving(players) as servers:
        rec = run_match(
            read_game(path),
            [s.url for s in servers],
            start_clock=10,
            play_clock=clock,
            seed=2,
            max_steps=steps,
        )
    cut = f"no terminal state after {steps} steps"
    assert rec["isCompleted"] or rec.get("abortReason") == cut, rec.get("abortReason")
    seats = [i for i, url in enumerate(rec["playerURLs"]) if url is not None]
    for step, errors in enumerate(rec["errors"][1:], 1):  # [0]: the start, per player
        assert [errors[i] for i in seats] == [""] * len(seats), f"step {step}: {errors}"
    for player in players:
        assert player.plays
        for text, body, took in player.plays:
            assert body != "nil" and not body.startswith("error"), (text, body)
            assert took < clock, (text, body, took)


def test_the_corpus_section_replaces_its_old_self_in_the_results(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\n## A\n\na\n\n## GDL-II corpus\n\nold\n\n## B\n\nb\n")
    rows = [gdl2_corpus.Row("x/x.gdl", "ok", "yes", "yes", "whole match")]
    gdl2_corpus.write_section(results, gdl2_corpus.section(rows, "somewhere", "--max-steps 1"))
    text = results.read_text()
    assert text.startswith("# Results\n\n## A\n\na\n\n## GDL-II corpus\n\n")
    assert "old" not in text and text.endswith("\n## B\n\nb\n")
    assert "| x/x.gdl | ok | yes | yes | whole match |" in text
    assert "1 GDL-II files: 1 pass the check, 1 load, 1 play" in text
