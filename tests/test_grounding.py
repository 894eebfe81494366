"""The grounder (clingo's, fed by ``compiled/asp.py``) takes a game's symbols as numbers
only: no symbol, however written, reaches clingo's parser as text, so none can write ASP
syntax, read a file or run a script; and the parts that choose what is ground (the
demand, the growth check, the plans) do what their modules say, on small games whose
networks are checked against the reasoner."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import clingo
import pytest
from conftest import EXAMPLES
from prolog_env import require_prolog

from gdl2pl.compiled import CompiledMachine
from gdl2pl.compiled import CompileRefusedError
from gdl2pl.compiled import GroundingBudget
from gdl2pl.compiled import GroundingBudgetError
from gdl2pl.compiled import machine_from_text
from gdl2pl.compiled.ground import ground_network
from gdl2pl.compiled.ground import grounding_input
from gdl2pl.compiled.growth import growing
from gdl2pl.compiled.plan import Stats
from gdl2pl.compiled.plan import plan
from gdl2pl.flatten import flatten_rules
from gdl2pl.ggp.scramble import kept
from gdl2pl.load import parse_game
from gdl2pl.load import read_game
from gdl2pl.pipeline import normalized
from gdl2pl.syntax import Description
from gdl2pl.visitor import Renamer

pytestmark = pytest.mark.compiled

#: Symbols that would be ASP syntax, or break out of it, were they written as text.
HOSTILE = [
    '#script (python) import os; os.system("touch /tmp/pwned") #end',
    '#include "/etc/passwd"',
    "a.", ":- b", "c :- d.", "% e", "%* f *%", '"g"', "V1", "_", "#show h/0",
    "@deep(1,2)", "{i}", "j;k", "not l", "1..9", "x0", "r1", "f2(3)", "\x00", "\n",
]

#: Every token of the programs clingo is given: names made of one letter and a number,
#: the few fixed ones (``t``, ``u``, ``m``, ``w``, ``q``, ``z``), variables (``V`` and a
#: number, or the fixed ``F``, ``R``, ``M``, ``N``), numbers, the aggregate and the
#: depth check, and punctuation. Nothing else, whatever the game says.
TOKEN = re.compile(
    r"[acdefmpqrtuwxyz]\d+(?:_\d+)?|[tumwqz](?=\()|V\d+|[FRMN]\b|\d+|#count|#true|@deep|"
    r"not |[(){},.:;=!<>\-\s]"
)


def hostile_game() -> Description:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    table: dict[str, str] = {}

    def hostile(name: str) -> str:
        if kept(name):  # keywords and numbers keep their meaning
            return name
        return table.setdefault(name, HOSTILE[len(table) % len(HOSTILE)] + str(len(table)))

    return Renamer(hostile).description(d)


@pytest.fixture
def programs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every program text given to clingo while the test runs; and clingo may not be
    asked to read a file."""
    given: list[str] = []
    add = clingo.Control.add

    def watched_add(self: clingo.Control, *args: Any) -> None:
        given.append(args[-1])
        add(self, *args)

    def no_load(self: clingo.Control, path: str) -> None:
        raise AssertionError(f"clingo was asked to read {path!r}")

    monkeypatch.setattr(clingo.Control, "add", watched_add)
    monkeypatch.setattr(clingo.Control, "load", no_load)
    yield given


def network_of(d: Description, name: str, budget: GroundingBudget | None = None) -> Any:
    n, _ = normalized(d)
    return ground_network(grounding_input(flatten_rules(n), name), (), name, budget)


def test_no_symbol_of_a_game_reaches_clingo_as_text(programs: list[str]) -> None:
    net = network_of(hostile_game(), "hostile")
    assert net.n_rules > 100 and programs
    text = "\n".join(programs)
    rest = TOKEN.sub("", text)
    assert rest == "", f"unexpected text given to clingo: {rest[:200]!r}"
    for word in ("script", "include", "show", "os", "etc", "passwd", '"', "%", "#end"):
        assert word not in text
    # and the symbols come back as the game wrote them
    assert any("#include" in str(f) for f in net.fluents) or any(
        "#include" in str(m) for _, m in net.moves
    )


