"""The studio's answers, one function per endpoint, over gdl2pl's Python API: each takes
the request's values (already checked by ``gdl2pl.studio.fields``) and returns a JSON-ready
dict. Nothing here computes what the API already does; see ``docs/studio.md`` for the
fields of each answer.

What a student reads (findings, the state, moves, atoms, rules) is written in the answer
syntax: the one the game is written in, unless the page asks for the other
(``answer_syntax``). What the page sends back (moves, histories) stays KIF.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from gdl2pl.adapters.game_board import game_geometry
from gdl2pl.adapters.game_board import game_rules
from gdl2pl.board import grid_of
from gdl2pl.board import with_row_first
from gdl2pl.board_axes import row_first as rules_row_first
from gdl2pl.bridge import QueryInterrupted
from gdl2pl.bridge import StateMachine
from gdl2pl.check import Finding
from gdl2pl.check import as_program
from gdl2pl.contract import MachineState
from gdl2pl.depgraph import sentence_node
from gdl2pl.errors import GdlError
from gdl2pl.errors import GdlSyntaxError
from gdl2pl.ggp.strategy import Budget
from gdl2pl.ggp.strategy import make_strategy
from gdl2pl.infix import print_infix
from gdl2pl.kif import kif_term
from gdl2pl.kif import parse_kif_term
from gdl2pl.kif import print_kif
from gdl2pl.load import Syntax
from gdl2pl.load import detect_syntax
from gdl2pl.load import parse_game
from gdl2pl.pipeline import compile_game
from gdl2pl.standalone import standalone_module
from gdl2pl.syntax import Description
from gdl2pl.syntax import Pos
from gdl2pl.syntax import Term
from gdl2pl.written import answer_syntax as syntax_of_answers
from gdl2pl.written import term_text

from .limits import Limits
from .limits import python_work
from .sessions import GAME_NAME
from .sessions import Loaded
from .sessions import StudioError

#: The opponents a role can be given (``human`` waits for the page).
PLAYERS = ("human", "random", "mcts", "legal")


def game_error(e: GdlError) -> StudioError:
    """An error of the game text as a 422 answer, with its line and column if known."""
    pos = getattr(e, "pos", None)
    message = e.message if isinstance(e, GdlSyntaxError) else str(e)
    if isinstance(e, GdlSyntaxError):
        message = f"syntax error: {message}"
    if isinstance(pos, Pos):
        return StudioError(message, 422, pos.line, pos.column)
    return StudioError(message, 422)


def _parse(text: str, syntax: Syntax, name: str = GAME_NAME) -> Description:
    try:
        return parse_game(text, syntax, name)
    except GdlError as e:
        raise game_error(e) from None


# -- the text: check, convert, translate, graph ---------------------------------------------


def check(
    text: str, syntax: Syntax, name: str = GAME_NAME, answer_syntax: str | None = None
) -> dict[str, Any]:
    """The checker's findings, quoting the game in ``answer_syntax`` (default: its own; a
    syntax error is one finding of code ``syntax``); for a text without any role,
    ``kind`` is "program" and the findings only a game has are left out
    (``gdl2pl.check.as_program``)."""
    used = detect_syntax(text) if syntax == "auto" else syntax
    kind = "game"
    try:
        compiled = compile_game(
            text=text,
            syntax=syntax,
            name=name,
            check=True,
            translate=False,
            answer_syntax=answer_syntax,
        )
        found = compiled.findings
        program = as_program(found)
        if program is not None:
            kind, found = "program", tuple(program)
        findings = [_finding(f) for f in found]
    except GdlSyntaxError as e:
        findings = [
            {
                "severity": "error",
                "code": "syntax",
                "message": f"syntax error: {e.message}",
                "line": e.pos.line,
                "column": e.pos.column,
                "rule": "",
            }
        ]
    errors = sum(f["severity"] == "error" for f in findings)
    return {
        "syntax": used,
        "answer_syntax": answer_syntax or used,
        "kind": kind,
        "findings": findings,
        "errors": errors,
        "warnings": len(findings) - errors,
    }


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "severity": f.severity,
        "code": f.code,
        "message": f.message,
        "line": f.pos.line if f.pos else None,
        "column": f.pos.column if f.pos else None,
        "rule": f.rule,
    }


def convert(text: str, syntax: Syntax, to: str) -> dict[str, Any]:
    """The game in the syntax ``to`` (symbols spelled one way; comments are not kept)."""
    d = compile_game(_parse(text, syntax), translate=False).normalized
    try:
        out = print_infix(d) if to == "infix" else print_kif(d)
    except ValueError as e:
        raise StudioError(f"cannot write it in {to}: {e}", 422) from None
    return {"syntax": to, "text": out}


def translate(
    text: str,
    syntax: Syntax,
    name: str = GAME_NAME,
    standalone: bool = False,
    answer_syntax: str | None = None,
) -> dict[str, Any]:
    """The Prolog module (the runtime's, or with ``standalone`` the one ``gdl2pl
    translate --standalone`` writes for plain SWI-Prolog), and for each clause its lines
    and the GDL rule it comes from; ``name`` (the file's or example's) is the source its
    header and comments name, and the comments quote the rules in ``answer_syntax``."""
    d = _parse(text, syntax, name)
    try:
        if standalone:
            normalized = compile_game(d, name=name, translate=False).normalized
            alone = standalone_module(normalized, "game", name, answer_syntax)
            prolog, origins = alone.text, alone.origins
        else:
            t = compile_game(d, name=name, module="game", answer_syntax=answer_syntax).translation
            prolog, origins = t.text, t.origins
    except GdlError as e:
        raise game_error(e) from None
    lines = prolog.split("\n")
    ends = _gdl_ends(d, text)
    clauses = []
    for start, rule in origins:
        end = start
        while end < len(lines) and not lines[end - 1].rstrip().endswith("."):
            end += 1
        pos = rule.source.pos
        clauses.append(
            {
                "prolog_start": start,
                "prolog_end": end,
                "gdl_line": pos.line if pos else None,
                "gdl_end": ends.get(pos.line) if pos else None,
                "relation": sentence_node(rule.head, str),
                "branch": rule.branch,
                "branches": rule.branches,
            }
        )
    return {"prolog": prolog, "standalone": standalone, "clauses": clauses}


def _gdl_ends(d: Description, text: str) -> dict[int, int]:
    """For each line where a clause starts, the last line of that clause: the line before
    the next clause, without the blank and comment lines at its end."""
    lines = text.split("\n")
    starts = sorted({c.pos.line for c in d.clauses if c.pos})
    out: dict[int, int] = {}
    for i, start in enumerate(starts):
        end = (starts[i + 1] - 1) if i + 1 < len(starts) else len(lines)
        while end > start and _filler(lines[end - 1]):
            end -= 1
        out[start] = end
    return out


def _filler(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith((";", "%"))


def graph(
    text: str, syntax: Syntax, name: str = GAME_NAME, dot_seconds: float = 5.0
) -> dict[str, Any]:
    """The dependency graph: an SVG drawing (None without Graphviz or when it cannot be
    drawn within ``dot_seconds``, then ``note`` says why), its DOT and Mermaid text, the
    strata, and the rules (lines) of each relation (``(p)`` is the relation ``p()``,
    labelled ``(p)`` or ``p()`` in ``labels``, apart from ``p``). A game with errors is
    drawn all the same (what is wrong is what the student needs to see): ``cycle`` holds
    the relations and edges of the cycles through ``not`` of a game whose negation is not
    stratified, which the drawing marks in red."""
    from gdl2pl.analysis.relgraph import relation_graph
    from gdl2pl.analysis.relgraph import to_dot
    from gdl2pl.analysis.relgraph import to_mermaid
    from gdl2pl.drawing import svg_of_dot

    d = _parse(text, syntax, name)
    try:
        g = relation_graph(d, name)
    except GdlError as e:
        raise game_error(e) from None
    dot = to_dot(g)
    svg, note = None, ""
    try:
        svg = svg_of_dot(dot, seconds=dot_seconds, text_forms="its DOT and Mermaid text are below")
    except GdlError as e:  # no Graphviz, too large to draw, or dot failed: say why
        note = str(e)
    normalized = compile_game(d, translate=False).normalized
    rules: dict[str, list[int]] = {rel: [] for rel in g.relations}
    for c in normalized.clauses:
        # a line is named once, however many facts of the relation it holds
        rel = sentence_node(c.head, str)
        if c.pos and rel in rules and c.pos.line not in rules[rel]:
            rules[rel].append(c.pos.line)
    return {
        "svg": svg,
        "note": note,
        "dot": dot,
        "mermaid": to_mermaid(g),
        "strata": g.strata,
        "relations": list(g.relations),
        "labels": dict(g.labels),
        "edges": [{"body": b, "head": h, "negative": n} for b, h, n in g.edges],
        "recursive": [list(c) for c in g.recursive],
        "rules": rules,
        "cycle": {
            "relations": list(g.cycle_relations),
            "note": g.cycle_note if g.negative_cycles else "",
            "ground_stratified": g.ground_stratified,
            "edges": [{"body": b, "head": h, "negative": n} for b, h, n in g.negative_cycles],
        },
    }


# -- playing --------------------------------------------------------------------------------


def answers_in(loaded: Loaded, chosen: str | None) -> str:
    """The answer syntax for a loaded game: ``chosen``, else the game's own."""
    if loaded.description is None:
        return chosen or "kif"
    return syntax_of_answers(loaded.description, chosen)


