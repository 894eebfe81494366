"""GDL -> one SWI-Prolog module a student loads in plain SWI-Prolog (``swipl game.pl``).

``standalone(description)`` returns the text of a module that needs no gdl2pl runtime:

- relations keep the game's names (``role/1``, ``legal/2``, ``next/1``, the game's own
  ``line/1``); one whose name and arity SWI-Prolog reserves (a built-in such as
  ``succ/2``, a library predicate such as ``member/2``, listed in ``swi_reserved.txt``)
  or a helper of the module uses is renamed ``r_name`` (more ``r_`` until it is free),
  and the header lists every renaming;
- the state is the dynamic facts ``true/1`` and the joint move the dynamic facts
  ``does/2``, as GDL writes them, so a student can assert and retract them by hand;
- constants are atoms spelled as in the game, quoted only where Prolog needs it, except
  a symbol written as a plain whole number (``0``, ``1``, ``100``), which is the Prolog
  integer: no two symbols give the same integer (``01`` stays the atom ``'01'``), so
  identity, hence unification and ``distinct``, is unchanged;
- every relation defined by a rule is tabled: it terminates on recursion, answers a
  ground query once however many proofs it has (the plain form of the normal
  translation's ``\\+ \\+ G``), and, tabled ``as incremental``, its answers follow every
  change of ``true/1`` and ``does/2``;
- ``distinct`` is ``\\==`` and ``not`` is ``\\+`` (both after the literals that bind their
  variables), ``or`` is one clause per branch; each clause has its GDL rule (whole, in
  the syntax the game was written in unless another is asked for) and line in a comment
  above it;
- a few helpers play the game: ``set_state/1``, ``current_state/1``, ``initial_state/1``,
  ``legal_moves/2``, ``step/1``, ``state_after/2``, ``play_random/0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from gdl2pl.flatten import BodyLiteral
from gdl2pl.flatten import FlatRule
from gdl2pl.flatten import TranslationError
from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import relation_key
from gdl2pl.prolog_text import VariableNamer
from gdl2pl.prolog_text import comment_text
from gdl2pl.prolog_text import quote_atom
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Term
from gdl2pl.syntax import Var
from gdl2pl.translate import DOES
from gdl2pl.translate import GUARD_NOTE
from gdl2pl.translate import TRUE
from gdl2pl.translate import Plan
from gdl2pl.translate import PredKey
from gdl2pl.translate import guarded
from gdl2pl.translate import has_guard
from gdl2pl.translate import how_to_read
from gdl2pl.translate import plan
from gdl2pl.translate import prolog_clause
from gdl2pl.translate import rule_comment
from gdl2pl.translate import rule_variables
from gdl2pl.translate import unbound_names
from gdl2pl.vocabulary import is_keyword_relation
from gdl2pl.written import answer_syntax

__all__ = [
    "HELPERS",
    "SYNTAX",
    "StandaloneModule",
    "prolog_term",
    "reserved",
    "standalone",
    "standalone_module",
    "standalone_names",
]

#: The helper predicates every standalone module defines (and those it uses inside).
HELPERS: frozenset[PredKey] = frozenset(
    {
        ("set_state", 1),
        ("current_state", 1),
        ("initial_state", 1),
        ("legal_moves", 2),
        ("step", 1),
        ("state_after", 2),
        ("play_random", 0),
        ("play_random_loop", 0),
        ("legal_move", 1),
        ("joint_move_problem", 2),
    }
)

#: The helpers the module uses inside, not exported.
_INSIDE = frozenset({"play_random_loop", "legal_move", "joint_move_problem"})

#: Terms a Prolog loader does not read as clauses of their own name: a directive
#: (``:- G``, ``?- G``), a clause (``H :- B``), a grammar rule, a clause for another module
#: (``M:H``), the end of the file. A relation of one of these is renamed, so no game can
#: make the module run a goal when it is loaded.
SYNTAX: frozenset[PredKey] = frozenset(
    {(":-", 1), (":-", 2), ("?-", 1), ("-->", 2), (":", 2), ("end_of_file", 0)}
)

_INTEGER = re.compile(r"0|[1-9][0-9]*")


@cache
def reserved() -> frozenset[PredKey]:
    """The predicates (name, arity) SWI-Prolog defines or autoloads (the list
    ``scripts/swi_reserved.pl`` writes), and ``SYNTAX``: a game relation of one of these is
    renamed."""
    text = files("gdl2pl").joinpath("swi_reserved.txt").read_text(encoding="utf-8")
    out = set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, arity = line.rsplit("/", 1)
            out.add((name, int(arity)))
    return frozenset(out) | SYNTAX


def prolog_term(t: Term, names: VariableNamer | None = None) -> str:
    """The Prolog text of a GDL term in a standalone module: a plain whole-number symbol is
    the integer, any other symbol the atom of its text (quoted if needed)."""
    if isinstance(t, Var):
        if names is None:
            raise ValueError(f"a variable outside a clause: ?{t.name}")
        return names[t.name]
    if isinstance(t, Const):
        return t.name if _INTEGER.fullmatch(t.name) else quote_atom(t.name)
    args = ", ".join(prolog_term(a, names) for a in t.args)
    return f"{quote_atom(t.name)}({args})"


def standalone_names(keys: set[PredKey] | frozenset[PredKey]) -> dict[PredKey, str]:
    """The predicate name of each relation: its own, unless it is a zero-arity relation
    ``(foo)`` (``foo_``) or its name is reserved or a helper's (``r_foo``, with more
    ``r_`` until the name is free). Deterministic: it depends only on ``keys``."""
    taken = {(n, a) for n, a in keys} | reserved() | HELPERS | {TRUE, DOES}
    names: dict[PredKey, str] = {}
    for key in sorted(keys):
        name, arity = key
        if is_keyword_relation(name, arity) or key in (TRUE, DOES):
            names[key] = name
            continue
        wanted = name[:-2] + "_" if name.endswith("()") else name
        if wanted == name and (name, arity) not in reserved() | HELPERS:
            names[key] = name
            continue
        while (wanted, arity) in taken:
            wanted = "r_" + wanted
        taken.add((wanted, arity))
        names[key] = wanted
    return names


_HOW_TO_READ = """\
%   The state is the set of true/1 facts and the joint move the set of does/2
%   facts, as GDL writes them: both are dynamic, so you can assert and retract them
%   yourself, or use the helpers below.
%
%   Names: relations keep the game's names. Constants are atoms spelled as in the
%   game, quoted only where Prolog needs it ('X', 'not-filled'); a symbol written as
%   a plain whole number (0, 1, 100) is the Prolog integer. GDL compares symbols
%   only by identity, and no two symbols give the same integer ('01' stays an
%   atom), so nothing changes meaning.
%   (distinct X Y) is X \\== Y and (not G) is \\+ G, both placed after the literals
%   that bind their variables (tnot(G), SWI-Prolog's tabled negation, where G is in
%   the same recursive component as the rule: a game that is not stratified).
%   Every relation defined by a rule is tabled: it terminates on recursion and
%   answers each query once. Tabled 'as incremental', its answers follow every
%   change of true/1 and does/2 (SWI-Prolog's incremental tabling).
%
%   Helpers (documented where they are defined, below):
%     set_state(+Fluents)          make Fluents the current state
%     current_state(-Fluents)      the current state, as a sorted list
%     initial_state(-Fluents)      the initial state (init/1)
%     legal_moves(?Role, -Moves)   Role's legal moves in the current state
%     step(+JointMove)             play [does(Role, Move), ...] from the current state
%     state_after(+Moves, -State)  the state a list of joint moves leads to
%     play_random                  play a random match, printing every state
%
%   Try:  ?- initial_state(S), set_state(S), legal_moves(R, Ms).
%         ?- play_random.
"""

_HELPERS = """\
% ---- Helpers: playing the game ----

%!  set_state(+Fluents:list) is det.
%
%   Make Fluents the current state (the true/1 facts), with no joint move.

set_state(Fluents) :-
    retractall(true(_)),
    retractall(does(_, _)),
    forall(member(F, Fluents), assertz(true(F))).

%!  current_state(-Fluents:list) is det.
%
%   The current state: the true/1 facts, sorted.

current_state(Fluents) :-
    findall(F, true(F), Fs),
    sort(Fs, Fluents).

%!  initial_state(-Fluents:list) is det.
%
%   The initial state: the fluents init/1 gives, sorted.

initial_state(Fluents) :-
    findall(F, init(F), Fs),
    sort(Fs, Fluents).

%!  legal_moves(?Role, -Moves:list) is nondet.
%
%   Moves is the sorted list of Role's legal moves in the current state (one
%   answer per role if Role is unbound).

