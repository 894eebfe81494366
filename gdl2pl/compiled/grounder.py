"""Grounding by clingo's grounder: a game's rules (``GroundingInput``) to the ground rules
of its network, read back as numbers (``GroundProgram``, which ``assemble.py`` makes the
``Network`` of).

Programs (``asp.py``) ground one after the other in one clingo control:

1. the model: the relaxation of the game (with the demand of demanded relations,
   ``demand.py``), all facts, and the statistics of the shapes of the dynamic rules'
   body literals;
2. the counts, for a rule whose plan (``plan.py``, from those statistics) cuts it into a
   chain of joins where the plan's estimates cannot tell whether the chain or the whole
   body makes the cheaper network: both are counted over the model;
3. the network: each dynamic rule as its chain or whole, over the model's fluents and
   moves as choices.

What clingo hands on is watched as it comes (``_Watch``): the facts of the model and
the ground rules of the network are counted against the budget, the clock read, and a
budget exceeded stops the grounding at once (an exception out of clingo's callback).
clingo is given program text only from ``asp.py`` (numbers and fixed letters), and no
file: it reads nothing, runs no script, and its messages go to a logger, never to a
terminal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import clingo

from . import asp
from .growth import growing
from .plan import Literal
from .plan import Segment
from .plan import Stats
from .plan import estimate
from .plan import is_generator
from .plan import plan

#: How often (in callbacks) the watch reads the clock.
CLOCK_EVERY = 2048

#: What a chain's atom costs the evaluator, in rules: every atom of a program may be
#: visited at every step, a rule only once the atom it watches holds (``_network.c``).
#: A rule whose whole-body instances number at most its chain's rules plus this many
#: per chain atom is ground whole.
ATOM_COST = 16

#: Where the plan's estimates of a chain's cost and of its rule's whole-body instances
#: are within a factor ``SURE`` of each other, and the chain has at most
#: ``COUNT_AT_MOST`` rows by the estimate, both are counted over the model (its rows, and
#: the whole body's instances as the paths through them: exact); elsewhere the estimates
#: choose (counting costs as much as grounding the chain, and far from the fence the
#: estimates agree with the counts).
SURE = 4.0
COUNT_AT_MOST = 100_000

#: the tags of a literal that depends on the state or the move
DYNAMIC = frozenset({"p", "t", "m", "nd", "nt", "nm"})


class GroundingStop(Exception):
    """A budget exceeded while clingo grounds: ``what`` (rules, facts, seconds,
    tripwire, memory) and the figure."""

    def __init__(self, what: str, figure: Any, part: str = "") -> None:
        super().__init__(what, figure)
        self.what = what
        self.figure = figure
        self.part = part
        self.sizes: list[tuple[str, int, int]] = []
        #: the rule at work, if known (its index; the demand's after the rules)
        self.rule: int | None = None


class Undetermined(Exception):
    """The relaxed model leaves atoms of ``predicate`` (a static relation's or a
    demand's, which the network reads as facts) undetermined."""

    def __init__(self, predicate: str) -> None:
        super().__init__(predicate)
        self.predicate = predicate


class _Watch:
    """clingo's observer: counts the model's facts and the network's rules against the
    budget (the clock is read every ``CLOCK_EVERY`` callbacks), and keeps the network's
    ground rules, each as (head, body): the head a list of one atom, the body a list of
    literals (an atom, negative for its negation)."""

    def __init__(self, max_facts: int, max_rules: int, deadline: float) -> None:
        self.max_facts = max_facts
        self.max_rules = max_rules
        self.deadline = deadline
        #: what is ground now: the model (its facts counted), the counts (the clock
        #: read only), the network (its rules kept)
        self.part = "model"
        self.facts = 0
        self.seen = 0
        self.rules: list[tuple[list[int], list[int]]] = []
        #: the budget that stopped the grounding (clingo passes on a callback's
        #: exception as one of its own making)
        self.stop: GroundingStop | None = None

    def rule(self, choice: bool, head: list[int], body: list[int]) -> None:
        if self.part == "network":
            if not choice:
                rules = self.rules
                rules.append((head, body))
                if len(rules) > self.max_rules:
                    self._stop("rules", self.max_rules)
                if not len(rules) % CLOCK_EVERY:
                    self._clock()
        elif self.part == "model":
            self.facts += 1
            if self.facts > self.max_facts:
                self._stop("facts", self.max_facts)
            if not self.facts % CLOCK_EVERY:
                self._clock()
        else:
            self.seen += 1
            if not self.seen % CLOCK_EVERY:
                self._clock()

    def _clock(self) -> None:
        if time.monotonic() > self.deadline:
            self._stop("seconds", 0)

    def _stop(self, what: str, figure: Any) -> None:
        self.stop = GroundingStop(what, figure)
        raise self.stop


class _Context:
    """What the programs call: ``@deep(I, T)``, 1 while the term ``T`` is within the
    depth budget; past it, the rule I is recorded (the first) and its instance dropped."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.tripped: int | None = None

    def deep(self, rule: clingo.Symbol, t: clingo.Symbol) -> clingo.Symbol:
        if self.tripped is None and _depth(t, self.max_depth) <= self.max_depth:
            return clingo.Number(1)
        if self.tripped is None:
            self.tripped = rule.number
        return clingo.Number(0)


def _depth(t: clingo.Symbol, bound: int) -> int:
    """The depth of a term (a constant 0), exact up to ``bound``, else a number past it.
    Each distinct subterm is looked at once: a term that doubles at each step, ``(t ?x
    ?x)``, is a chain of shared subterms to clingo, and walked as a tree it took
    exponential time (a game grounded for its whole budget instead of tripping)."""
    depth: dict[clingo.Symbol, int] = {}
    stack = [(t, 0, False)]  # a subterm, its distance from t, its arguments done
    while stack:
        s, d, done = stack.pop()
        if s in depth:
            continue
        if s.type != clingo.SymbolType.Function or not s.arguments:
            depth[s] = 0
        elif d + 1 > bound:
            return d + 1
        elif done:
            depth[s] = 1 + max(depth[a] for a in s.arguments)
        else:
            stack.append((s, d, True))
            stack.extend((a, d + 1, False) for a in s.arguments if a not in depth)
    return depth[t]


#: the tokens of a term's text as the programs write it (``asp.term``): a compound's
#: functor (with its opening parenthesis, if it has arguments), a constant, a closing
#: parenthesis (commas need no token)
_TOKEN = re.compile(r"f(\d+)(\()?|(\d+)|(\))")


def py(s: clingo.Symbol) -> Any:
    """A term of the programs in py form: a constant's id, or ``[functor id, arg...]``
    (read from its text: one call into clingo, and no recursion however deep it is)."""
    root: list[Any] = []
    stack = [root]
    for functor, opens, constant, _ in _TOKEN.findall(str(s)):
        if functor:
            node: list[Any] = [int(functor)]
            stack[-1].append(node)
            if opens:
                stack.append(node)
        elif constant:
            stack[-1].append(int(constant))
        else:
            stack.pop()
    return root[0]


@dataclass
class GroundProgram:
    """What the grounding gives ``assemble.py``, every atom by its clingo number.

    ``fluents``/``moves``: the model's, in py form, with their atoms (``t``/``m``);
    ``rules``: the network's ground rules, (head, body) as ``_Watch`` keeps them;
    ``derived``: atom -> ("r", relation id) for a relation's atom, ("x", rule, k) for
    the atom of a rule's chain (an atom with a rule without a body always holds); the
    keyword atoms:
    ``legal`` atom -> move index, ``next`` atom -> fluent index, ``terminal`` atoms,
    ``goals``/``sees`` as [role, value, atom] in py form; ``init``: fluent indices."""

    fluents: list[Any] = field(default_factory=list)
    fluent_atoms: list[int] = field(default_factory=list)
    moves: list[list[Any]] = field(default_factory=list)
    move_atoms: list[int] = field(default_factory=list)
    rules: list[tuple[list[int], list[int]]] = field(default_factory=list)
    #: seconds per pass (model, counts, network)
    phases: list[tuple[str, float]] = field(default_factory=list)
    derived: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    legal: dict[int, int] = field(default_factory=dict)
    next: dict[int, int] = field(default_factory=dict)
    terminal: list[int] = field(default_factory=list)
    goals: list[list[Any]] = field(default_factory=list)
    sees: list[list[Any]] = field(default_factory=list)
    init: list[int] = field(default_factory=list)
    model_facts: int = 0


@dataclass(frozen=True)
class Grounding:
    """The grounder's input as ``ground.py`` encodes it, and its limits."""

    rules: Sequence[list[Any]]
    demand: Sequence[list[Any]]  # the demand's rules (demand.py)
    keywords: Sequence[int]  # init, next, legal, terminal, goal, sees, role
    max_facts: int
    max_rules: int
    max_depth: int
    deadline: float


def _control() -> tuple[clingo.Control, list[str]]:
    messages: list[str] = []

    def log(code: clingo.MessageCode, text: str) -> None:
        if len(messages) < 20:
            messages.append(text[:300])

    # no argument of the game's: warnings off, no file given, messages to the logger
    return clingo.Control(["--warn=none"], logger=log, message_limit=20), messages


def ground(g: Grounding) -> GroundProgram:
    """The ground program of ``g`` (see the module doc); ``GroundingStop`` past a
    budget."""
    ctl, messages = _control()
    watch = _Watch(g.max_facts, g.max_rules, g.deadline)
    ctl.register_observer(watch, replace=True)  # type: ignore[arg-type]  # (duck-typed)
    # (replace: no solving follows, clasp needs no copy of the program)
    context = _Context(g.max_depth)
    phases: list[tuple[str, float]] = []

    def run(part: str, text: str) -> None:
        watch.part = part
        _ground(ctl, part, text, context, messages, watch, phases)

    dynamic = [(i, r) for i, r in enumerate(g.rules) if r[0] == "d"]
    stats = _model(ctl, g, [r[2] for _, r in dynamic], run)
    if context.tripped is not None:
        stop = GroundingStop("tripwire", g.max_depth, "model")
        stop.rule = context.tripped
        raise stop
    facts = watch.facts
    plans = {i: plan(body, asp.head_vars(head), stats) for i, (_, head, body) in dynamic}
    _choose(ctl, g, plans, stats, run)
    program = [r for i, (_, head, _) in dynamic for r in asp.chain_rules(i, head, plans[i])]
    run("network", asp.network_program(program))
    out = GroundProgram(rules=watch.rules, phases=phases, model_facts=facts)
    _read_atoms(ctl, g.keywords, {r[1][0] for r in g.rules if r[0] == "d"}, out)
    return out


def _model(
    ctl: clingo.Control,
    g: Grounding,
    bodies: list[list[Literal]],
    run: Callable[[str, str], None],
) -> Callable[[Literal], Stats]:
    """Ground the model, with the statistics of the shapes of ``bodies``' generators;
    what those statistics say of a literal."""
    shapes: dict[str, int] = {}
    counted: list[tuple[str, int]] = []
    for body in bodies:
        for lit in body:
            if is_generator(lit):
                text, n = asp.shape_of(lit)
                if text not in shapes:
                    shapes[text] = len(counted)
                    counted.append((text, n))
    run("model", asp.model_program(
        g.rules, g.demand, g.keywords, counted, growing(g.rules, g.demand, g.keywords)
    ))
    _facts_only(ctl, {r[1][0] for r in g.rules if r[0] == "s"})
    rows: dict[int, int] = {}
    distinct: dict[tuple[int, int], int] = {}
    for sa in ctl.symbolic_atoms.by_signature("q", 2):
        shape, n = (a.number for a in sa.symbol.arguments)
        rows[shape] = n
    for sa in ctl.symbolic_atoms.by_signature("q", 3):
        shape, k, n = (a.number for a in sa.symbol.arguments)
        distinct[(shape, k)] = n

    def stats(lit: Literal) -> Stats:
        text, n = asp.shape_of(lit)
        i = shapes[text]
        return Stats(float(rows.get(i, 0)), tuple(distinct.get((i, k), 0) for k in range(n)))

    return stats


def _facts_only(ctl: clingo.Control, static: set[int]) -> None:
    """The network reads the static relations and the demands from the model as facts:
    an atom of theirs that the model leaves undetermined (possible, not a fact: a cycle
    through ``not``) would be read as false. ``Undetermined`` then (the game is not
    compiled, never answered wrongly)."""
    atoms = ctl.symbolic_atoms
    for name, arity, _ in atoms.signatures:
        kind, number = name[:1], name[1:]
        if not number.isdigit() or not (kind == "d" or (kind == "a" and int(number) in static)):
            continue
        if not all(sa.is_fact for sa in atoms.by_signature(name, arity)):
            raise Undetermined(name)


def _choose(
    ctl: clingo.Control,
    g: Grounding,
    plans: dict[int, list[Segment]],
    stats: Callable[[Literal], Stats],
    run: Callable[[str, str], None],
) -> None:
    """Each rule cut into a chain keeps it, or is ground whole (one segment), whichever
    makes the cheaper network: counted over the model where the estimates are near and
    counting is cheap, else as the plan's estimates say (``SURE``, ``COUNT_AT_MOST``)."""
    unsure = []
    for i, segs in plans.items():
        if len(segs) < 2:
            continue
        whole, rows, atoms = estimate(segs, stats)
        cost = rows + ATOM_COST * atoms
        if cost / SURE <= whole <= cost * SURE and rows <= COUNT_AT_MOST:
            unsure.append(i)
        elif whole <= cost:
            plans[i] = _whole(g.rules[i])
    if not unsure:
        return
    counts = [r for i in unsure for r in asp.count_rules(i, plans[i])]
    run("counts", "\n".join(counts))
    for i in unsure:
        whole, chain, atoms = _counted(ctl, i, plans[i])
        if whole <= chain + ATOM_COST * atoms:
            plans[i] = _whole(g.rules[i])


def _counted(ctl: clingo.Control, i: int, segs: list[Segment]) -> tuple[int, int, int]:
    """A chained rule's whole-body instances (its paths through the segments), and its
    chain's ground rules and atoms (a segment static so far makes no atom, its rows no
    rule), from the counts' facts (``asp.count_rules``)."""
    paths: dict[tuple[str, ...], int] = {(): 1}
    chain = atoms = 0
    static = True
    for k, seg in enumerate(segs, start=1):
        static = static and not any(x[0] in DYNAMIC for x in seg.steps)
        n = len(seg.carried)
        reached: dict[tuple[str, ...], int] = {}
        rows = 0
        for sa in ctl.symbolic_atoms.by_signature(f"c{i}_{k}", n + len(seg.out) + 1):
            args = _arguments(str(sa.symbol))  # (one call into clingo, not one per term)
            m = int(args[-1])
            rows += m
            key = tuple(args[n:-1])
            reached[key] = reached.get(key, 0) + m * paths.get(tuple(args[:n]), 0)
        if not static:
            chain += rows
            if k < len(segs):
                atoms += len(reached)
        paths = reached
    return sum(paths.values()), chain, atoms


def _arguments(text: str) -> list[str]:
    """The arguments of an atom's text, as text (split at the commas of depth one)."""
    inner = text[text.index("(") + 1 : -1]
    if "(" not in inner:
        return inner.split(",")
    out: list[str] = []
    depth = start = 0
    for i, c in enumerate(inner):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(inner[start:i])
            start = i + 1
    out.append(inner[start:])
    return out


def _whole(rule: list[Any]) -> list[Segment]:
    """The plan of a rule ground whole: one segment."""
    _, head, body = rule
    return [Segment((), tuple(body), tuple(asp.head_vars(head)))]


def _ground(
    ctl: clingo.Control,
    part: str,
    text: str,
    context: _Context,
    messages: list[str],
    watch: _Watch,
    phases: list[tuple[str, float]],
) -> None:
    start = time.perf_counter()
    try:
        ctl.add(part, [], text)
        ctl.ground([(part, [])], context)
    except Exception as e:
        stop = watch.stop
        if stop is None and isinstance(e, MemoryError):
            stop = GroundingStop("memory", "clingo")
        if stop is not None:
            stop.part = part
            if stop.what == "rules":
                stop.sizes = _rule_sizes(ctl, watch.rules)
            elif stop.what != "memory":
                stop.sizes = _sizes(ctl)
            raise stop from None
        if not isinstance(e, RuntimeError):
            raise
        said = " ".join(messages) or str(e)
        if "bad_alloc" in said or "memory" in said.lower():
            raise GroundingStop("memory", "clingo", part) from None
        raise RuntimeError(f"clingo: {said}") from None
    phases.append((part, time.perf_counter() - start))


def _sizes(ctl: clingo.Control) -> list[tuple[str, int, int]]:
    """How many atoms each predicate has so far (for a budget's message)."""
    return [
        (name, arity, sum(1 for _ in ctl.symbolic_atoms.by_signature(name, arity)))
        for name, arity, _ in ctl.symbolic_atoms.signatures
    ]


def _rule_sizes(
    ctl: clingo.Control, rules: list[tuple[list[int], list[int]]]
) -> list[tuple[str, int, int]]:
    """How many of ``rules`` each predicate heads (for the rule budget's message)."""
    per_atom: dict[int, int] = {}
    for head, _ in rules:
        per_atom[head[0]] = per_atom.get(head[0], 0) + 1
    atoms = ctl.symbolic_atoms
    return [
        (name, arity, sum(per_atom.get(sa.literal, 0) for sa in atoms.by_signature(name, arity)))
        for name, arity, _ in atoms.signatures
    ]


def _read_atoms(
    ctl: clingo.Control, keywords: Sequence[int], dynamic: set[int], out: GroundProgram
) -> None:
    """The atoms of the network program, by what they stand for (a keyword relation
    without a dynamic rule is read from the model: its atoms are facts)."""
    atoms = ctl.symbolic_atoms
    fluent_of: dict[clingo.Symbol, int] = {}
    for sa in atoms.by_signature("t", 1):
        (fluent,) = sa.symbol.arguments
        fluent_of[fluent] = len(out.fluents)
        out.fluents.append(py(fluent))
        out.fluent_atoms.append(sa.literal)
    move_of: dict[tuple[clingo.Symbol, clingo.Symbol], int] = {}
    for sa in atoms.by_signature("m", 2):
        role, move = sa.symbol.arguments
        move_of[(role, move)] = len(out.moves)
        out.moves.append([py(role), py(move)])
        out.move_atoms.append(sa.literal)
    for sa in atoms.by_signature(f"a{keywords[0]}", 1):
        index = fluent_of.get(sa.symbol.arguments[0])
        if index is not None:
            out.init.append(index)
    answered = keywords[1:6]  # next, legal, terminal, goal, sees
    for name, arity, _ in atoms.signatures:
        kind, number = name[:1], name[1:]
        if kind == "x":
            rule, k = map(int, number.split("_"))
            for sa in atoms.by_signature(name, arity):
                out.derived[sa.literal] = ("x", rule, k)
        elif kind == "r" or (kind == "a" and int(number) in answered):
            rel = int(number)
            if kind == "a" and rel in dynamic:
                continue  # the relaxation's atoms of a dynamic keyword
            for sa in atoms.by_signature(name, arity):
                _relation_atom(sa, rel, kind == "a", keywords, fluent_of, move_of, out)


def _relation_atom(
    sa: clingo.SymbolicAtom,
    rel: int,
    static: bool,
    keywords: Sequence[int],
    fluent_of: dict[clingo.Symbol, int],
    move_of: dict[tuple[clingo.Symbol, clingo.Symbol], int],
    out: GroundProgram,
) -> None:
    """A relation's atom: what it answers, if it is a keyword's (a static keyword's fact
    is a rule without a body)."""
    _, nxt, legal, terminal, goal, sees = keywords[:6]
    lit = sa.literal
    out.derived[lit] = ("r", rel)
    if static:  # (a static relation's atoms are facts)
        out.rules.append(([lit], []))
    if rel == legal:
        role, move = sa.symbol.arguments
        index = move_of.get((role, move))
        if index is not None:
            out.legal[lit] = index
    elif rel == nxt:
        index = fluent_of.get(sa.symbol.arguments[0])
        if index is not None:
            out.next[lit] = index
    elif rel == terminal:
        out.terminal.append(lit)
    elif rel in (goal, sees):
        role, value = sa.symbol.arguments
        (out.goals if rel == goal else out.sees).append([py(role), py(value), lit])