def view(
    loaded: Loaded,
    moves: Sequence[Sequence[str]],
    answer_syntax: str | None = None,
    row_first: bool | None = None,
) -> dict[str, Any]:
    """The match after ``moves``: the state (as a grid when it reads as one, and as the
    fluent list), each role's legal moves, whether it is terminal, the goal values; and
    under ``shown`` the roles, the state, the legal moves and the history as a student
    reads them, in ``answer_syntax`` (default: the game's). ``row_first`` (when not None)
    says whether the board's cells name their row first, for a game whose own ``row``
    and ``column`` rules do not say."""
    states = loaded.replay(moves)
    syntax = answers_in(loaded, answer_syntax)
    out = _view(loaded.sm, states[-1], len(states) - 1, syntax, row_first)
    out["shown"]["moves"] = [[_move_shown(loaded.sm, m, syntax) for m in jm] for jm in moves]
    return out


def _view(
    sm: StateMachine,
    state: MachineState,
    step: int,
    syntax: str,
    row_first: bool | None = None,
) -> dict[str, Any]:
    terminal, legal, goals = sm.state_info(state)
    fluents = sorted(state, key=kif_term)
    geometry = game_geometry(sm)
    said = geometry is not None and rules_row_first(game_rules(sm), geometry.relation) is not None
    if geometry is not None and row_first is not None and not said:
        geometry = with_row_first(geometry, row_first)
    grid = grid_of(fluents, geometry)
    board = None
    if grid is not None:
        board = {
            "name": grid.geometry.relation,
            "rows": list(grid.geometry.rows),
            "columns": list(grid.geometry.columns),
            "cells": grid.table,
            "row_first": grid.geometry.row_first,
            "row_first_said": said,
            "shown": [[_cell_shown(v, syntax) for v in row] for row in grid.table],
        }
    moves = [[] if terminal else ms for ms in legal]
    return {
        "roles": [kif_term(r) for r in sm.roles],
        "step": step,
        "state": [kif_term(f) for f in fluents],
        "board": board,
        "terminal": terminal,
        "legal": [[kif_term(m) for m in ms] for ms in moves],
        "goals": [[str(v) for v in vs] for vs in goals],
        "answer_syntax": syntax,
        "shown": {
            "roles": [term_text(r, syntax) for r in sm.roles],
            "state": [term_text(f, syntax) for f in fluents],
            "legal": [[term_text(m, syntax) for m in ms] for ms in moves],
        },
    }