legal_moves(Role, Moves) :-
    role(Role),
    findall(M, legal(Role, M), Ms),
    sort(Ms, Moves).

%!  step(+JointMove:list) is det.
%
%   Play JointMove, a list with one does(Role, Move) per role, from the current
%   state: the current state becomes the next one (the next/1 fluents).
%   Raises a domain_error, and leaves the state as it was, if JointMove is not one
%   does(Role, Move) for every role (joint_move: the message says what is wrong)
%   or a move is not legal (legal_move).

step(JointMove) :-
    must_be(list, JointMove),
    (   joint_move_problem(JointMove, Problem)
    ->  throw(error(domain_error(joint_move, JointMove), context(step/1, Problem)))
    ;   true
    ),
    forall(member(Move, JointMove), legal_move(Move)),
    retractall(does(_, _)),
    forall(member(does(R, M), JointMove), assertz(does(R, M))),
    findall(F, next(F), Fs),
    set_state(Fs).

legal_move(does(Role, Move)) :-
    legal(Role, Move),
    !.
legal_move(Move) :-
    domain_error(legal_move, Move).

%!  joint_move_problem(+JointMove:list, -Problem:string) is semidet.
%
%   Problem says why JointMove is not one does(Role, Move) for every role of the
%   game and nothing else; fails if it is.

