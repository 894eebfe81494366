"""The grounder's input written as ASP, the language of clingo's grounder.

Nothing of a game's text is ever written here: the input is numbers already
(``ground.py``), and every name below is a fixed letter and a number. A constant is its
id (an integer), a compound ``f<id>(...)``, a variable ``V<n>``. So no symbol of a game
can write ASP syntax: no ``#script``, ``#include``, string, comment or directive can come
out of this module whatever the game says.

Two programs are ground, one after the other, in one clingo control (``grounder.py``):

- the *model* program, the relaxation of the game: its relations as ``a<id>(...)``,
  a demanded relation's demand (``demand.py``) as ``d<id>(...)``,
  ``(true F)`` as ``u(F)`` for every fluent of ``init`` or ``next``, ``(does R M)`` as
  ``w(R, M)`` for every legal move, negated dynamic literals dropped. Its answer is the
  relaxed model, all facts (the static relations exact), and per shape of a body
  literal its statistics for the join plans: ``q(Shape, Rows)`` and ``q(Shape,
  Position, Distinct)``;
- the *network* program: every dynamic rule again, over the model: ``t(F)`` and
  ``m(R, M)`` are choices among the model's fluents and moves (possible, never certain),
  a dynamic relation is ``r<id>(...)``, a static one is read from the model's
  ``a<id>``, negation is kept, and each rule is written as its chain of joins
  (``plan.py``): ``x<rule>_<k>(...)`` the bindings carried out of its segment ``k``,
  ``y<rule>(...)`` its head's, so that ``assemble.py`` can tell its ground rules apart.

A rule that may build terms without end (``growth.py``: ``(next (count (succ ?x)))``
from ``(true (count ?x))``) calls ``@deep(I, T)`` on the term T it builds (I: the
rule's index): the grounder's context answers 1 while the term is within the depth
budget and records the rule past it, so that a relaxation growing without end stops.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from .plan import Segment
from .plan import literal_vars
from .plan import segments
from .plan import term_vars

Literal = list[Any]

#: the tags of a negated dynamic literal (dropped by the relaxation)
DYNAMIC_NEGATIONS = frozenset({"nd", "nt", "nm"})

#: the model program's names and the network program's: (static relation, dynamic
#: relation, true, does)
MODEL = ("a", "a", "u", "w")
NETWORK = ("a", "r", "t", "m")


def term(x: Any) -> str:
    """A term's text: a constant's id, ``V<n>`` for the variable -n, ``f<id>(...)``."""
    if isinstance(x, int):
        return str(x) if x >= 0 else f"V{-x}"
    out: list[str] = []
    stack: list[Any] = [x]  # iteratively: a term is as deep as the game makes it
    while stack:
        y = stack.pop()
        if isinstance(y, str):
            out.append(y)
        elif isinstance(y, int):
            out.append(str(y) if y >= 0 else f"V{-y}")
        elif len(y) == 1:
            out.append(f"f{y[0]}")
        else:
            out.append(f"f{y[0]}(")
            stack.append(")")
            for i in range(len(y) - 1, 0, -1):
                stack.append(y[i])
                if i > 1:
                    stack.append(",")
    return "".join(out)


def atom(a: Sequence[Any], prefix: str) -> str:
    """A relation atom ``[id, arg...]`` under a prefix (``a`` or ``r``)."""
    if len(a) == 1:
        return f"{prefix}{a[0]}"
    return f"{prefix}{a[0]}(" + ",".join(term(t) for t in a[1:]) + ")"


def literal(lit: Literal, names: tuple[str, str, str, str]) -> str:
    """A body literal of the grounder's input (tags as ``ground.py`` encodes them)."""
    static, dynamic, true, does = names
    tag = lit[0]
    if tag == "s":
        return atom(lit[1], static)
    if tag == "p":
        return atom(lit[1], dynamic)
    if tag == "ns":
        return "not " + atom(lit[1], static)
    if tag == "nd":
        return "not " + atom(lit[1], dynamic)
    if tag == "t":
        return f"{true}({term(lit[1])})"
    if tag == "nt":
        return f"not {true}({term(lit[1])})"
    if tag == "m":
        return f"{does}({term(lit[1])},{term(lit[2])})"
    if tag == "nm":
        return f"not {does}({term(lit[1])},{term(lit[2])})"
    if tag == "ne":
        return f"{term(lit[1])}!={term(lit[2])}"
    if tag == "eq":
        return f"{term(lit[1])}={term(lit[2])}"
    if tag == "dm":
        return atom(lit[1], "d")
    raise ValueError(f"a literal of unknown kind {tag!r}")


