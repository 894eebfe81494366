"""The Prolog runtime as a SWI-Prolog library (issue 13): it loads in a plain ``swipl``
with warnings treated as errors, together with a translated game; it keeps the
predicates other code calls; and every exported predicate has a pldoc mode line.

``swipl --on-warning=status --on-error=status`` makes ``halt`` exit with status 1
when a warning or error was printed; the first test shows that it does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES
from conftest import REPO
from prolog_env import unavailable

from gdl2pl import read_game
from gdl2pl.translate import translate

PROLOG = REPO / "prolog"
LIBRARY_FILES = ["gdl_semantics.pl", "gdl_runtime.pl", "gdl_explain.pl"]

#: What the bridge and the Prolog files of analysis/ and adapters/ call.
RUNTIME_API = {
    "gdl_load/3", "gdl_unload/2", "gdl_roles/2", "gdl_initial_state/2", "gdl_base/2",
    "gdl_input/3", "gdl_legal/4", "gdl_legal_all/3", "gdl_next/4", "gdl_terminal/3",
    "gdl_goals/3", "gdl_state_info/3", "gdl_depth_charge/4", "gdl_playouts/5",
    "gdl_seed/2", "gdl_set_limit/3", "gdl_interrupt/0", "state_roles/2",
    "state_install/2", "state_current/2", "state_legal/3", "state_terminal/1",
    "state_goals/3", "state_next/3",
}  # fmt: skip


def swipl() -> str:
    path = shutil.which("swipl")
    if path is None:
        unavailable("swipl is not on PATH")
    return path


def run_strict(goal: str, *files: Path) -> subprocess.CompletedProcess[str]:
    """Run ``goal`` after loading ``files`` in a fresh swipl, warnings as errors."""
    args = [swipl(), "--on-warning=status", "--on-error=status", "-q"]
    for f in files:
        args += ["-g", f"use_module({_quoted(f)})"]
    args += ["-g", goal, "-t", "halt"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _quoted(p: Path) -> str:
    return "'" + str(p).replace("\\", "\\\\").replace("'", "\\'") + "'"


def library_paths() -> list[Path]:
    return [PROLOG / f for f in LIBRARY_FILES]


def test_a_warning_makes_the_exit_status_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pl"
    bad.write_text(":- module(bad, [p/1]).\np(X) :- q(Y).\nq(_).\n")
    assert run_strict("true", bad).returncode != 0


def test_library_loads_without_warnings() -> None:
    result = run_strict("true", *library_paths())
    assert result.returncode == 0, result.stderr


def test_translated_game_loads_and_plays_without_warnings(tmp_path: Path) -> None:
    text = translate(read_game(EXAMPLES / "ticTacToe.kif"), module="tictactoe").text
    game = tmp_path / "tictactoe.pl"
    game.write_text(text)
    goal = (
        f"read_file_to_string({_quoted(game)}, Text, []), "
        "gdl_runtime:gdl_load(tictactoe, Text, Roles), Roles == [xplayer, oplayer], "
        "gdl_runtime:gdl_initial_state(tictactoe, S0), length(S0, 10), "
        "gdl_runtime:gdl_seed(1, _), "
        "gdl_runtime:gdl_playouts(tictactoe, S0, 5, 20, [playouts, _, Steps]), Steps >= 25, "
        "gdl_runtime:gdl_unload(tictactoe, true), "
        # the same text consulted as a plain module file
        f"load_files({_quoted(game)}, [if(true)]), current_predicate(tictactoe:legal/2)"
    )
    result = run_strict(goal, PROLOG / "gdl_runtime.pl")
    assert result.returncode == 0, result.stderr


def test_runtime_keeps_the_api_others_call() -> None:
    expected = ",".join(sorted(RUNTIME_API))
    goal = (
        "module_property(gdl_runtime, exports(L)), "
        "forall(member(S, [" + ",".join(f"'{pi}'" for pi in sorted(RUNTIME_API)) + "]), "
        "( term_string(PI, S), memberchk(PI, L) -> true "
        "; format(user_error, 'missing ~w~n', [PI]), fail )), "
        "import(gdl_runtime:state_install/2), import(gdl_runtime:state_next/3)"
    )
    result = run_strict(goal, PROLOG / "gdl_runtime.pl")
    assert result.returncode == 0, (expected, result.stderr)


def exported_predicates() -> list[tuple[str, str, int]]:
    """(file defining it, name, arity) of every predicate the library modules export."""
    goal = (
        "forall(( member(M, [gdl_runtime, gdl_semantics, gdl_explain]), "
        "module_property(M, exports(L)), member(N/A, L), functor(H, N, A), "
        "( predicate_property(M:H, imported_from(D)) -> true ; D = M ), "
        "module_property(D, file(F)) ), format('~w\\t~w\\t~w~n', [F, N, A]))"
    )
    result = run_strict(goal, *library_paths())
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines() if line.strip()]
    return [(f, n, int(a)) for f, n, a in rows]


MODE_LINE = re.compile(r"^%!\s+([a-z]\w*)(\((.*)\))?", re.MULTILINE)


def mode_lines(text: str) -> set[tuple[str, int]]:
    """(name, arity) of every ``%!`` line of a file."""
    found = set()
    for m in MODE_LINE.finditer(text):
        args = m.group(3)
        found.add((m.group(1), 0 if args is None else args.count(",") + 1))
    return found


def test_every_exported_predicate_has_a_mode_line() -> None:
    exported = exported_predicates()
    assert len(exported) >= len(RUNTIME_API)
    documented = {f: mode_lines(Path(f).read_text()) for f, _, _ in exported}
    missing = [f"{Path(f).name}: {n}/{a}" for f, n, a in exported if (n, a) not in documented[f]]
    assert not missing


@pytest.mark.parametrize("name", LIBRARY_FILES)
def test_every_mode_line_is_followed_by_prose(name: str) -> None:
    lines = (PROLOG / name).read_text().splitlines()
    bare = []
    for i, line in enumerate(lines):
        if line.startswith("%!"):
            following = [ln for ln in lines[i + 1 : i + 6] if ln.startswith("%")]
            prose = [ln for ln in following if not ln.startswith("%!") and ln.strip("% ")]
            if not prose:
                bare.append(line)
    assert not bare


def test_no_dollar_internals_but_the_documented_one() -> None:
    calls = {
        m.group(0)
        for f in LIBRARY_FILES
        for m in re.finditer(r"'\$[a-z_]+'\s*[:(]", (PROLOG / f).read_text())
    }
    # '$destroy_module'/1: no public way to destroy a temporary module (see gdl_runtime.pl)
    assert calls <= {"'$destroy_module'("}