def _move_shown(sm: StateMachine, move: str, syntax: str) -> str:
    """A move of the history (KIF) as the student reads it."""
    try:
        return term_text(sm.term(move), syntax)
    except GdlError:
        return move


def _cell_shown(cell: str | None, syntax: str) -> str | None:
    """A board cell's content (KIF; several joined by ``/``) as the student reads it."""
    if cell is None or syntax == "kif":
        return cell
    parts = []
    for part in cell.split("/"):
        try:
            parts.append(term_text(parse_kif_term(part), syntax))
        except GdlError:
            parts.append(part)
    return "/".join(parts)


def step(
    loaded: Loaded,
    moves: Sequence[Sequence[str]],
    chosen: dict[str, str],
    players: dict[str, str],
    limits: Limits,
    seed: int | None = None,
    answer_syntax: str | None = None,
    row_first: bool | None = None,
) -> dict[str, Any]:
    """Play one joint move after ``moves``: the moves ``chosen`` by the page, a forced
    move (the only legal one) for any other role, and for the rest the move of the role's
    player (``random``, ``mcts``, ``legal``). A role left to ``human`` with a choice
    stops the step (422). Answers the new history and its ``view``."""
    sm = loaded.sm
    states = loaded.replay(moves)
    state = states[-1]
    terminal, legal, _ = sm.state_info(state)
    if terminal:
        raise StudioError("the match is over: go back in the history to play on", 422)
    roles = [kif_term(r) for r in sm.roles]
    unknown = (set(chosen) | set(players)) - set(roles)
    if unknown:
        raise StudioError(f"not a role of the game: {', '.join(sorted(unknown))}")
    rng = random.Random(seed)
    joint: list[str] = []
    for role, term, ms in zip(roles, sm.roles, legal, strict=True):
        texts = [kif_term(m) for m in ms]
        if role in chosen:
            move = _move_text(sm, chosen[role])
            if move not in texts:
                raise StudioError(f"{chosen[role]} is not a legal move of {role} here", 422)
        elif len(ms) == 1:
            move = texts[0]
        elif not ms:
            raise StudioError(f"{role} has no legal move here (the game is broken)", 422)
        else:
            kind = players.get(role, "human")
            if kind == "human":
                raise StudioError(f"{role} has to choose a move", 422)
            move = kif_term(_choose(sm, term, state, ms, kind, limits, rng.randrange(2**31)))
        joint.append(move)
    history = [list(jm) for jm in moves] + [joint]
    return {
        "moves": history,
        "joint_move": joint,
        "view": view(loaded, history, answer_syntax, row_first),
    }