def rule(head: str, body: Iterable[str]) -> str:
    b = ",".join(body)
    return f"{head}:-{b}." if b else f"{head}."


# -- the model program -------------------------------------------------------------------


def shape_of(lit: Literal) -> tuple[str, int]:
    """A generator's shape in the model program (its text with its variables renamed
    ``V1``..``Vn`` in order of first occurrence: literals of one shape have the same
    statistics) and its number of variables."""
    vs = literal_vars(lit)
    renamed = _rename(lit, {v: -1 - i for i, v in enumerate(vs)})
    return literal(renamed, MODEL), len(vs)


def _rename(x: Any, to: dict[int, int]) -> Any:
    """``x`` with its variables renamed (ids and tags are never negative integers)."""
    if isinstance(x, int):
        return to.get(x, x)
    if isinstance(x, str):
        return x
    return [_rename(a, to) for a in x]


def model_program(
    rules: Sequence[list[Any]],
    demand: Sequence[list[Any]],
    keywords: Sequence[int],
    shapes: Sequence[tuple[str, int]],
    growing: Mapping[int, Sequence[int]],
) -> str:
    """The relaxation as a program, with the statistics of ``shapes`` (``shape_of``'s):
    ``q(I, Rows)`` and ``q(I, Position, Distinct)`` of the I-th. ``demand``: the
    demand's rules (``demand.py``), as ``d<relation>`` atoms. ``growing``: per rule that
    may build terms without end (the demand's numbered after the rules), its head's
    arguments checked by ``@deep`` (``growth.py``)."""
    out = []
    for i, (head, body, _) in enumerate(demand, start=len(rules)):
        checks = [f"@deep({i},{term(head[1 + j])})=1" for j in growing.get(i, ())]
        out += _projected(i, atom(head, "d"), head_vars(head), body, checks)
    demanded = {head[0] for head, _, _ in demand}
    for i, (kind, head, body) in enumerate(rules):
        b = [lit for lit in body if not _relaxed_away(lit, demanded)] if kind == "d" else body
        checks = [f"@deep({i},{term(head[1 + j])})=1" for j in growing.get(i, ())]
        out += _projected(i, atom(head, "a"), head_vars(head), b, checks)
    init, nxt, legal = keywords[0], keywords[1], keywords[2]
    out += [f"u(F):-a{init}(F).", f"u(F):-a{nxt}(F).", f"w(R,M):-a{legal}(R,M)."]
    for i, (text, n) in enumerate(shapes):
        names = [f"V{k}" for k in range(1, n + 1)]
        out.append(f"q({i},N):-N=#count{{{','.join(names) or '0'}:{text}}}.")
        out += [f"q({i},{k},N):-N=#count{{{v}:{text}}}." for k, v in enumerate(names)]
    return "\n".join(out)


def _relaxed_away(lit: Literal, demanded: set[int]) -> bool:
    """Whether a dynamic rule's literal is dropped by the relaxation: a negated dynamic
    literal, and the negation of a demanded relation, whose demand the relaxation itself
    computes (kept, the model would negate what it has not decided yet: a cycle through
    ``not`` that leaves the demand's atoms undetermined, not facts)."""
    return lit[0] in DYNAMIC_NEGATIONS or (lit[0] == "ns" and lit[1][0] in demanded)


