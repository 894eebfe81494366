"""Helpers of the adapter tests: optional libraries, shared games."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest
from conftest import shared_dir
from prolog_env import require_prolog


def require_module(name: str) -> ModuleType:
    """The module; skipped when missing, except under CI=true where the import fails."""
    require_prolog()
    if os.environ.get("CI") == "true":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def repository_game(name: str) -> Path:
    """A game of ../shared/games/ggp-repository (read in place)."""
    return shared_dir() / "games" / "ggp-repository" / f"{name}.kif"


OWN_GAMES = Path(__file__).resolve().parent / "games"