joint_move_problem(JointMove, Problem) :-
    member(Element, JointMove),
    \\+ ( ground(Element), Element = does(Role, _), role(Role) ),
    !,
    (   ground(Element)
    ->  format(string(Problem), "~q is not does(Role, Move) for a role of the game",
               [Element])
    ;   format(string(Problem),
               "~q is not ground: a joint move is made of ground does(Role, Move)", [Element])
    ).
joint_move_problem(JointMove, Problem) :-
    role(Role),
    findall(Move, member(does(Role, Move), JointMove), Moves),
    Moves \\= [_],
    !,
    (   Moves == []
    ->  format(string(Problem),
               "no move for the role ~q: a joint move has one does(Role, Move) for every role",
               [Role])
    ;   length(Moves, N),
        format(string(Problem), "~d moves for the role ~q, ~q: each role makes one move a turn",
               [N, Role, Moves])
    ).

%!  state_after(+Moves:list, -State:list) is det.
%
%   State is the state reached from the initial state by Moves, a list of joint
%   moves (each a list of does(Role, Move), as for step/1) played in order. It
%   is also the current state afterwards.

state_after(Moves, State) :-
    initial_state(S0),
    set_state(S0),
    forall(member(JointMove, Moves), step(JointMove)),
    current_state(State).

%!  play_random is det.
%
%   Play a match from the initial state, every role choosing a random legal
%   move, printing each state and joint move, and at the end each role's goal.
%   (A game that never ends never stops.)

play_random :-
    initial_state(S0),
    set_state(S0),
    play_random_loop.

play_random_loop :-
    current_state(State),
    format("state: ~q~n", [State]),
    (   terminal
    ->  forall((role(Role), goal(Role, Value)), format("goal(~q, ~q)~n", [Role, Value]))
    ;   findall(does(R, M), (legal_moves(R, Ms), random_member(M, Ms)), JointMove),
        format("moves: ~q~n", [JointMove]),
        step(JointMove),
        play_random_loop
    ).
