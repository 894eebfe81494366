"""``w`` and ``(w)`` are two relations wherever gdl2pl states what a game means, as they
are to the reasoner (after ggp-base's prover: the proposition ``w``, and the relation
``w()`` of no arguments): the checker's graph (stratification, keyword dependencies,
undefined and unused relations, ``missing-terminal`` for ``(terminal)``), ``model`` (the
minimal and the well-founded model, the Herbrand base), ``graph`` (one node each,
labelled ``(w)`` or ``w()``), ``explain``, and the reachability relaxation (which merges
them by name, and stays sound). Each on a game with both spellings and on one with
``(w)`` alone (``tests/games/zero_arity/``); messages in both syntaxes."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from game_shapes import random_game
from prolog_env import require_prolog

from gdl2pl.analysis.model import herbrand
from gdl2pl.analysis.model import relations
from gdl2pl.analysis.relgraph import relation_graph
from gdl2pl.analysis.relgraph import to_dot
from gdl2pl.analysis.relgraph import to_mermaid
from gdl2pl.analysis.wellfounded import well_founded_model
from gdl2pl.bridge import StateMachine
from gdl2pl.check import Finding
from gdl2pl.check import check_description
from gdl2pl.check_facts import game_facts
from gdl2pl.cli import main
from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import dependency_graph
from gdl2pl.explain import explain
from gdl2pl.explain.proof import ExplainError
from gdl2pl.explain.proof import depends_on_does
from gdl2pl.explain.proof import parse_atom
from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import relation_atom
from gdl2pl.flatten import relation_key
from gdl2pl.infix import parse_infix
from gdl2pl.infix import print_infix
from gdl2pl.kif import parse_kif
from gdl2pl.kif import parse_kif_term
from gdl2pl.pipeline import compile_game
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term

GAMES = REPO / "tests" / "games" / "zero_arity"
BOTH = GAMES / "both.kif"
PARENTHESIZED = GAMES / "parenthesized.kif"

#: A small valid game the snippets of the checker's tests are added to.
BASE = """(role r) (init (c 0)) (succ 0 1)
(<= (legal r (go ?y)) (true (c ?x)) (succ ?x ?y))
(<= (next (c ?y)) (does r (go ?y)))
(<= terminal (true (c 1)))
"""


def read(path: Path) -> Description:
    return parse_kif(path.read_text(encoding="utf-8"), path.name)


def findings(text: str, syntax: str = "kif") -> list[Finding]:
    """The findings on ``text`` (KIF), read from KIF or from its infix printing."""
    d = parse_kif(text, "t.kif")
    if syntax == "infix":
        d = parse_infix(print_infix(d), "t.gdl")
    return check_description(d)


def codes(found: list[Finding]) -> set[str]:
    return {f.code for f in found}


# -- the checker ------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_w_under_not_in_a_rule_for_w_is_stratified(syntax: str) -> None:
    """``(<= w (not (w)))``: no cycle through not (w reads another relation); the
    warning on ``(w)`` says the two are apart and where ``w`` is, in the game's syntax."""
    found = findings(BASE + "(<= w (not (w)))\n(<= (goal r 100) w)\n", syntax)
    assert not codes(found) & {"negation-cycle", "unstratified-negation"}, found
    paren = "w()" if syntax == "infix" else "(w)"
    (zero,) = [f for f in found if f.code == "zero-arity-relation"]
    assert re.fullmatch(
        re.escape(f"{paren} is written as a relation with no arguments: it is another "
                  "relation than the proposition w, which the game also uses (line ")
        + r"\d+" + re.escape("); if the two are meant as one, drop the parentheses"),
        zero.message,
    ), zero.message
    (undefined,) = [f for f in found if f.code == "undefined-relation"]
    assert undefined.message.startswith(f"no rule or fact defines {paren} (did you mean w?)")


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_a_cycle_through_parenthesized_w_is_named_so(syntax: str) -> None:
    found = findings(BASE + "(<= (w) (true (c ?x)) (not (w)))\n(<= (goal r 100) (w))\n", syntax)
    (cycle,) = [f for f in found if f.code == "unstratified-negation"]
    paren = "w()" if syntax == "infix" else "(w)"
    assert f"{paren} is negated in a rule for {paren}" in cycle.message
    assert cycle.message.endswith(f"(recursion through {paren})")


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_the_recursion_restriction_names_parenthesized_w(syntax: str) -> None:
    rules = "(<= (w) (p ?y))\n(<= (p ?x) (succ ?x ?y) (w))\n(<= (goal r 100) (w))\n"
    (found,) = [f for f in findings(BASE + rules, syntax) if f.code == "recursion-restriction"]
    paren, atom = ("w()", "p(Y)") if syntax == "infix" else ("(w)", "(p ?y)")
    assert f"of {atom} (recursive with {paren}) is neither ground" in found.message


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_keyword_dependencies_follow_each_relation(syntax: str) -> None:
    """goal may read ``(w)`` when only ``w`` reads does (a valid game, once refused);
    through ``(w)`` itself it is refused, the relation named in the game's syntax."""
    apart = "(<= w (does r (go 1)))\n(<= (w) (true (c 1)))\n(<= (next done) w)\n"
    found = findings(BASE + apart + "(<= (goal r 100) (w))\n", syntax)
    assert not [f for f in found if f.is_error], found
    through = "(<= (w) (does r (go 1)))\n(<= (next done) (w))\n(<= (goal r 100) (w))\n"
    (error,) = [f for f in findings(BASE + through, syntax) if f.is_error]
    paren = "w()" if syntax == "infix" else "(w)"
    assert error.message == f"goal must not depend on does (through {paren})"


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_parenthesized_terminal_is_not_the_keyword(syntax: str) -> None:
    text = BASE.replace("(<= terminal", "(<= (terminal)") + "(goal r 100)\n"
    found = findings(text, syntax)
    paren = "terminal()" if syntax == "infix" else "(terminal)"
    (missing,) = [f for f in found if f.code == "missing-terminal"]
    assert missing.message == (
        f"the game defines no terminal ({paren}, written with parentheses, is another relation)"
    )
    (zero,) = [f for f in found if f.code == "zero-arity-relation"]
    assert zero.message.endswith("it is another relation than the keyword terminal: drop the "
                                 "parentheses")
    (unused,) = [f for f in found if f.code == "unused-relation"]
    assert re.match(re.escape(f"the relation {paren} (defined on line ") + r"\d+\) is never used",
                    unused.message), unused.message
    # with the keyword defined too, the game is valid, and the warning says where it is
    both = text + "(<= terminal (true (c 0)))\n"
    assert not [f for f in findings(both, syntax) if f.is_error]


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_parenthesized_w_alone_keeps_its_advice(syntax: str) -> None:
    text = PARENTHESIZED.read_text(encoding="utf-8")
    found = findings(text, syntax)
    assert {f.code for f in found} == {"zero-arity-relation"}
    paren = "w()" if syntax == "infix" else "(w)"
    assert all(f.message == f"{paren} is written as a relation with no arguments: write it as "
               "the proposition w (drop the parentheses)" for f in found), found
    assert [f.code for f in findings(BOTH.read_text(encoding="utf-8"), syntax)
            if f.is_error] == []


