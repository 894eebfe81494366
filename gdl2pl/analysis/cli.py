"""The handlers of ``gdl2pl analyze | explain | graph | model`` (wired in ``commands``).

Each returns the exit status; input errors are raised as ``InputError`` (or the front
end's ``GdlError``), which ``commands`` prints as one line with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gdl2pl.command_checks import checked_game
from gdl2pl.errors import GdlError
from gdl2pl.jsonline import loads_line
from gdl2pl.load import read_game


class InputError(GdlError):
    """Bad input on the command line: says what and where."""


def analyze(args: argparse.Namespace) -> int:
    from .deadline import Deadline

    deadline = Deadline.after(args.seconds)  # the whole command: imports, checks, loading
    from gdl2pl.bridge import StateMachine

    from .analyze import Budget
    from .analyze import analyze as run
    from .analyze import exit_status
    from .analyze import format_report

    if args.max_states < 1 or args.seconds <= 0 or args.walks < 0 or args.max_memory < 1:
        raise InputError(
            "--max-states, --seconds and --max-memory must be positive, --walks not negative"
        )
    budget = Budget(
        args.max_states,
        args.seconds,
        max_memory=args.max_memory * 2**20,
        walks=args.walks,
        seed=args.seed,
    )
    checked_game(args)
    description = read_game(args.game, syntax=args.syntax)
    with StateMachine(description, name=Path(args.game).name) as sm:
        if not sm.roles:
            raise InputError(f"{args.game}: not a game: it defines no role")
        report = run(
            sm,
            budget,
            progress=True if args.progress else None,
            description=description,
            deadline=deadline,
        )
    if args.json:
        print(json.dumps(report))
    else:
        syntax = answer_syntax(args, args.game)
        print(format_report(report, definitions=args.definitions, syntax=syntax))
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
    syntax = answer_syntax(args, args.game)
    with StateMachine.from_file(args.game, syntax=args.syntax) as sm:
        atom = parse_atom(sm, _question(args.atom, syntax), syntax)
        states, joints = _states(sm, args)
        joint = None
        state = states[-1]
        if depends_on_does(sm, atom):
            if not joints:
                raise InputError(
                    f"{args.atom} depends on the joint move (does): give --moves; the last "
                    "joint move is then the one made in the state before it"
                )
            state, joint = states[-2], joints[-1]
        result = explain(sm, state, atom, depth=args.depth, joint_move=joint, syntax=syntax)
    fmt = getattr(args, "format", "text")
    if fmt == "text":
        _write(str(result))
    else:
        from gdl2pl.drawing import GraphvizMissingError
        from gdl2pl.explain.picture import render

        try:
            _write(render(result.tree, fmt))
        except GraphvizMissingError as e:
            raise InputError(str(e)) from None
    return 0 if result.holds else 1


def _question(text: str, syntax: str) -> Any:
    """The atom asked about: KIF text as it is; in an infix setting an atom that is not
    KIF (``legal(xplayer,mark(2,2))``) read as infix."""
    from gdl2pl.infix import parse_infix_term

    if syntax != "infix" or text.lstrip().startswith("("):
        return text
    try:
        return parse_infix_term(text)
    except GdlError as e:
        raise InputError(f"{text}: not an infix atom: {e}") from None


def _states(sm: Any, args: argparse.Namespace) -> tuple[list[Any], list[list[str]]]:
    """The states along ``--moves`` (the initial one first) and the joint moves; or the
    one state of ``--state``; or the initial state."""
    from gdl2pl.bridge import GameError

    if getattr(args, "state", None):
        return [parse_state(args.state)], []
    states = [sm.initial_state]
    joints: list[list[str]] = []
    if getattr(args, "moves", None):
        for where, written in read_moves(args.moves):
            jm = [_move(m, where) for m in written]
            if sm.is_terminal(states[-1]):
                raise InputError(f"{where}: move {len(joints) + 1}: the match is already over")
            try:
                states.append(sm.next_state(states[-1], jm))
            except GameError as e:
                raise InputError(f"{where}: move {len(joints) + 1}: {e}") from None
            joints.append(jm)
    return states, joints


def _move(text: str, where: str) -> str:
    """A move of ``--moves`` as KIF: KIF as it is, and a compound term written in infix
    (``mark(2,2)``: a KIF symbol holds no parenthesis) read as infix."""
    from gdl2pl.infix import parse_infix_term
    from gdl2pl.kif import kif_term

    stripped = text.strip()
    if "(" not in stripped or stripped.startswith("("):
        return text
    try:
        return kif_term(parse_infix_term(stripped))
    except GdlError as e:
        raise InputError(f"{where}: {text}: not a move in KIF or infix: {e}") from None


def parse_state(text: str) -> Any:
    """A state written as ground fluents: a KIF list ``((cell 1 1 x) (control o))``, or in
    infix, separated by white space, ``cell(1,1,x) control(o)``. A malformed text raises
    ``GdlSyntaxError`` positioned in it (file ``<state>``)."""
    from gdl2pl.contract import MachineState
    from gdl2pl.infix import parse_infix
    from gdl2pl.kif import parse_kif_term_list
    from gdl2pl.syntax import Fact
    from gdl2pl.syntax import is_ground

    if text.lstrip().startswith("(") or not text.strip():
        fluents = parse_kif_term_list(text, STATE_SOURCE)
    else:
        written = parse_infix(text, STATE_SOURCE).clauses
        for c in written:
            if not isinstance(c, Fact):
                raise InputError(f"--state: {c.pos}: a state holds fluents, not rules")
        fluents = [c.head for c in written]
    for f in fluents:
        if not is_ground(f):
            raise InputError(f"--state: the fluent {f} is not ground")
    return MachineState.from_fluents(fluents)


def read_moves(path: str) -> list[tuple[str, list[str]]]:
    """Joint moves from a JSON lines file (``-`` for stdin): each line a joint move (a list
    of KIF strings) or a match ``{"moves": [[...], ...]}``; with where each came from."""
    from gdl2pl.load import MAX_FILE_BYTES
    from gdl2pl.load import read_text

    if path == "-":
        text = sys.stdin.read(MAX_FILE_BYTES + 1)
        if len(text) > MAX_FILE_BYTES:
            raise InputError(f"stdin: more than {MAX_FILE_BYTES:,} characters of moves")
    else:
        text = read_text(path)  # at most MAX_FILE_BYTES
    out: list[tuple[str, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
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


def answer_syntax(args: argparse.Namespace, path: str) -> str:
    """``kif`` or ``infix``: ``--answer-syntax`` if given, else the syntax ``path`` is
    written in (``--syntax``, or as detected)."""
    from gdl2pl.load import detect_syntax
    from gdl2pl.load import read_text

    chosen = getattr(args, "answer_syntax", None)
    if chosen:
        return str(chosen)
    if args.syntax != "auto":
        return str(args.syntax)
    return detect_syntax(read_text(path), path)


def term_printer(syntax: str) -> Any:
    """The function that writes a term or atom in ``syntax``."""
    from gdl2pl.infix import infix_term
    from gdl2pl.kif import kif_term

    return infix_term if syntax == "infix" else kif_term


def model(args: argparse.Namespace) -> int:
    from gdl2pl.load import read_game
    from gdl2pl.pipeline import compile_game
    from gdl2pl.syntax import Description

    from . import model as m

    program = read_game(args.file, syntax=args.syntax)
    printer = term_printer(answer_syntax(args, args.file))
    named = [n.strip() for n in (args.inputs or "").split(",") if n.strip()]
    stratified = check_program(program, args.file)
    clauses = list(program.clauses)
    if args.input:
        facts = read_game(args.input, syntax="auto")
        try:
            m.check_input(facts, m.input_relations(program, named), args.input)
        except m.ModelError as e:
            raise InputError(str(e)) from None
        clauses += facts.clauses
    whole = compile_game(
        Description(tuple(clauses), program.source, program.syntax), translate=False
    ).normalized
    inputs = m.input_relations(program, named) if (args.input or named) else frozenset()
    if args.herbrand:
        return _print_herbrand(m.herbrand(whole), args.json, printer)
    try:
        if not stratified:
            return _print_well_founded(args, m, whole, inputs, printer)
        return _print_model(args, m, whole, inputs, printer)
    except m.ModelError as e:
        raise InputError(str(e)) from None


def _print_model(args: argparse.Namespace, m: Any, whole: Any, inputs: Any, printer: Any) -> int:
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
        result = m.evaluate(sm, rels, state, joint, inputs, printer=printer)
    shown = result.output() if inputs else result.relations
    if args.json:
        print(json.dumps({name: atoms for (name, _), atoms in shown.items()}))
    else:
        for (name, arity), atoms in shown.items():
            print(f"% {m.relation_label((name, arity), printer)}/{arity}: {_atoms(len(atoms))}")
            for a in atoms:
                print(a)
    return 0


def _atoms(n: int) -> str:
    return f"{n} atom{'s' if n != 1 else ''}"


def _print_well_founded(
    args: argparse.Namespace, m: Any, whole: Any, inputs: Any, printer: Any
) -> int:
    """The three-valued well-founded model of a program whose negation is not
    stratified: true atoms, then undefined ones marked so; every other atom is false."""
    from .wellfounded import well_founded_model

    if args.state or args.moves:
        raise InputError(
            f"{args.file}: its negation is not stratified, so it has no state machine for "
            "--state/--moves; give the state as facts of true with --input"
        )
    result = well_founded_model(whole, list(m.relations(whole)), inputs, printer)
    shown = result.output() if inputs else list(result.true)
    undefined = sum(len(result.undefined[k]) for k in shown)
    if args.json:
        doc = {
            "semantics": "well-founded",
            "two_valued": result.two_valued,
            "true": {name: result.true[(name, a)] for name, a in shown},
            "undefined": {name: result.undefined[(name, a)] for name, a in shown},
        }
        print(json.dumps(doc))
        return 0
    print("% negation not stratified: the well-founded model (an atom not shown is false)")
    if result.two_valued:
        print("% it is two-valued (no atom is undefined): the program's one stable model")
    else:
        print(f"% it is three-valued: {_atoms(undefined)} undefined, marked so")
    for key in shown:
        arity = key[1]
        holds, maybe = result.true[key], result.undefined[key]
        counts = _atoms(len(holds)) + (f" true, {len(maybe)} undefined" if maybe else "")
        print(f"% {m.relation_label(key, printer)}/{arity}: {counts}")
        for a in holds:
            print(a)
        for a in maybe:
            print(f"{a}  % undefined")
    return 0


def check_program(program: Any, path: str) -> bool:
    """Whether ``program`` is stratified; ``InputError`` if it has no model."""
    from . import model as m

    try:
        return bool(m.check_program(program, path))
    except m.ModelError as e:
        raise InputError(f"not a safe program:\n{e}") from None


def _print_herbrand(h: Any, as_json: bool, printer: Any) -> int:
    """The Herbrand universe and base, constants and atoms written by ``printer``."""
    u, b = h.universe_size, h.base_size
    small_u = u is not None and u <= 100
    small_b = b is not None and b <= 200
    funcs = [f"{n}/{a}" for n, a in h.functions]
    if as_json:
        print(
            json.dumps(
                {
                    "universe_size": u,
                    "universe": h.universe(printer) if small_u else None,
                    "function_constants": funcs,
                    "base_size": b,
                    "base": list(h.base(printer)) if small_b else None,
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
            print("  " + " ".join(h.universe(printer)))
    if b is None:
        print(f"Herbrand base: infinite ({len(h.relations)} relations over an infinite universe)")
    else:
        print(f"Herbrand base: {b} ground atoms over {len(h.relations)} relations")
        if small_b:
            for a in h.base(printer):
                print("  " + a)
    return 0
