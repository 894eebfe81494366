"""The handlers of ``gdl2pl analyze | explain | graph | model`` (wired in ``commands``).

Each returns the exit status; input errors are raised as ``InputError`` (or the front
end's ``GdlError``), which ``commands`` prints as one line with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gdl2pl.command_checks import checked_game
from gdl2pl.errors import GdlError
from gdl2pl.jsonline import loads_line


class InputError(GdlError):
    """Bad input on the command line: says what and where."""


def analyze(args: argparse.Namespace) -> int:
    from gdl2pl.bridge import StateMachine

    from .analyze import Budget
    from .analyze import analyze as run
    from .analyze import exit_status
    from .analyze import format_report

    if args.max_states < 1 or args.seconds <= 0 or args.walks < 0:
        raise InputError("--max-states and --seconds must be positive, --walks not negative")
    budget = Budget(args.max_states, args.seconds, walks=args.walks, seed=args.seed)
    checked_game(args)
    with StateMachine.from_file(args.game, syntax=args.syntax) as sm:
        if not sm.roles:
            raise InputError(f"{args.game}: not a game: it defines no role")
        report = run(sm, budget)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return exit_status(report)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


#: How the position of a syntax error in ``--state`` names its source.
STATE_SOURCE = "<state>"


def explain(args: argparse.Namespace) -> int:
    from gdl2pl.bridge import StateMachine
    from gdl2pl.explain import explain
    from gdl2pl.explain.proof import depends_on_does
    from gdl2pl.explain.proof import parse_atom

    if args.depth < 0:
        raise InputError("--depth must be at least 0")
    checked_game(args)
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
    """A state written as a KIF list of ground fluents: ``((cell 1 1 x) (control o))``. A
    malformed text raises ``GdlSyntaxError`` positioned in it (file ``<state>``)."""
    from gdl2pl.bridge import MachineState
    from gdl2pl.kif import parse_kif_term_list
    from gdl2pl.syntax import is_ground

    fluents = parse_kif_term_list(text, STATE_SOURCE)
    for f in fluents:
        if not is_ground(f):
            raise InputError(f"--state: the fluent {f} is not ground")
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
                data = loads_line(line)  # nesting bounded before parsing
            except ValueError as e:
                raise InputError(f"{where}: not JSON: {e}") from None
            joints = data.get("moves") if isinstance(data, dict) else [data]
            if not isinstance(joints, list) or not all(
                isinstance(jm, list) and all(isinstance(m, str) for m in jm) for jm in joints
            ):
                raise InputError(
                    f'{where}: expected a joint move ["move", ...] or {{"moves": [[...], ...]}}'
                )
            out += [(where, jm) for jm in joints]
    return out


def graph(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gdl2pl.load import read_game

    from .relgraph import GraphvizMissingError
    from .relgraph import relation_graph
    from .relgraph import to_dot
    from .relgraph import to_mermaid
    from .relgraph import to_svg

    checked_game(args, shows_errors="drawn anyway: the graph shows where such errors lie")
    g = relation_graph(read_game(args.game, syntax=args.syntax), Path(args.game).name)
    if args.format == "svg":
        try:
            _write(to_svg(g))
        except GraphvizMissingError as e:
            raise InputError(str(e)) from None
    else:
        _write(to_dot(g) if args.format == "dot" else to_mermaid(g))
    return 0


def model(args: argparse.Namespace) -> int:
    from gdl2pl.load import read_game
    from gdl2pl.pipeline import compile_game
    from gdl2pl.syntax import Description

    from . import model as m

    program = read_game(args.file, syntax=args.syntax)
    named = [n.strip() for n in (args.inputs or "").split(",") if n.strip()]
    check_program(program, args.file)
    clauses = list(program.clauses)
    if args.input:
        facts = read_game(args.input, syntax="kif")
        try:
            m.check_input(facts, m.input_relations(program, named), args.input)
        except m.ModelError as e:
            raise InputError(str(e)) from None
        clauses += facts.clauses
    whole = compile_game(Description(tuple(clauses), program.source), translate=False).normalized
    inputs = m.input_relations(program, named) if (args.input or named) else frozenset()
    if args.herbrand:
        return _print_herbrand(m.herbrand(whole), args.json)
    try:
        return _print_model(args, m, whole, inputs)
    except m.ModelError as e:
        raise InputError(str(e)) from None


def _print_model(args: argparse.Namespace, m: Any, whole: Any, inputs: Any) -> int:
    from pathlib import Path

    from gdl2pl.bridge import StateMachine

    rels = m.relations(whole)
    is_game = ("role", 1) in rels
    if (args.state or args.moves) and not is_game:
        raise InputError(f"{args.file} is not a game (no role): --state/--moves do not apply")
    with StateMachine.from_description(whole, name=Path(args.file).name) as sm:
        state: Any = ()
        joint: Any = ()
        if args.state or args.moves:
            states, joints = _states(sm, args)
            state = states[-1]
            if joints:
                state, joint = states[-2], [sm.term(j) for j in joints[-1]]
            inputs = inputs | {("true", 1), ("does", 2)}
        result = m.evaluate(sm, rels, state, joint, inputs)
    shown = result.output() if inputs else result.relations
    if args.json:
        print(json.dumps({name: atoms for (name, _), atoms in shown.items()}))
    else:
        for (name, arity), atoms in shown.items():
            print(f"% {name}/{arity}: {len(atoms)} atom{'s' if len(atoms) != 1 else ''}")
            for a in atoms:
                print(a)
    return 0


def check_program(program: Any, path: str) -> None:
    from . import model as m

    try:
        m.check_program(program, path)
    except m.ModelError as e:
        raise InputError(f"not a safe, stratified program:\n{e}") from None


def _print_herbrand(h: Any, as_json: bool) -> int:
    u, b = h.universe_size, h.base_size
    small_u = u is not None and u <= 100
    small_b = b is not None and b <= 200
    funcs = [f"{n}/{a}" for n, a in h.functions]
    if as_json:
        print(
            json.dumps(
                {
                    "universe_size": u,
                    "universe": h.universe() if small_u else None,
                    "function_constants": funcs,
                    "base_size": b,
                    "base": list(h.base()) if small_b else None,
                }
            )
        )
        return 0
    if u is None:
        print(
            f"Herbrand universe: infinite (function constants {', '.join(funcs)} nest "
            f"without end over the {len(h.constants)} object constants)"
        )
    else:
        print(f"Herbrand universe: {u} object constants")
        if small_u and u:
            print("  " + " ".join(h.universe()))
    if b is None:
        print(f"Herbrand base: infinite ({len(h.relations)} relations over an infinite universe)")
    else:
        print(f"Herbrand base: {b} ground atoms over {len(h.relations)} relations")
        if small_b:
            for a in h.base():
                print("  " + a)
    return 0