def shape_games(n: int) -> Iterator[tuple[int, str]]:
    """Generated games (``tests/game_shapes.py``: stratified by construction) in which one
    relation name is written both ``w`` and ``(w)``."""
    for seed in range(n):
        text = random_game(random.Random(seed))
        sentences = [s for f in game_facts(parse_kif(text)).clauses for s in f.sentences]
        bare = {s.name for s in sentences if isinstance(s, Const)}
        if any(isinstance(s, Func) and not s.args and s.name in bare for s in sentences):
            yield seed, text


def test_the_checker_stratifies_generated_games_as_the_engines_do() -> None:
    """Over the shapes' games with both spellings of a name, the checker finds no cycle
    through not and no forbidden keyword dependency (with ``w`` and ``(w)`` merged, about
    half of them had a cycle through not)."""
    games = list(shape_games(120))
    assert len(games) > 20
    for seed, text in games:
        found = check_description(parse_kif(text))
        bad = codes(found) & {"negation-cycle", "unstratified-negation", "keyword-dependency"}
        assert not bad, (seed, text, [f.message for f in found if f.code in bad])


def test_the_checkers_graph_has_a_node_for_each() -> None:
    g = dependency_graph(read(BOTH), zero_arity_apart=True)
    assert {"w", "w()", "u()"} <= set(g.nodes) and "u" not in g.nodes
    assert g.zero_arity == {"w()", "u()"}
    assert g.written("w()") == Func("w", ()) and g.written("w") == Const("w")
    assert g.node(parse_kif_term("(w)")) == "w()"
    strata = g.strata()
    assert strata is not None and strata["w()"] < strata["w"] < strata["u()"]
    merged = dependency_graph(read(BOTH))  # by name only: one node, a cycle through not
    assert "w()" not in merged.nodes and merged.strata() is None