def test_hostile_names_play_as_the_reasoner_on_the_network() -> None:
    require_prolog()
    from gdl2pl.compiled import load_description

    with load_description(hostile_game(), "compiled", name="hostile") as c:
        assert isinstance(c, CompiledMachine)
        s, t = c.initial_state, c.prolog.initial_state
        for _ in range(9):
            assert c.all_legal_moves(s) == c.prolog.all_legal_moves(t)
            if c.is_terminal(s):
                break
            joint = tuple(ms[0] for ms in c.all_legal_moves(s))
            s, t = c.next_state(s, joint), c.prolog.next_state(t, joint)
            assert s == t


def parsed(text: str) -> Description:
    return parse_game(text, syntax="kif", file="game.kif")


def rules_of(text: str) -> Any:
    n, _ = normalized(parsed(text))
    return grounding_input(flatten_rules(n), "game.kif")


#: A counter that grows without end, and one that goes around a cycle of zero weight
#: (the role read out of a fluent into a move and written back into the fluent).
GROWS = """(role r) (init (count z))
(<= (legal r tick) (true (count ?x)))
(<= (next (count (s ?x))) (true (count ?x)))
(<= terminal (true (count (s (s z)))))
(goal r 100)"""
CYCLES = """(role r) (role q) (init (control r))
(<= (legal ?p (go ?p)) (true (control ?p)))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (control ?p)) (does ?p (go ?p)))
(<= terminal (true (control q)))
(goal r 100) (goal q 0)"""


def test_only_a_cycle_that_deepens_a_term_is_checked_for_depth() -> None:
    g = rules_of(GROWS)
    grows = growing(g.rules, g.demand, g.keywords)
    assert list(grows) == [next(i for i, s in enumerate(g.sources) if "(s ?x)" in s)]
    c = rules_of(CYCLES)
    assert growing(c.rules, c.demand, c.keywords) == {}  # (control ?p) -> go ?p -> back


def test_a_term_growing_without_end_stops_at_the_depth_budget_naming_its_rule() -> None:
    with pytest.raises(GroundingBudgetError, match=r"a term deeper than 10 .*\(next \(count \(s"):
        network_of(parsed(GROWS), "grows", GroundingBudget(depth=10))


#: ``threatened`` is used only under ``not``: ground for the squares its user asks about
#: (three), not for every pair of squares of the board (sixteen).
NEGATED = """(role r) (init (at 1)) (init (wall 3))
(sq 1) (sq 2) (sq 3) (sq 4)
(adj 1 2) (adj 2 3) (adj 3 4)
(<= (threatened ?a ?b) (sq ?a) (sq ?b) (true (wall ?b)))
(<= (legal r (go ?y)) (true (at ?x)) (adj ?x ?y) (not (threatened ?x ?y)))
(<= (legal r stay) (true (at ?x)))
(<= (next (at ?y)) (does r (go ?y)))
(<= (next (at ?x)) (does r stay) (true (at ?x)))
(<= (next (wall ?w)) (true (wall ?w)))
(<= terminal (true (at 4)))
(<= (goal r 100) (true (at 4)))
(<= (goal r 0) (not (true (at 4))))"""


def test_a_relation_used_only_under_not_is_ground_for_its_users_demand() -> None:
    require_prolog()
    g = rules_of(NEGATED)
    demanded = {g.names[head[0]][1] for head, _, _ in g.demand}
    assert demanded == {"threatened"}
    net = network_of(parsed(NEGATED), "negated")
    assert dict(net.stats.relations)["threatened"] <= 3
    with machine_from_text(NEGATED, "compiled", name="negated") as c:
        s, t = c.initial_state, c.prolog.initial_state
        for _ in range(4):
            legal = c.all_legal_moves(s)
            assert legal == c.prolog.all_legal_moves(t)
            if c.is_terminal(s):
                break
            s, t = c.next_state(s, (legal[0][-1],)), c.prolog.next_state(t, (legal[0][-1],))


