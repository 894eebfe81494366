"""docs/tutorial.md runs: every ``$ command`` of its console blocks is run and its output
compared with the text that follows it, so the tutorial cannot go stale.

``gdl2pl ...`` commands run through ``gdl2pl.cli.main`` (stdout, then stderr, then
``[exit status N]`` when N is not 0); ``swipl ...`` runs SWI-Prolog in a subprocess (shown
the same way); ``cat FILE`` prints the file; ``mkdir -p DIR`` makes a folder. Commands run
in a scratch directory that links to every top-level entry of the source tree but
``build`` (the folder, ignored by git, where the tutorial writes its files: a student who
follows it leaves no untracked file in the checkout), so a file a command writes (``-o
build/buttons.pl``) lands there, not in the tree. To rewrite the outputs
after a deliberate change: ``GDL2PL_UPDATE_TUTORIAL=1 pytest tests/test_tutorial.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from prolog_env import require_prolog
from prolog_env import unavailable

from gdl2pl.cli import main

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"```console\n(.*?)```", re.DOTALL)


def commands(text: str) -> list[tuple[str, str]]:
    """Every (command, expected output) of the console blocks, in order."""
    out: list[tuple[str, str]] = []
    for block in BLOCK.findall(text):
        for chunk in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, expected = chunk.partition("\n")
            out.append((command, expected))
    return out


def run(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    argv = shlex.split(command)
    if argv[0] == "cat":
        return (ROOT / argv[1]).read_text(encoding="utf-8")
    if argv[:2] == ["mkdir", "-p"]:
        Path(argv[2]).mkdir(parents=True, exist_ok=True)  # in the scratch directory
        return ""
    if argv[0] == "swipl":
        swipl = shutil.which("swipl")
        if swipl is None:
            unavailable("no swipl on PATH")
        done = subprocess.run([swipl, *argv[1:]], capture_output=True, text=True, timeout=120)
        status = f"[exit status {done.returncode}]\n" if done.returncode else ""
        return done.stdout + done.stderr + status
    assert argv[0] == "gdl2pl", command
    capsys.readouterr()
    status = main(argv[1:])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    if status:
        text += f"[exit status {status}]\n"
    return text


#: The one folder the tutorial writes in, git-ignored: the scratch tree has its own.
OUTPUT = "build"


def scratch_tree(tmp: Path) -> Path:
    """A directory linking to every top-level entry of the source tree but ``OUTPUT``."""
    for entry in ROOT.iterdir():
        if entry.name != OUTPUT:
            (tmp / entry.name).symlink_to(entry)
    return tmp


def test_the_tutorial_writes_only_where_git_ignores() -> None:
    """Every file a command of the tutorial writes (``-o FILE``) is under ``build/``,
    which git ignores: a student who follows it from a checkout leaves no untracked file
    (``-o buttons.pl`` once did)."""
    outputs = []
    for command, _ in commands(TUTORIAL.read_text(encoding="utf-8")):
        argv = shlex.split(command)
        outputs += [argv[i + 1] for i, a in enumerate(argv) if a in ("-o", "--output")]
    assert outputs
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert f"{OUTPUT}/" in ignored
    for out in outputs:
        assert Path(out).parts[0] == OUTPUT and len(Path(out).parts) > 1, out


def test_tutorial_commands(capsys, monkeypatch, tmp_path) -> None:
    require_prolog()
    monkeypatch.chdir(scratch_tree(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    text = TUTORIAL.read_text(encoding="utf-8")
    pairs = commands(text)
    assert len(pairs) >= 20
    actual = [(command, run(command, capsys)) for command, _ in pairs]
    if os.environ.get("GDL2PL_UPDATE_TUTORIAL") == "1":
        blocks = iter(BLOCK.findall(text))
        results = iter(actual)

        def fill(match: re.Match[str]) -> str:
            block = next(blocks)
            n = len(re.findall(r"^\$ ", block, flags=re.MULTILINE))
            body = "".join(f"$ {c}\n{o}" for c, o in (next(results) for _ in range(n)))
            return f"```console\n{body}```"

        TUTORIAL.write_text(BLOCK.sub(fill, text), encoding="utf-8")
        pytest.skip("tutorial outputs rewritten; run again to compare")
    for (command, expected), (_, got) in zip(pairs, actual, strict=True):
        assert got == expected, f"$ {command}"