def _move_text(sm: StateMachine, text: str) -> str:
    """A move from the page, spelled as the game spells it."""
    try:
        return kif_term(sm.term(text))
    except GdlError as e:
        raise StudioError(f"not a move: {text!r}: {e}") from None


def _choose(
    sm: StateMachine,
    role: Term,
    state: MachineState,
    legal: list[Term],
    kind: str,
    limits: Limits,
    seed: int,
) -> Term:
    if kind not in PLAYERS:
        raise StudioError(f"unknown player {kind!r}: expected one of {', '.join(PLAYERS)}")
    strategy = make_strategy(kind, seed=seed)
    seconds = limits.mcts_seconds if kind == "mcts" else 1.0
    strategy.metagame(sm, role, Budget.seconds(seconds))
    try:
        return strategy.select_move(state, legal, Budget.seconds(seconds), lambda _: None)
    finally:
        strategy.finish()


# -- analysis -------------------------------------------------------------------------------


#: The part of a request's time limit (``Limits.seconds``) an analysis may take: the rest
#: is for what comes after the deadline (one step, the checks, the answer).
REQUEST_SHARE = 0.8


def analyze(
    loaded: Loaded,
    limits: Limits,
    seconds: float | None = None,
    started: float | None = None,
    answer_syntax: str | None = None,
) -> dict[str, Any]:
    """``gdl2pl analyze``'s report under the server's budget, made as the command makes
    it (the game's rules first, then the search; one deadline, ``seconds`` from
    ``started``, the request's start, so loading counts); counterexamples and witnesses
    are joint-move histories (KIF) the Play tab can replay, and the report's ``text``
    writes them in ``answer_syntax`` (default: the game's), as ``why_not`` (property ->
    role -> text) says why a property is refuted for a role."""
    from gdl2pl.analysis.analyze import LABELS
    from gdl2pl.analysis.analyze import Budget as SearchBudget
    from gdl2pl.analysis.analyze import analyze as run
    from gdl2pl.analysis.analyze import format_report
    from gdl2pl.analysis.analyze import why_not_text
    from gdl2pl.analysis.deadline import Deadline

    budget = SearchBudget(
        max_states=limits.analyze_states,
        # within the request's own limit too, so the report comes before the watchdog
        seconds=min(
            seconds or limits.analyze_seconds,
            limits.analyze_seconds,
            REQUEST_SHARE * limits.seconds,
        ),
        walks=limits.analyze_walks,
        walk_depth=min(2_000, limits.max_moves),
    )
    deadline = Deadline.after(budget.seconds, started)
    report = run(
        loaded.sm, budget, progress=False, description=loaded.description, deadline=deadline
    )
    syntax = answers_in(loaded, answer_syntax)
    return {
        "report": report,
        "labels": LABELS,
        "text": format_report(report, syntax=syntax),
        "why_not": {
            name: {role: why_not_text(role, why, syntax) for role, why in p["why_not"].items()}
            for name, p in report["properties"].items()
            if p.get("why_not")
        },
    }