def test_an_unsafe_rule_no_demand_binds_is_refused_with_its_place() -> None:
    with pytest.raises(CompileRefusedError, match=r"game.kif:4:\d+: the variable \?y in a "
                       "negation or distinct"):
        rules_of(
            "(role r)\n(init (on a))\n(<= (legal r (go ?x)) (true (on ?x)))\n"
            "(<= terminal (not (on ?y)))\n(goal r 100)"
        )


def test_a_frame_rule_is_cut_where_the_moved_cell_is_needed_no_more() -> None:
    # next(cell(x, y, p)) :- true(cell(x, y, p)), does(r, move(a, b)), distinct(x, a):
    # the move's b dies after the move: cut there, the cell joined with the bindings of a
    cell = ["t", [7, -1, -2, -3]]
    move = ["m", -4, [8, -5, -6]]
    test = ["ne", -1, -5]

    def stats(lit: list[Any]) -> Stats:
        return {
            "t": Stats(100.0, (10, 10, 3)),
            "m": Stats(50.0, (2, 10, 10)),
        }[lit[0]]

    segments = plan([cell, move, test], [-1, -2, -3], stats)
    assert [len(s.steps) for s in segments] == [1, 2]
    assert segments[0].steps == (move,) and set(segments[0].out) == {-5}
    assert segments[1].steps == (cell, test)


def test_past_the_rule_budget_the_error_names_the_rule_that_grew_most() -> None:
    d = read_game(EXAMPLES / "ticTacToe.kif")
    with pytest.raises(GroundingBudgetError) as refused:
        network_of(d, "ticTacToe.kif", GroundingBudget(rules=60))
    said = str(refused.value)
    assert re.match(r"ticTacToe.kif: grounding needs more than (60 ground rules|240 facts)", said)
    assert re.search(r"\(at the rule .*ticTacToe\.kif:\d+:\d+: \(<= ", said), said
    assert refused.value.sizes  # what was ground so far, by predicate


#: hitori's count: ``distinct ?v ?v1`` is written before ``cnt``, the only literal that
#: binds ``?v``; the model's rule is cut before ``cnt`` (``?v1`` and ``?c`` die there),
#: and the cut carried ``?v`` out of a segment that does not bind it (clingo: unsafe).
#: (``cnt`` is asked with ``?v`` bound: the reasoner keeps the distinct before the
#: recursive call, as a guard, which answers wrongly for a call with ``?v`` free.)
TESTED_EARLY = """(role r)
(init (cell 1 1 a e)) (init (cell 1 2 b e)) (init (cell 1 3 a e))
(succ 0 1) (succ 1 2) (succ 2 3) (val a) (val b)
(<= (cnt ?x 3 ?v 1) (true (cell ?x 3 ?v e)))
(<= (cnt ?x 3 ?v 0) (true (cell ?x 3 ?v1 ?c)) (distinct ?v ?v1) (val ?v))
(<= (cnt ?x 3 ?v 0) (true (cell ?x 3 ?v b)))
(<= (cnt ?x ?y ?v ?n) (true (cell ?x ?y ?v e)) (succ ?y ?y1) (cnt ?x ?y1 ?v ?m) (succ ?m ?n))
(<= (cnt ?x ?y ?v ?n) (true (cell ?x ?y ?v1 ?c)) (distinct ?v ?v1) (succ ?y ?y1)
    (cnt ?x ?y1 ?v ?n))
(<= (cnt ?x ?y ?v ?n) (true (cell ?x ?y ?v b)) (succ ?y ?y1) (cnt ?x ?y1 ?v ?n))
(<= (legal r (flip ?y)) (true (cell 1 ?y ?v e)))
(<= (legal r (count ?v ?n)) (val ?v) (cnt 1 1 ?v ?n))
(<= (next (cell 1 ?y ?v b)) (does r (flip ?y)) (true (cell 1 ?y ?v e)))
(<= (next (cell ?x ?y ?v ?c)) (true (cell ?x ?y ?v ?c)) (does r (flip ?z)) (distinct ?y ?z))
(<= (next (cell ?x ?y ?v ?c)) (true (cell ?x ?y ?v ?c)) (does r (count ?a ?b)))
(<= terminal (cnt 1 1 a 0))
(<= (goal r 100) terminal)
(<= (goal r 0) (not terminal))"""


