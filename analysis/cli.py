"""The handlers of ``gdl2pl analyze | explain | graph | model`` (wired in ``commands``).

Each returns the exit status; input errors are raised as ``InputError`` (or the front
end's ``GdlError``), which ``commands`` prints as one line with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gdl2pl.errors import GdlError


class InputError(GdlError):
    """Bad input on the command line: says what and where."""


def analyze(args: argparse.Namespace) -> int:
    from gdl2pl.bridge import StateMachine

    from .analyze import Budget, exit_status, format_report
    from .analyze import analyze as run

    if args.max_states < 1 or args.seconds <= 0 or args.walks < 0:
        raise InputError("--max-states and --seconds must be positive, --walks not negative")
    budget = Budget(args.max_states, args.seconds, walks=args.walks, seed=args.seed)
    with StateMachine.from_file(args.game, syntax=args.syntax) as sm:
        report = run(sm, budget)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return exit_status(report)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def explain(args: argparse.Namespace) -> int:
    from gdl2pl.bridge import StateMachine
    from gdl2pl.bridge.explain import depends_on_does, explain, parse_atom

    if args.depth < 0:
        raise InputError("--depth must be at least 0")
    with StateMachine.from_file(args.game, syntax=args.syntax) as sm:
        atom = parse_atom(sm, args.atom)
        states, joints = _states(sm, args)
        joint = None
        state = states[-1]
        if depends_on_does(sm, atom.name):
            if not joints:
                raise InputError(
                    f"{args.atom} depends on the joint move (does): give --moves; the last "
                    "joint move is then the one made in the state before it"
                )
            state, joint = states[-2], joints[-1]
        result = explain(sm, state, atom, depth=args.depth, joint_move=joint)
        _write(str(result))
        return 0 if result.holds else 1


def _states(sm: Any, args: argparse.Namespace) -> tuple[list[Any], list[list[str]]]:
    """The states along ``--moves`` (the initial one first) and the joint moves; or the
    one state of ``--state``; or the initial state."""
    from gdl2pl.bridge import GameError

    if getattr(args, "state", None):
        return [parse_state(args.state)], []
    states = [sm.initial_state]
    joints: list[list[str]] = []
    if getattr(args, "moves", None):
        for where, jm in read_moves(args.moves):
            if sm.is_terminal(states[-1]):
                raise InputError(f"{where}: move {len(joints) + 1}: the match is already over")
            try:
                states.append(sm.next_state(states[-1], jm))
            except GameError as e:
                raise InputError(f"{where}: move {len(joints) + 1}: {e}") from None
            joints.append(jm)
    return states, joints


def parse_state(text: str) -> Any:
    """A state written as a KIF list of ground fluents: ``((cell 1 1 x) (control o))``."""
    from gdl2pl.bridge import MachineState

    from gdl2pl.kif import parse_kif_term
    from gdl2pl.syntax import Const, Func, is_ground

    body = text.strip()
    if not (body.startswith("(") and body.endswith(")")):
        raise InputError(f"--state: expected a list of fluents in parentheses, got {text!r}")
    inner = body[1:-1].strip()
    fluents = []
    try:
        term = parse_kif_term(f"(state {inner})") if inner else Const("state")
    except GdlError as e:
        raise InputError(f"--state: {e}") from None
    for f in term.args if isinstance(term, Func) else ():
        if not is_ground(f):
            raise InputError(f"--state: the fluent {f} is not ground")
        fluents.append(f)
    return MachineState.from_fluents(fluents)


def read_moves(path: str) -> list[tuple[str, list[str]]]:
    """Joint moves from a JSON lines file (``-`` for stdin): each line a joint move (a list
    of KIF strings) or a match ``{"moves": [[...], ...]}``; with where each came from."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    out: list[tuple[str, list[str]]] = []
    with stream:
        for n, line in enumerate(stream, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{where}: not JSON: {e.msg}") from None
            joints = data.get("moves") if isinstance(data, dict) else [data]
            if not isinstance(joints, list) or not all(
                isinstance(jm, list) and all(isinstance(m, str) for m in jm) for jm in joints
            ):
                raise InputError(
                    f'{where}: expected a joint move ["move", ...] or {{"moves": [[...], ...]}}'
                )
            out += [(where, jm) for jm in joints]
    return out