"""


class _Emitter:
    """Writes the clauses of a plan with the standalone names."""

    def __init__(
        self, p: Plan, names: dict[PredKey, str], source_name: str, syntax: str = "kif"
    ) -> None:
        self.p = p
        self.names = names
        self.source_name = source_name
        self.syntax = syntax

    def pi(self, key: PredKey) -> str:
        return f"{quote_atom(self.names[key])}/{key[1]}"

    def call(self, s: Sentence, names: VariableNamer) -> str:
        key = relation_key(s)
        args = s.args if isinstance(s, Func) else ()
        if s.name in ("true", "does") and key not in (TRUE, DOES):
            raise TranslationError(f"'{s.name}' used with {len(args)} argument(s)")
        name = quote_atom(self.names[key])
        if not args:
            return name
        return f"{name}({', '.join(prolog_term(a, names) for a in args)})"

    def literal(
        self, lit: BodyLiteral, head: PredKey, names: VariableNamer, bound: set[str], guard: bool
    ) -> str:
        if isinstance(lit, Distinct):
            return f"{prolog_term(lit.left, names)} \\== {prolog_term(lit.right, names)}"
        if isinstance(lit, Not):
            text = self.negation(lit, head, names)
            return guarded(text, unbound_names(lit, names, bound)) if guard else text
        return self.call(lit, names)

    def negation(self, lit: Not, head: PredKey, names: VariableNamer) -> str:
        if isinstance(lit.body, Distinct):
            return f"{prolog_term(lit.body.left, names)} == {prolog_term(lit.body.right, names)}"
        if isinstance(lit.body, Not):
            return self.call(lit.body.body, names)  # type: ignore[arg-type]
        key = relation_key(lit.body)  # type: ignore[arg-type]
        inner = self.call(lit.body, names)  # type: ignore[arg-type]
        if key in self.p.derived and self.p.same_component(key, head):
            return f"tnot({inner})"
        return f"\\+ {inner}"

    def clause(self, r: FlatRule) -> str:
        names = rule_variables(r)
        head = self.call(r.head, names)
        comment = rule_comment(r, self.source_name, self.syntax)
        if not r.body:
            return f"{comment}\n{head}."
        key = relation_key(r.head)
        return prolog_clause(
            r, head, comment, lambda lit, bound, guard: self.literal(lit, key, names, bound, guard)
        )


def _directive(word: str, items: list[str]) -> list[str]:
    """``:- word a, b, c.`` wrapped at 88 characters, continued lines indented."""
    lines, line = [], f":- {word} "
    for i, item in enumerate(items):
        piece = item + ("." if i == len(items) - 1 else ",")
        if len(line) + len(piece) > 88 and line.strip() != f":- {word}":
            lines.append(line.rstrip())
            line = "       "
        line += piece + " "
    return [*lines, line.rstrip()]


def _declarations(p: Plan, e: _Emitter, module: str, source_name: str) -> list[str]:
    names = e.names
    renamed = sorted((k, n) for k, n in names.items() if n != k[0] and k not in (TRUE, DOES))
    relations = sorted((p.defined | set(p.undefined)) - {TRUE, DOES})
    exports = [
        "true/1",
        "does/2",
        *(e.pi(k) for k in relations),
        *(f"{n}/{a}" for n, a in sorted(HELPERS) if n not in _INSIDE),
    ]
    out = [
        comment_text(f"%   {module}: translated by gdl2pl from {source_name}, standalone."),
        "%   It needs no gdl2pl runtime: load it in plain SWI-Prolog (swipl FILE.pl).",
        "%",
        *how_to_read(e.syntax).splitlines(),
        *_HOW_TO_READ.splitlines(),
        *(GUARD_NOTE.splitlines() if has_guard(p.rules) else []),
    ]
    if renamed:
        out.append("%")
        out.append("%   Renamed: a name SWI-Prolog or a helper below uses, or Prolog syntax")
        out.append("%   (:-, end_of_file), gets the prefix r_; (foo), with no arguments, is foo_:")
        for (n, a), new in renamed:
            out.append(comment_text(f"%     {n}/{a} is {quote_atom(new)}/{a}"))
    out += ["", f":- module({quote_atom(module)},"]
    out += [f"          [ {exports[0]},"]
    out += [f"            {x}," for x in exports[1:-1]]
    out += [f"            {exports[-1]}", "          ])."]
    out += [
        ":- use_module(library(lists), [member/2]).",
        ":- use_module(library(random), [random_member/2]).",
        "",
        "% The state and the joint move.",
        ":- dynamic([true/1, does/2], [incremental(true)]).",
    ]
    if p.undefined:
        out.append("% Relations used but never defined: they are always false.")
        out += _directive("dynamic", [e.pi(k) for k in p.undefined])
    heads = sorted(e.pi(k) for k in p.defined)
    if heads:
        out += _directive("discontiguous", heads)
    changing = p.state_dependent | p.move_dependent
    tabled = sorted(k for k in p.derived if k in changing)
    fixed = sorted(k for k in p.derived if k not in changing)
    if tabled:
        out.append("% Depending on the state or the joint move: tables follow true/1 and does/2.")
        out += _directive("table", [e.pi(k) + " as incremental" for k in tabled])
    if fixed:
        out.append("% Independent of the state.")
        out += _directive("table", [e.pi(k) for k in fixed])
    return [*out, ""]


@dataclass(frozen=True)
class StandaloneModule:
    """A standalone module: its ``text``, and where each clause starts in it (1-based
    line, the flat rule it comes from), as ``Translation.origins``."""

    text: str
    origins: tuple[tuple[int, FlatRule], ...]


# Alike on purpose: ``standalone_module`` and ``standalone`` take ``translate``'s
# parameters, one by one, since the standalone module is the other form of the same
# translation (``duplicates`` pairs the three signatures by shape).
def standalone_module(
    d: Description,
    module: str = "game",
    source_name: str | None = None,
    syntax: str | None = None,
) -> StandaloneModule:
    """The standalone module of a (case-normalized) description (see the module doc),
    its comments quoting the rules in ``syntax`` (default: the syntax ``d`` was read in),
    with the line of every clause.

    Raises ``TranslationError`` for rules that have no meaning (as ``translate``)."""
    source = source_name or "game"
    p = plan(flatten_rules(d))
    names = standalone_names(p.defined | set(p.undefined) | {TRUE, DOES})
    e = _Emitter(p, names, source, answer_syntax(d, syntax))
    out = _declarations(p, e, module, source)
    out += _HELPERS.splitlines()
    out += ["", "% ---- The game ----", ""]
    line = sum(chunk.count("\n") + 1 for chunk in out)
    origins: list[tuple[int, FlatRule]] = []
    for r in p.rules:
        chunk = e.clause(r) + "\n"
        origins.append((line + 2, r))  # under its one-line comment
        line += chunk.count("\n") + 1
        out.append(chunk)
    return StandaloneModule("\n".join(out), tuple(origins))


def standalone(
    d: Description,
    module: str = "game",
    source_name: str | None = None,
    syntax: str | None = None,
) -> str:
    """The text of ``standalone_module``."""
    return standalone_module(d, module, source_name, syntax).text
