"""The package as released: the sdist and the wheel build from a clean copy of the
repository, the wheel installs into a fresh virtual environment, and a match is played
from it with no source tree in sight."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest
from conftest import REPO
from prolog_env import require_module
from prolog_env import require_prolog

pytestmark = pytest.mark.slow

#: What the wheel needs at run time, taken from this environment (a fresh environment
#: would have to compile janus-swi again): each is linked into a folder of its own that
#: the fresh environment reads, so that nothing of gdl2pl itself is visible there.
RUNTIME_DEPENDENCIES = ("janus_swi", "pyparsing", "tqdm", "clingo", "cffi", "_cffi_backend")


def _tracked_tree(into: Path) -> Path:
    """The repository's files as a clean clone has them (and new ones not ignored), copied."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def _dependencies_folder(into: Path) -> Path:
    into.mkdir()
    for name in RUNTIME_DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        (into / source.name).symlink_to(source)
    return into


def test_the_wheel_plays_a_match_without_the_source_tree(tmp_path: Path) -> None:
    require_prolog()
    require_module("build")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: no list of the tracked files")
    tree = _tracked_tree(tmp_path / "clone")
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(tree)],
        capture_output=True, text=True, timeout=900,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = dist.glob("gdl2pl-*.tar.gz")
    (wheel,) = dist.glob("gdl2pl-*.whl")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("LICENSE", "prolog/gdl_runtime.pl", "gdl2pl/compiled/asp.py",
                   "gdl2pl/examples/ticTacToe.kif"):
        assert needed in names, f"the sdist lacks {needed}"

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    (site / "runtime_dependencies.pth").write_text(
        f"{_dependencies_folder(tmp_path / 'deps')}\n", encoding="utf-8"
    )
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-P", "-c",
         "import gdl2pl, gdl2pl.bridge, gdl2pl.compiled._network as n; "
         "print(gdl2pl.__file__); print(gdl2pl.bridge.__file__); print(n.__file__)"],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
    )
    assert where.returncode == 0, where.stderr[-3000:]
    assert all(line.startswith(str(site)) for line in where.stdout.split()), where.stdout

    for engine in ("prolog", "compiled"):  # the compiled one grounds with clingo
        played = subprocess.run(
            [str(env_dir / "bin" / "gdl2pl"), "play",
             str(site / "gdl2pl/examples/ticTacToe.kif"), "--seed", "3", "--engine", engine],
            cwd=elsewhere, capture_output=True, text=True, timeout=300,
        )
        assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
        assert re.search(r"^terminal; goals: xplayer \d+, oplayer \d+$", played.stdout, re.M), (
            played.stdout[-2000:]
        )
