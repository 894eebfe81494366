"""A game's action and observation tables are a function of its rules alone (issue 52
item 1): no clock bounds the reachability analysis, its result is kept per hash of the
rules (in the process and as JSON on disk, which is not trusted), it travels with a
pickled game, and ``tables_hash`` names it."""

from __future__ import annotations

import contextlib
import json
import pickle
import stat
import warnings

import pytest
from adapters_support import OWN_GAMES
from adapters_support import repository_game
from adapters_support import require_module
from prolog_env import require_prolog

from gdl2pl.adapters import GdlGame
from gdl2pl.adapters import table_cache

NO_INPUT = OWN_GAMES / "adapter_no_input.kif"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache directory of the test's own, nothing kept in the process."""
    require_prolog()
    monkeypatch.setenv(table_cache.CACHE_VARIABLE, str(tmp_path / "tables"))
    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())
    return tmp_path / "tables"


def _load(path, **options) -> tuple[str, str, list[list[str]], int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = GdlGame(path, engine="prolog", **options)
    try:
        return (g.actions_from, g.tables_hash, [[str(m) for m in ms] for ms in g.moves],
                g.observation_size)
    finally:
        g.close()


@contextlib.contextmanager
def _deadline_at_once():
    """Every deadline the adapters set strikes after a millisecond: a machine so busy that
    no analysis bounded by a clock would finish."""
    import gdl2pl.adapters.game
    import gdl2pl.adapters.reach
    from gdl2pl.bridge import swipl

    real = swipl.interrupt_after
    mp = pytest.MonkeyPatch()
    for module in (swipl, gdl2pl.adapters.game, gdl2pl.adapters.reach):
        mp.setattr(module, "interrupt_after", lambda seconds: real(0.001), raising=False)
    try:
        yield
    finally:
        mp.undo()


@pytest.mark.parametrize("name", ["adapter_no_input", "pacman3p"])
def test_the_tables_do_not_depend_on_the_clock(cache, monkeypatch, name):
    """The same tables, and the same hash, when every deadline strikes at once: the
    analysis is bounded by inferences only (before: a 30 s clock, and at a load of 7.5
    chess got 131,072 first-seen actions instead of 3,811; with a millisecond, this game
    got first-seen numbering). pacman3p declares a base that omits fluents its rules
    reach: the observation's check against the rules is bounded the same way (before:
    by analysis_seconds, past which the declared base alone was used)."""
    path = NO_INPUT if name == "adapter_no_input" else repository_game(name)
    quiet = _load(path)
    assert quiet[0] in ("reachability", "input")
    monkeypatch.setenv(table_cache.CACHE_VARIABLE, "off")  # analysed again, not read
    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())
    with _deadline_at_once():
        hurried = _load(path, analysis_seconds=0.001)
    assert hurried == quiet


def test_tables_are_kept_on_disk_and_read_back_without_analysis(cache, monkeypatch):
    import gdl2pl.adapters.game

    first = _load(NO_INPUT)
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    data = json.loads(files[0].read_text())
    assert data["format"] == "gdl2pl reachable tables" and data["key"] == files[0].stem

    def refuse(*args, **kwargs):
        raise AssertionError("analysed again")

    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())
    monkeypatch.setattr(gdl2pl.adapters.game, "reachable_domains", refuse)
    assert _load(NO_INPUT) == first


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: "not json",
        lambda d: json.dumps({**d, "key": "0" * 64}),  # another game's
        lambda d: json.dumps({**d, "version": -1}),
        lambda d: json.dumps({**d, "roles": ["intruder"]}),
        lambda d: json.dumps({**d, "moves": [[["f", {"py": "object"}]]]}),
        lambda d: json.dumps({**d, "fluents": [["f"] * 2 + [[["g"] * 2] * 1]]})[:40],
        lambda d: json.dumps({**d, "fluents": [_deep(500)]}),
        lambda d: json.dumps({**d, "extra": 1}),
        lambda d: "[" * 100_000,
        lambda d: " " * (table_cache.MAX_FILE_BYTES + 1),
    ],
)
def test_a_spoilt_cache_file_is_ignored_and_written_again(cache, monkeypatch, spoil):
    first = _load(NO_INPUT)
    (path,) = cache.iterdir()
    good = path.read_text()
    path.write_text(spoil(json.loads(good)))
    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())
    assert _load(NO_INPUT) == first  # analysed again
    assert path.read_text() == good


def _deep(n: int) -> object:
    t: object = "x"
    for _ in range(n):
        t = ["f", t]
    return t


def test_no_cache_on_disk_when_it_is_off(cache, monkeypatch):
    monkeypatch.setenv(table_cache.CACHE_VARIABLE, "off")
    _load(NO_INPUT)
    assert not cache.exists()


def test_a_pickled_game_loads_elsewhere_without_analysing_again(cache, monkeypatch):
    """The tables and the kind travel with the game: unpickled in a process that has
    neither the game loaded nor a cache, it is not analysed (an RLlib worker's env)."""
    import gdl2pl.adapters.game

    g = GdlGame(NO_INPUT, engine="prolog")
    blob = pickle.dumps(g)
    expected = (g.tables_hash, g.kind)
    g.close()
    monkeypatch.setenv(table_cache.CACHE_VARIABLE, "off")
    monkeypatch.setattr(table_cache, "_remembered", table_cache.OrderedDict())

    def refuse(*args, **kwargs):
        raise AssertionError("analysed again")

    monkeypatch.setattr(gdl2pl.adapters.game, "reachable_domains", refuse)
    monkeypatch.setattr(GdlGame, "analyse", refuse)
    h = pickle.loads(blob)
    try:
        assert (h.tables_hash, h.kind) == expected
    finally:
        h.close()


def test_the_hash_names_the_tables():
    require_prolog()
    a = GdlGame(NO_INPUT, engine="prolog")
    b = GdlGame(NO_INPUT, engine="prolog", max_terms=1)  # first-seen numbering
    try:
        assert len(a.tables_hash) == 64 and a.tables_hash != b.tables_hash
        assert b.actions_from == "first-seen"
    finally:
        a.close()
        b.close()


def test_the_gymnasium_spec_carries_the_hash_and_checks_it():
    gymnasium = require_module("gymnasium")
    import gdl2pl.gymnasium  # noqa: F401 (registers the id)
    from gdl2pl.adapters import AdapterError

    env = gymnasium.make("gdl2pl/Gdl-v0", game=str(repository_game("buttons")))
    try:
        assert env.spec.kwargs["tables_hash"] == env.unwrapped.gdl.tables_hash
        again = gymnasium.make(env.spec)
        assert again.unwrapped.gdl.tables_hash == env.unwrapped.gdl.tables_hash
        again.close()
        with pytest.raises(AdapterError, match="tables differ"):
            gymnasium.make("gdl2pl/Gdl-v0", game=str(repository_game("buttons")),
                           tables_hash="0" * 64)
    finally:
        env.close()