def _projected(
    index: int, head: str, wanted: Sequence[int], body: Sequence[Literal], checks: list[str]
) -> list[str]:
    """A rule of the model, its body joined in its order and cut where two variables or
    more are needed no more (``plan.segments``; the model has no statistics yet, and
    where one variable dies a cut seldom pays for its atoms): the bindings carried out
    of segment k are the atoms ``y<index>_<k>``. Four players' numbers summed are then
    joins of a hundred rows, not a product of a hundred million."""
    segs = segments(body, wanted, dead=2)
    out = []
    prev = ""
    for k, seg in enumerate(segs, start=1):
        steps = ([prev] if prev else []) + [literal(x, MODEL) for x in seg.steps]
        if k == len(segs):
            out.append(rule(head, [*steps, *checks]))
        else:
            prev = _carried(f"y{index}_{k}", seg.out)
            out.append(rule(prev, steps))
    return out


# -- the chains' counts -----------------------------------------------------------------


def _vars(terms: Iterable[Any]) -> list[int]:
    out: list[int] = []
    for t in terms:
        term_vars(t, out)
    return out


def _tuple(vs: Sequence[int]) -> str:
    return ",".join(term(v) for v in vs) or "0"


def _carried(name: str, vs: Sequence[int]) -> str:
    return f"{name}({','.join(term(v) for v in vs)})" if vs else name


def count_rules(index: int, segments: Sequence[Segment]) -> list[str]:
    """What it takes to choose between a rule's chain and its whole body, over the
    relaxed model: for each segment k, ``c<index>_<k>(Carried..., Out..., M)``, one fact
    per pair of bindings carried in and out that some row joins, with the number M of
    its rows (a count of distinct tuples: exact, never past an integer). The whole
    body's instances are the paths through the segments (``grounder.py`` adds them up);
    the rows and the bindings carried out are the chain's ground rules and atoms. The
    bindings carried out of segment k are ``e<index>_<k>`` atoms."""
    out = []
    prev = ""
    for k, seg in enumerate(segments, start=1):
        steps = [x for x in seg.steps if x[0] not in DYNAMIC_NEGATIONS]
        body = ([prev] if prev else []) + [literal(x, MODEL) for x in steps]
        ends = [*seg.carried, *seg.out]
        pair = _carried(f"p{index}_{k}", ends)
        row = _vars([*seg.carried, *(a for x in steps for a in x[1:])])
        out.append(rule(pair, body))
        tuple_ = ",".join(term(v) for v in ends)
        count = f"c{index}_{k}({tuple_ + ',' if tuple_ else ''}M)"
        out.append(f"{count}:-{pair},M=#count{{{_tuple(row)}:{','.join(body) or '#true'}}}.")
        if k < len(segments):
            prev = _carried(f"e{index}_{k}", seg.out)
            out.append(rule(prev, [pair]))
    return out


# -- the network program -----------------------------------------------------------------


def chain_rules(index: int, head: Sequence[Any], segments: Sequence[Segment]) -> list[str]:
    """A dynamic rule as its chain of joins: one rule per segment, the bindings carried
    out of segment k as ``x<index>_<k>``, the last segment's rule the rule's head (a
    rule of one segment is written as it is)."""
    out = []
    prev = ""
    for k, seg in enumerate(segments, start=1):
        body = ([prev] if prev else []) + [literal(s, NETWORK) for s in seg.steps]
        last = k == len(segments)
        carried = atom(head, "r") if last else _carried(f"x{index}_{k}", seg.out)
        out.append(rule(carried, body))
        prev = carried
    return out


def network_program(rules: Iterable[str]) -> str:
    """The network program: ``t`` and ``m`` possible for the model's fluents and moves,
    and the dynamic rules (``chain_rules``)."""
    return "\n".join(["{t(F)}:-u(F).", "{m(R,M)}:-w(R,M).", *rules])


def head_vars(head: Sequence[Any]) -> list[int]:
    """The head's variables in order of first occurrence."""
    out: list[int] = []
    for a in head[1:]:
        term_vars(a, out)
    return out