# -- flattening: the order of bodies, and only the order -----------------------------------


def test_flattening_orders_by_the_graph_of_the_engines_and_the_order_changes_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bodies are ordered by the graph with ``(w)`` apart from ``w``; ordered by the
    name-only graph instead, each flat rule has the same literals, and the reasoner
    answers alike in every state of a few random plays."""
    require_prolog()
    import gdl2pl.flatten as flatten

    def by_name(
        d: Description, key: Callable[[str], str] = str, zero_arity_apart: bool = False
    ) -> DependencyGraph:
        return dependency_graph(d, key)

    moved = 0
    for _, text in shape_games(130):
        d = compile_game(parse_kif(text), translate=False).normalized
        apart = flatten_rules(d)
        with monkeypatch.context() as m:
            m.setattr(flatten, "dependency_graph", by_name)
            merged = flatten_rules(d)
        assert [sorted(map(str, r.body)) for r in apart] == [
            sorted(map(str, r.body)) for r in merged
        ]
        if apart == merged:
            continue
        moved += 1
        with monkeypatch.context() as m:
            m.setattr(flatten, "dependency_graph", by_name)
            with StateMachine(d, name="merged.kif") as sm:
                joints, answers = play(sm, random.Random(7))
        with StateMachine(d, name="apart.kif") as sm:
            assert play(sm, joints=joints) == (joints, answers), text
    assert moved  # the orders differ on some games (3 of these)


def play(
    sm: StateMachine, rng: random.Random | None = None, joints: list[list[list[Term]]] | None = None
) -> tuple[list[list[list[Term]]], list[str]]:
    """Three plays of up to 6 steps, their joint moves drawn by ``rng`` or replayed from
    ``joints`` (one list per play): the joint moves, and in every state its fluents,
    terminality, legal moves and goals."""
    drawn: list[list[list[Term]]] = []
    answers = []
    for i in range(3):
        s, moves = sm.initial_state, []
        for step in range(6):
            legal = sm.all_legal_moves(s)
            terminal = sm.is_terminal(s)
            answers.append(f"{sorted(map(str, s.fluents))} {terminal} {legal} {sm.goal_values(s)}")
            if terminal or not all(legal):
                break
            if joints is None:
                joint = [rng.choice(ms) for ms in legal]
            elif step < len(joints[i]):
                joint = joints[i][step]
            else:
                break
            moves.append(joint)
            s = sm.next_state(s, joint)
        drawn.append(moves)
    return drawn, answers


# -- model: the minimal and the well-founded model, the Herbrand base ---------------------

#: A program with both spellings: (w) holds, w does not; (z) does not, z does.
PROGRAM = "(v a)\n(<= (w) (v a))\n(<= z (w))\n(<= (z) (v b))\n(<= y (not (z)) z)\n"


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_the_minimal_model_lists_each_relation_apart(
    syntax: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_prolog()
    path = tmp_path / "both.kif"
    path.write_text(PROGRAM, encoding="utf-8")
    assert main(["model", str(path), "--answer-syntax", syntax]) == 0
    paren = (lambda n: f"{n}()") if syntax == "infix" else (lambda n: f"({n})")
    out = capsys.readouterr().out.splitlines()
    at = {line: i for i, line in enumerate(out)}
    assert out[at[f"% {paren('w')}/0: 1 atom"] + 1] == paren("w")
    assert out[at["% z/0: 1 atom"] + 1] == "z"
    assert f"% {paren('z')}/0: 0 atoms" in at and "% y/0: 1 atom" in at
    assert main(["model", str(path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"v": ["(v a)"], "w()": ["(w)"], "z": ["z"], "z()": [], "y": ["y"]}


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_the_model_of_parenthesized_w_alone(
    syntax: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_prolog()
    path = tmp_path / "alone.kif"
    path.write_text("(v a)\n(<= (w) (v a))\n(<= y (w))\n", encoding="utf-8")
    assert main(["model", str(path), "--answer-syntax", syntax]) == 0
    paren = "w()" if syntax == "infix" else "(w)"
    out = capsys.readouterr().out.splitlines()
    assert out[out.index(f"% {paren}/0: 1 atom") + 1] == paren and "% w/0: 1 atom" not in out
    assert main(["model", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"v": ["(v a)"], "w()": ["(w)"], "y": ["y"]}


#: Not stratified: (w) is undefined in its well-founded model, w true, (v) false.
UNSTRATIFIED = "(move a b) (move b a)\n(<= (w) (move ?x ?y) (not (w)))\n(<= w (not (v)))\n"


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_the_well_founded_model_prints_each_relation_apart(
    syntax: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_prolog()
    path = tmp_path / "wf.kif"
    path.write_text(UNSTRATIFIED, encoding="utf-8")
    assert main(["model", str(path), "--answer-syntax", syntax]) == 0
    w, v = ("w()", "v()") if syntax == "infix" else ("(w)", "(v)")
    out = capsys.readouterr().out.splitlines()
    at = out.index(f"% {w}/0: 0 atoms true, 1 undefined")
    assert out[at + 1 : at + 4] == [f"{w}  % undefined", "% w/0: 1 atom", "w"]
    assert f"% {v}/0: 0 atoms" in out
    assert main(["model", str(path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["true"]["w"] == ["w"] and answer["undefined"]["w()"] == ["(w)"]
    assert answer["true"]["w()"] == [] and answer["undefined"]["w"] == []


def test_the_well_founded_model_lists_each_relation_apart() -> None:
    """Once, (w) and w were shown as one relation named w, their atoms merged."""
    require_prolog()
    d = compile_game(parse_kif(UNSTRATIFIED), translate=False).normalized
    rels = list(relations(d))
    assert ("w()", 0) in rels and ("w", 0) in rels and ("v()", 0) in rels
    m = well_founded_model(d, rels)
    assert (m.true[("w()", 0)], m.undefined[("w()", 0)]) == ([], ["(w)"])
    assert (m.true[("w", 0)], m.undefined[("w", 0)]) == (["w"], [])


def test_the_herbrand_base_has_both_atoms() -> None:
    d = parse_kif(PROGRAM)
    assert set(herbrand(d).base()) == {"(v a)", "(v b)", "(w)", "z", "(z)", "y"}


def test_relation_atom_inverts_relation_key() -> None:
    for text in ["w", "(w)", "(w a b)"]:
        atom = parse_kif_term(text)
        args = atom.args if isinstance(atom, Func) else ()
        assert relation_atom(relation_key(atom), args) == atom


# -- graph: one node each, labelled as the game writes it ---------------------------------


@pytest.mark.parametrize(("syntax", "label"), [("kif", "(w)"), ("infix", "w()")])
def test_the_graph_draws_two_nodes(syntax: str, label: str) -> None:
    require_prolog()
    d = read(BOTH)
    g = relation_graph(d if syntax == "kif" else parse_infix(print_infix(d)), "both")
    assert {"w", "w()"} <= set(g.relations) and g.strata is not None
    assert g.label("w()") == label and g.label("w") == "w"
    assert ("w()", "w", True) in g.edges and ("w", "u()", True) in g.edges
    assert f'"w()" [label="{label}\\nstratum {g.strata["w()"]}"' in to_dot(g)
    assert f'"{label} (stratum {g.strata["w()"]})"' in to_mermaid(g)


@pytest.mark.parametrize(("syntax", "label"), [("kif", "(w)"), ("infix", "w()")])
def test_the_graph_of_parenthesized_w_alone(syntax: str, label: str) -> None:
    require_prolog()
    d = read(PARENTHESIZED)
    g = relation_graph(d if syntax == "kif" else parse_infix(print_infix(d)), "parenthesized")
    assert "w()" in g.relations and "w" not in g.relations and g.label("w()") == label
    assert ("w()", "goal", False) in g.edges
    assert f'"w()" [label="{label}\\nstratum {g.strata["w()"]}"' in to_dot(g)  # type: ignore[index]


# -- explain ------------------------------------------------------------------------------


def test_explain_asks_the_relation_written() -> None:
    """In both.kif after (go 1): (w) holds and w does not; a relation written in the
    other spelling than the game's is unknown, named in the answer's syntax."""
    require_prolog()
    with StateMachine.from_file(BOTH) as sm:
        state = sm.next_state(sm.initial_state, [sm.term("(go 1)")])
        paren, plain = parse_atom(sm, "(w)"), parse_atom(sm, "w")
        assert paren == Func("w", ()) and plain == Const("w")
        assert explain(sm, state, "(w)").holds and not explain(sm, state, "w").holds
        assert explain(sm, state, "(goal p 100)").holds
        with pytest.raises(ExplainError, match=r"unknown relation u; did you mean \(u\)\? "
                           r"\(the game's relations: .*\(u\), w, \(w\)\)"):
            parse_atom(sm, "u")
        with pytest.raises(ExplainError, match=r"unknown relation terminal\(\); did you mean "
                           r"terminal\? \(the game's relations: .*u\(\), w, w\(\)\)"):
            parse_atom(sm, "(terminal)", syntax="infix")
        with pytest.raises(ExplainError, match=r"unknown relation v\(\) \(the game's"):
            parse_atom(sm, "(v)", syntax="infix")


@pytest.mark.parametrize("syntax", ["kif", "infix"])
def test_explain_of_parenthesized_w_alone(syntax: str) -> None:
    """(w) holds after (go 1); w is no relation of the game, and the answer says which is."""
    require_prolog()
    paren = "w()" if syntax == "infix" else "(w)"
    with StateMachine.from_file(PARENTHESIZED) as sm:
        state = sm.next_state(sm.initial_state, [sm.term("(go 1)")])
        why = explain(sm, state, "(w)", syntax=syntax)
        assert why.holds and str(why).startswith(f"{paren} holds"), str(why)
        with pytest.raises(ExplainError, match=re.escape(f"unknown relation w; did you mean "
                                                         f"{paren}? (the game's relations: ")):
            parse_atom(sm, "w", syntax=syntax)


def test_explain_asks_for_the_joint_move_only_where_the_relation_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """w reads does, (w) does not: goal, over (w), is explained in the state the moves
    reach (once, merged with w, it was explained in the state before, and said not to
    hold)."""
    require_prolog()
    game = tmp_path / "moved.kif"
    game.write_text(BASE + "(<= w (does r (go 1)))\n(<= (next done) w)\n"
                    "(<= (w) (true (c 1)))\n(<= (goal r 100) (w))\n(<= (goal r 0) (not (w)))\n",
                    encoding="utf-8")
    with StateMachine.from_file(game) as sm:
        assert depends_on_does(sm, Const("w")) and not depends_on_does(sm, Func("w", ()))
        assert not depends_on_does(sm, parse_kif_term("(goal r 100)"))
    moves = tmp_path / "moves.json"
    moves.write_text('{"moves": [["(go 1)"]]}\n', encoding="utf-8")
    assert main(["explain", str(game), "(goal r 100)", "--moves", str(moves)]) == 0
    assert capsys.readouterr().out.startswith("(goal r 100) holds")
    assert main(["explain", str(game), "w", "--moves", str(moves)]) == 0  # in the state before
    assert main(["explain", str(game), "(w)"]) == 1  # needs no move: false at the start


# -- reachability: merged by name, and sound ---------------------------------------------

#: (w) is a fact and w reads the state: read by name, both depend on the state, so the
#: relaxation drops (not (w)) and lets skip through, which (w) never lets through.
RELAXED = BASE + """(w) (<= w (true (c 1)))
(<= (legal r skip) (true (c 0)) (not (w)))
(<= (legal r wait) (true (c 0)) (not w))
(<= (next (c 0)) (does r wait))
(goal r 100)
"""


def test_the_relaxation_merges_w_and_parenthesized_w_and_stays_sound() -> None:
    """Over the shapes' games with both spellings, and the game above, every fluent and
    legal move met in random plays is among the reachable ones (the supersets the
    adapters' action tables and length proofs rely on)."""
    require_prolog()
    from gdl2pl.adapters.reach import reachable_domains

    texts = [text for _, text in shape_games(12)] + [RELAXED]
    for text in texts:
        d = parse_kif(text)
        with StateMachine(d, name="reach.kif") as sm:
            roles = list(sm.roles)
            fluents, moves = met(sm)
        found = reachable_domains(d, roles, "reach.kif", 10_000)
        assert fluents <= found.fluents, text
        for r in roles:
            assert moves[r] <= found.moves[r], text
    # the merged reading is coarser here, never finer: skip is kept, though never legal
    assert Const("skip") in found.moves[Const("r")] and Const("skip") not in moves[Const("r")]


def met(sm: StateMachine) -> tuple[set[Term], dict[Term, set[Term]]]:
    """The fluents and each role's legal moves met in 20 random plays of up to 8 steps."""
    rng = random.Random(3)
    fluents: set[Term] = set()
    moves: dict[Term, set[Term]] = {r: set() for r in sm.roles}
    for _ in range(20):
        s = sm.initial_state
        for _ in range(8):
            fluents |= set(s.fluents)
            if sm.is_terminal(s):
                break
            legal = sm.all_legal_moves(s)
            for r, ms in zip(sm.roles, legal, strict=True):
                moves[r] |= set(ms)
            if not all(legal):
                break
            s = sm.next_state(s, [rng.choice(ms) for ms in legal])
    return fluents, moves