def model(
    text: str,
    syntax: Syntax,
    input_text: str,
    input_relations: Iterable[str],
    limits: Limits,
    answer_syntax: str | None = None,
) -> dict[str, Any]:
    """``gdl2pl model``: the minimal model of a program (every relation's atoms), or with
    an input model (facts of its input relations) the output part of the model; for a
    program whose negation is not stratified, its well-founded model (true and
    undefined atoms). Atoms are written in ``answer_syntax`` (default: the program's)."""
    from gdl2pl.analysis import model as m

    named = [n.strip() for n in input_relations if n.strip()]
    try:
        with python_work():  # the front end stops at the request's deadline too
            program = _parse(text, syntax, "program")
            stratified = m.check_program(program, "program")
            clauses = list(program.clauses)
            inputs: frozenset[tuple[str, int]] = frozenset()
            if input_text.strip() or named:
                inputs = m.input_relations(program, named)
            if input_text.strip():
                facts = _parse(input_text, "auto", "input")
                m.check_input(facts, inputs, "input")
                clauses += facts.clauses
            whole = compile_game(
                Description(tuple(clauses), program.source, program.syntax), translate=False
            )
            rels = m.relations(whole.normalized)
            printer = _printer(syntax_of_answers(program, answer_syntax))
        if not stratified:
            return _well_founded(whole.normalized, rels, inputs, limits, printer)
        sm = StateMachine(
            whole.normalized,
            "program",
            inference_limit=limits.inference_limit,
            compiling=python_work(),
        )
        try:
            result = m.evaluate(
                sm, rels, (), (), inputs, inference_limit=limits.inference_limit, printer=printer
            )
        finally:
            sm.close()
    except QueryInterrupted:  # the request's deadline: the server answers it
        raise
    except GdlError as e:
        raise game_error(e) from None
    shown = result.output() if inputs else result.relations
    return {
        "semantics": "minimal",
        "relations": [
            {
                "name": name,
                "label": m.relation_label((name, arity), printer),
                "arity": arity,
                "atoms": atoms,
                "input": (name, arity) in inputs,
            }
            for (name, arity), atoms in shown.items()
        ],
        "inputs": sorted(f"{n}/{a}" for n, a in inputs),
    }


def _printer(syntax: str) -> Callable[[Term], str]:
    return lambda t: term_text(t, syntax)


def _well_founded(
    program: Description,
    rels: Any,
    inputs: frozenset[tuple[str, int]],
    limits: Limits,
    printer: Callable[[Term], str],
) -> dict[str, Any]:
    """The three-valued well-founded model of a program whose negation is not stratified
    (``gdl2pl model`` on such a program): each relation's true and undefined atoms."""
    from gdl2pl.analysis.model import relation_label
    from gdl2pl.analysis.wellfounded import well_founded_model

    result = well_founded_model(
        program,
        list(rels),
        inputs,
        printer,
        inference_limit=limits.inference_limit,
        megabytes=limits.model_megabytes,
    )
    shown = result.output() if inputs else list(result.true)
    return {
        "semantics": "well-founded",
        "two_valued": result.two_valued,
        "relations": [
            {
                "name": name,
                "label": relation_label((name, arity), printer),
                "arity": arity,
                "atoms": result.true[(name, arity)],
                "undefined": result.undefined[(name, arity)],
                "input": (name, arity) in inputs,
            }
            for name, arity in shown
        ],
        "inputs": sorted(f"{n}/{a}" for n, a in inputs),
    }


__all__ = [
    "PLAYERS",
    "analyze",
    "check",
    "convert",
    "game_error",
    "graph",
    "model",
    "step",
    "translate",
    "view",
]
