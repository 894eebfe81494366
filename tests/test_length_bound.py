"""Game lengths claimed from an enumeration of every reachable state hold only where every
move leads one level deeper (issue 42 item 2): a game whose plays can go on for ever is
not claimed its search's depth."""

from __future__ import annotations

from adapters_support import OWN_GAMES
from adapters_support import repository_game
from prolog_env import require_prolog

from gdl2pl.adapters import GdlGame

LENGTH = OWN_GAMES / "length"


def test_an_enumeration_with_a_way_back_proves_no_length():
    """Every state of shuttle and fill_pass is enumerated, and the deepest level of the
    search is no play's length: a move goes back. (Before: "proved" 2 and 8, the search's
    depth, for games whose plays can go on for ever.)"""
    require_prolog()
    for name in ("shuttle", "fill_pass"):
        game = GdlGame(LENGTH / f"{name}.kif")
        try:
            assert game.kind.proved and not game.kind.layered
            claim = game.gdl_metadata()["max_game_length"]
            assert claim.status == "assumed" and "leads back" in claim.how, claim
        finally:
            game.close()
    game = GdlGame(repository_game("ticTacToe"))
    try:  # every move one level deeper: the deepest level is the longest play
        assert game.kind.layered
        assert game.gdl_metadata()["max_game_length"].value == 9
    finally:
        game.close()
