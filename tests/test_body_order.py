"""The safety ordering of rule bodies (``flatten.order_body``): the same order as its
definition (restated here as the straightforward quadratic procedure) on any body, and a
body of thousands of literals is ordered in one pass (issue 32, item 1)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from gdl2pl.flatten import BodyLiteral
from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import order_body
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import Const
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Func
from gdl2pl.syntax import Not
from gdl2pl.syntax import Sentence
from gdl2pl.syntax import Var
from gdl2pl.syntax import variables


def defined_order(
    body: list[BodyLiteral],
    head_variables: frozenset[str],
    recursive: Callable[[Sentence], bool],
    lookup: Callable[[Sentence], bool],
) -> tuple[list[BodyLiteral], set[str]]:
    """``order_body``'s contract, step by step: after each positive literal, every
    negation or ``distinct`` whose variables are bound comes out (in body order), then
    every non-recursive lookup so bound; before a recursive call, the negations written
    before it that the bound and head variables cover (one among them on a head
    variable not yet bound comes out there, and again once it is bound)."""
    positives = [(i, b) for i, b in enumerate(body) if isinstance(b, Const | Func)]
    pending = [(i, b) for i, b in enumerate(body) if not isinstance(b, Const | Func)]
    bound: set[str] = set()
    out: list[BodyLiteral] = []

    def names(b: BodyLiteral) -> set[str]:
        return {v.name for v in variables(b)}

    guarded: set[int] = set()

    def flush(allowed: set[str], before: int | None = None) -> None:
        for item in [
            (i, p) for i, p in pending if names(p) <= allowed and (before is None or i < before)
            and (before is None or i not in guarded)
        ]:
            if before is not None and not names(item[1]) <= bound:
                guarded.add(item[0])  # a guard on a head variable: asked again once bound
            else:
                pending.remove(item)
            out.append(item[1])

    def hoist() -> None:
        flush(bound)
        for item in [
            (i, p)
            for i, p in positives
            if lookup(p) and not recursive(p) and names(p) <= bound  # type: ignore[arg-type]
        ]:
            positives.remove(item)
            out.append(item[1])

    hoist()
    while positives:
        i, p = positives.pop(0)
        if recursive(p):  # type: ignore[arg-type]
            flush(bound | head_variables, before=i)
        out.append(p)
        bound.update(names(p))
        hoist()
    unbound = {n for _, p in pending for n in names(p)} - bound
    out.extend(p for _, p in pending)
    return out, unbound


VARS = [Var(f"V{i}") for i in range(6)]
term = st.one_of(st.sampled_from(VARS), st.sampled_from([Const("a"), Const("b")]))
sentence = st.builds(
    Func, st.sampled_from(["true", "does", "p", "q", "r"]), st.tuples(term, term)
) | st.sampled_from([Const("t"), Const("u")])
literal = st.one_of(
    sentence,
    st.builds(Not, sentence),
    st.builds(Distinct, term, term),
)


@settings(max_examples=400, deadline=None)
@given(
    body=st.lists(literal, max_size=14),
    head=st.sets(st.sampled_from([v.name for v in VARS]), max_size=3),
    recursive_names=st.sets(st.sampled_from(["p", "q", "r", "t"])),
    lookup_names=st.sets(st.sampled_from(["true", "does", "p", "q", "r", "t", "u"])),
)
def test_the_order_is_the_one_its_definition_gives(
    body: list[BodyLiteral],
    head: set[str],
    recursive_names: set[str],
    lookup_names: set[str],
) -> None:
    def recursive(s: Sentence) -> bool:
        return s.name in recursive_names

    def lookup(s: Sentence) -> bool:
        return s.name in lookup_names

    got = order_body(list(body), frozenset(head), recursive, lookup)
    assert got == defined_order(list(body), frozenset(head), recursive, lookup)


def test_a_rule_of_five_thousand_chained_literals_is_ordered_as_written() -> None:
    n = 5_000
    chain = " ".join(f"(q ?v{i} ?v{i + 1})" for i in range(n))
    tests = " ".join(f"(not (r ?v{i}))" for i in range(0, n, 7))
    d = parse_kif(f"(q 1 2) (r 3) (<= (p ?v0) {tests} {chain})")
    (rule,) = [r for r in flatten_rules(d) if r.head.name == "p"]
    assert len(rule.body) == n + len(range(0, n, 7))
    # each negation comes right after the literal binding its variable
    assert rule.body[0] == Func("q", (Var("v0"), Var("v1")))
    assert rule.body[1] == Not(Func("r", (Var("v0"),)))
    assert rule.body[-1] == Func("q", (Var(f"v{n - 1}"), Var(f"v{n}")))


def test_or_expanding_past_its_cap_in_all_is_refused_at_its_rule() -> None:
    # ten rules of twelve `or` (5 KB of text): 4,096 clauses each, a minute of translation
    import pytest

    from gdl2pl.flatten import MAX_EXPANDED_LITERALS
    from gdl2pl.flatten import TranslationError

    ors = " ".join(f"(or (a{i} ?x) (b{i} ?x))" for i in range(12))
    rules = [f"(<= (p{k} ?x) (n ?x) {ors})" for k in range(10)]
    text = "(n 1)\n" + "\n".join(rules)
    with pytest.raises(TranslationError, match="in all") as e:
        flatten_rules(parse_kif(text))
    assert e.value.pos is not None and e.value.pos.line == 2 + MAX_EXPANDED_LITERALS // 53_248
    one = parse_kif("(n 1)\n" + rules[0])
    assert len(flatten_rules(one)) == 1 + 4_096  # the fact; one such rule is still translated
    chain = " ".join(f"(q ?v{i} ?v{i + 1})" for i in range(30))
    with pytest.raises(TranslationError, match="body literals"):  # 4,096 x 43 in one rule
        flatten_rules(parse_kif(f"(<= (p ?v0) {ors} {chain})"))


#: A count along a row, recursive on the head variable ``?v`` that only the recursive
#: call binds, with a ``distinct`` on it written before that call; ``legal`` asks for
#: ``(cnt 1 1 ?v ?n)`` with ``?v`` unbound.
COUNT_ROW = """(role r)
(init (cell 1 a e)) (init (cell 2 b e)) (init (cell 3 a e))
(succ 0 1) (succ 1 2) (succ 2 3) (val a) (val b)
(<= (cnt 3 ?v 1) (true (cell 3 ?v e)))
(<= (cnt 3 ?v 0) (true (cell 3 ?w ?c)) (distinct ?v ?w) (val ?v))
(<= (cnt ?y ?v ?n) (true (cell ?y ?v e)) (succ ?y ?y1) (cnt ?y1 ?v ?m) (succ ?m ?n))
(<= (cnt ?y ?v ?n) (true (cell ?y ?w ?c)) (distinct ?v ?w) (succ ?y ?y1) (cnt ?y1 ?v ?n))
(<= (legal r (count ?v ?n)) (cnt 1 ?v ?n))
(<= (next (cell ?y ?v ?c)) (true (cell ?y ?v ?c)))
(<= terminal (true (cell 1 b e)))
(goal r 0)
"""


def test_a_distinct_guarding_a_recursion_on_an_unbound_head_variable_is_asked_again(
    tmp_path,
) -> None:
    """The reasoner kept ``(distinct ?v ?w)`` before the recursive call as a guard and
    never asked it again: called with ``?v`` unbound, ``?v \\== a`` held, and ``legal``
    had (count a 1) and (count b 0), which no ground instance of the rules gives (a
    occurs twice in the row, b once). Both engines answer the ground instances."""
    from prolog_env import require_prolog

    require_prolog()
    from gdl2pl.bridge import StateMachine
    from gdl2pl.compiled import load_machine

    game = tmp_path / "count_row.kif"
    game.write_text(COUNT_ROW)
    want = ["(count a 2)", "(count b 1)"]
    with StateMachine.from_file(game) as sm:
        assert sorted(map(str, sm.legal_moves(sm.initial_state, sm.roles[0]))) == want
    with load_machine(game, "compiled") as cm:
        assert sorted(map(str, cm.legal_moves(cm.initial_state, cm.roles[0]))) == want


#: The nodes reached from 0 along ``e`` without entering a ``q`` node, recursive on the
#: head variable ``?x`` that only the literal after the recursive call binds, with the
#: negation written before that call; ``reached`` asks for ``(r ?z)`` with ``?z``
#: unbound, and the game ends when a node other than 0 is reached (at once: 1, 2, 3).
REACH_AVOIDING = """(role a)
(init (s 0))
(<= (legal a go) (true (s ?x)))
(<= (next (s 1)) (does a go))
(q 5)
(e 0 1) (e 1 2) (e 2 3)
(r 0)
(<= (r ?x) (not (q ?x)) (r ?y) (e ?y ?x))
(<= (reached ?z) (r ?z))
(<= terminal (reached ?z) (distinct ?z 0))
(<= (goal a 100) terminal)
(<= (goal a 0) (not terminal))
"""


def test_a_negation_guarding_a_recursion_on_an_unbound_head_variable_prunes_no_answer(
    tmp_path,
) -> None:
    """The reasoner kept ``(not (q ?x))`` before the recursive call as a guard: called
    with ``?x`` unbound, ``\\+ q(X)`` failed (q has an answer), so ``(r ?z)`` had 0 only
    and the game did not end. The guard is now asked only when ``?x`` is bound, and
    again after the literal that binds it: the reasoner, its standalone module and the
    explanation all give the ground instances' answer, and so does the network (whose
    demand for ``q``, negated by the recursion, would have waited on ``r``: a cycle
    through ``not`` that refused the game)."""
    from prolog_env import require_prolog

    require_prolog()
    from gdl2pl.bridge import StateMachine
    from gdl2pl.compiled import load_machine
    from gdl2pl.explain import explain
    from gdl2pl.standalone import standalone

    game = tmp_path / "reach_avoiding.kif"
    game.write_text(REACH_AVOIDING)
    d = parse_kif(REACH_AVOIDING)
    (rule,) = [r for r in flatten_rules(d) if r.head.name == "r" and r.body]
    guard = Not(Func("q", (Var("x"),)))
    assert rule.body[0] == guard and rule.body[-1] == guard  # asked before and after
    with StateMachine.from_file(game) as sm:
        assert sm.is_terminal(sm.initial_state)
        assert sm.goals(sm.initial_state) == [100]
        why = explain(sm, sm.initial_state, "(r 3)")
        assert why.holds and str(why).count("(not (q 3)) holds") == 1  # shown once
        assert not explain(sm, sm.initial_state, "(r 5)").holds
    assert "( ground(X) -> \\+ q(X) ; true ),\n    r(Y),\n" in standalone(d)
    with load_machine(game, "compiled") as cm:
        assert cm.is_terminal(cm.initial_state) and cm.goals(cm.initial_state) == [100]