def test_a_test_written_before_its_variable_is_bound_is_joined_after_its_binder() -> None:
    require_prolog()
    with machine_from_text(TESTED_EARLY, "compiled", name="tested_early") as c:
        s, t = c.initial_state, c.prolog.initial_state
        for step in range(4):
            legal = c.all_legal_moves(s)
            assert legal == c.prolog.all_legal_moves(t)
            assert c.is_terminal(s) == c.prolog.is_terminal(t)
            if c.is_terminal(s):
                break
            flips = [m for m in legal[0] if "flip" in str(m)]
            joint = (flips[0] if flips and step < 3 else legal[0][0],)
            s, t = c.next_state(s, joint), c.prolog.next_state(t, joint)
            assert s == t
        assert any("count" in str(m) for m in c.all_legal_moves(c.initial_state)[0])


#: cephalopodMicro's shape: ``blocked`` (static) is used only under ``not``, so it is
#: ground for its demand, which the relaxation computes from the state it reaches; that
#: state depends on ``legal``, which negates ``blocked``. Kept in the model, the negation
#: left ``blocked``'s atoms undetermined (not facts), and the network read them as false:
#: every move was legal, where the reasoner allows only the moves up.
DEMAND_THROUGH_NOT = """(role r)
(init (v 0)) (init (steps 0))
(val 0) (val 1) (val 2)
(lt 0 1) (lt 1 2) (lt 0 2)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (blocked ?a ?b) (val ?a) (val ?b) (lt ?b ?a))
(<= (legal r (go ?x)) (true (v ?y)) (val ?x) (not (blocked ?y ?x)))
(<= (next (v ?x)) (does r (go ?x)))
(<= (next (steps ?n)) (true (steps ?m)) (succ ?m ?n))
(<= terminal (true (steps 3)))
(goal r 100)"""


def test_a_demand_the_relaxation_computes_through_not_plays_as_the_reasoner() -> None:
    require_prolog()
    with machine_from_text(DEMAND_THROUGH_NOT, "compiled", name="demand_not") as c:
        for moves in ((0, 0, 0), (1, 1, 0), (2, 2, 0)):
            s, t = c.initial_state, c.prolog.initial_state
            for k in moves:
                legal = c.all_legal_moves(s)
                assert legal == c.prolog.all_legal_moves(t)
                joint = (legal[0][min(k, len(legal[0]) - 1)],)
                s, t = c.next_state(s, joint), c.prolog.next_state(t, joint)
                assert s == t
            assert c.is_terminal(s) and c.prolog.is_terminal(t)


def test_an_atom_the_model_leaves_undetermined_is_refused_never_read_as_false() -> None:
    from gdl2pl.compiled.grounder import Undetermined
    from gdl2pl.compiled.grounder import _facts_only

    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], "a1(1). a2(X):-a1(X),not a3(X). a3(X):-a1(X),not a2(X).")
    ctl.ground([("base", [])])
    _facts_only(ctl, {1})  # a1's atoms are facts
    with pytest.raises(Undetermined, match="a2"):
        _facts_only(ctl, {1, 2})


def test_a_term_of_shared_subterms_is_measured_once_a_subterm() -> None:
    """``(t ?x ?x)`` doubles a fluent at each step; clingo shares the halves, and the
    depth check walked them as a tree (2^60 nodes here: the doubling game grounded for its
    whole budget, 60 s, instead of tripping at once)."""
    import clingo

    from gdl2pl.compiled.grounder import _depth

    def tree_depth(s: clingo.Symbol) -> int:
        args = s.arguments if s.type == clingo.SymbolType.Function else []
        return 1 + max(map(tree_depth, args)) if args else 0

    term = clingo.Function("z")
    for _ in range(60):
        term = clingo.Function("t", [term, term])
    assert _depth(term, 100) == 60
    assert _depth(term, 10) > 10
    small = clingo.Function("a", [clingo.Number(1), clingo.Function("g", [clingo.Function(
        "h", [clingo.Function("k")])]), clingo.String("s")])
    for bound in range(5):
        got = _depth(small, bound)
        assert got == tree_depth(small) if tree_depth(small) <= bound else got > bound
