"""The dependency graph of a description's relations, drawn as Graphviz DOT or Mermaid.

An edge goes from a relation used in a rule's body to the rule's head relation; edges from
atoms under ``not`` are dashed and labelled ``not``. Each relation is labelled with its
stratum (``DependencyGraph.strata``); recursive components are boxed; GDL's keyword
relations are drawn in another shape and colour, ``true`` and ``does`` (the inputs of
every game) in a third. A game whose negation is not stratified is drawn all the same,
since showing what is wrong is the drawing's job: each cycle through ``not`` (the negative
edge and the way back from its head to its body) is drawn in red, bold. ``svg`` runs
Graphviz's ``dot`` program when it is installed.

Relations are those the reasoner tells apart: ``(p)``, written with empty parentheses, is
another relation than the proposition ``p``, the node ``p()`` labelled ``(p)`` (``p()`` for
a game written in infix), beside the node ``p``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from gdl2pl.depgraph import GROUND_NOT_STRATIFIED
from gdl2pl.depgraph import GROUND_STRATIFIED
from gdl2pl.depgraph import NOT_STRATIFIED
from gdl2pl.depgraph import DependencyGraph
from gdl2pl.depgraph import dependency_graph
from gdl2pl.depgraph import negation_may_close
from gdl2pl.drawing import DOT_SECONDS
from gdl2pl.drawing import GraphTooLargeError
from gdl2pl.drawing import GraphvizMissingError
from gdl2pl.drawing import dot_string
from gdl2pl.drawing import mermaid_text
from gdl2pl.drawing import svg_of_dot
from gdl2pl.pipeline import compile_game
from gdl2pl.syntax import Description
from gdl2pl.vocabulary import INPUT_RELATIONS as INPUTS
from gdl2pl.vocabulary import KEYWORD_RELATIONS
from gdl2pl.written import answer_syntax
from gdl2pl.written import term_text

KEYWORDS = frozenset(KEYWORD_RELATIONS) - INPUTS


@dataclass(frozen=True)
class RelationGraph:
    """What is drawn: relations, edges (body, head, negative), strata (None when a
    cycle goes through ``not``), recursive components (those of more than one relation
    or with a self-loop), the edges on cycles through ``not`` (empty when the negation
    is stratified), and whether no ground atom can depend on its own negation through
    them (``gdl2pl.depgraph.negation_may_close``: ``check`` then warns, else it is an
    error). ``labels`` names the relations a drawing shows otherwise than by their node:
    ``(p)`` (or ``p()``) for the node ``p()``."""

    name: str
    relations: tuple[str, ...]
    edges: tuple[tuple[str, str, bool], ...]
    strata: dict[str, int] | None
    recursive: tuple[tuple[str, ...], ...]
    negative_cycles: tuple[tuple[str, str, bool], ...] = ()
    ground_stratified: bool = True
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, rel: str) -> str:
        """How the drawing names ``rel``: ``(p)`` or ``p()`` for the node ``p()``, else
        the node itself."""
        return self.labels.get(rel, rel)

    @property
    def cycle_note(self) -> str:
        """What the drawing of a game whose negation is not stratified says about it, in
        the words of ``gdl2pl check`` (``gdl2pl.depgraph.NOT_STRATIFIED``): no strata,
        the cycle drawn in red, and whether a ground atom may depend on its own negation."""
        ground = GROUND_STRATIFIED if self.ground_stratified else GROUND_NOT_STRATIFIED
        return f"no strata: {NOT_STRATIFIED}, drawn in red, {ground}"

    @property
    def cycle_relations(self) -> tuple[str, ...]:
        """The relations on a cycle through ``not``, in the graph's order."""
        on = {r for b, h, _ in self.negative_cycles for r in (b, h)}
        return tuple(r for r in self.relations if r in on)


def relation_graph(d: Description, name: str = "game", syntax: str | None = None) -> RelationGraph:
    """The graph of ``d``'s relations, ``(p)`` apart from ``p``, labelled in ``syntax``
    (default: the one ``d`` was read in)."""
    normalized = compile_game(d, name=name, translate=False).normalized
    g: DependencyGraph = dependency_graph(normalized, key=str, zero_arity_apart=True)
    edges = tuple(sorted({(e.body, e.head, e.negative) for e in g.edges}))
    rec = g.recursive()
    comps = tuple(tuple(sorted(c)) for c in g.components() if c & rec)
    ground = not any(negation_may_close(g, e) for e in g.negative_cycle_edges())
    written = answer_syntax(d, syntax)
    labels = {n: term_text(g.written(n), written) for n in sorted(g.zero_arity)}
    return RelationGraph(
        name, tuple(g.nodes), edges, g.strata(), comps, _negative_cycles(g), ground, labels
    )


def _negative_cycles(g: DependencyGraph) -> tuple[tuple[str, str, bool], ...]:
    """The edges of one cycle through each negative edge inside a component: the edge
    and a shortest way back from its head to its body."""
    out: set[tuple[str, str, bool]] = set()
    comp = g.component_of()
    for e in g.negative_cycle_edges():
        out.add((e.body, e.head, True))
        inside = comp[e.head]
        back: dict[str, str] = {}
        queue = deque([e.head])
        while queue and e.body not in back and e.body != e.head:
            r = queue.popleft()
            for nxt in g.used_by(r):
                if nxt in inside and nxt not in back and nxt != e.head:
                    back[nxt] = r
                    queue.append(nxt)
        r = e.body
        while r != e.head and r in back:
            out.add((back[r], r, _negative(g, back[r], r)))
            r = back[r]
    return tuple(sorted(out))


def _negative(g: DependencyGraph, body: str, head: str) -> bool:
    """Whether every edge from ``body`` to ``head`` is under ``not``."""
    return all(e.negative for e in g.edges if e.body == body and e.head == head)


def _kind(rel: str) -> str:
    return "keyword" if rel in KEYWORDS else "input" if rel in INPUTS else "relation"


def _label(g: RelationGraph, rel: str) -> str:
    if g.strata is None:
        return g.label(rel)
    return f"{g.label(rel)}\nstratum {g.strata[rel]}"


_q = dot_string


def to_dot(g: RelationGraph) -> str:
    style = {
        "keyword": 'shape=box, style="rounded,filled,bold", fillcolor="#cfe2ff"',
        "input": 'shape=box, style="filled", fillcolor="#fff3cd"',
        "relation": "shape=ellipse",
    }
    out = [f"digraph {_q(g.name)} {{", "  rankdir=BT;"]
    out.append(
        f"  label={_q(g.cycle_note)};"
        if g.strata is None
        else '  label="edges: body -> head; dashed = under not; boxes: recursive components";'
    )
    for i, comp in enumerate(g.recursive):
        out.append(f"  subgraph cluster_{i} {{")
        out.append(f'    label="recursive {i + 1}"; style=rounded; color="#888888";')
        out.extend(f"    {_q(r)};" for r in comp)
        out.append("  }")
    cycle = set(g.negative_cycles)
    on_cycle = set(g.cycle_relations)
    for rel in g.relations:
        mark = ', color="#c00000", penwidth=2.5' if rel in on_cycle else ""
        out.append(f"  {_q(rel)} [label={_q(_label(g, rel))}, {style[_kind(rel)]}{mark}];")
    for body, head, neg in g.edges:
        attrs = ['style=dashed, color="#c00000", label="not"'] if neg else []
        if (body, head, neg) in cycle:
            attrs = [*(attrs or ['color="#c00000"']), "penwidth=3"]
        shown = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"  {_q(body)} -> {_q(head)}{shown};")
    out.append("}")
    return "\n".join(out) + "\n"


def to_mermaid(g: RelationGraph) -> str:
    ids = {rel: f"r{i}" for i, rel in enumerate(g.relations)}
    out = ["flowchart BT"]

    def node(rel: str) -> str:
        text = g.label(rel) if g.strata is None else f"{g.label(rel)} (stratum {g.strata[rel]})"
        text = mermaid_text(text)
        shape = {"keyword": '(["{}"])', "input": '[/"{}"/]', "relation": '["{}"]'}[_kind(rel)]
        return ids[rel] + shape.format(text)

    boxed = {r for comp in g.recursive for r in comp}
    for i, comp in enumerate(g.recursive):
        out.append(f"  subgraph rec{i + 1} [recursive {i + 1}]")
        out.extend(f"    {node(r)}" for r in comp)
        out.append("  end")
    out.extend(f"  {node(rel)}" for rel in g.relations if rel not in boxed)
    cycle = set(g.negative_cycles)
    marked = []
    for i, (body, head, neg) in enumerate(g.edges):
        arrow = "-. not .->" if neg else "-->"
        out.append(f"  {ids[body]} {arrow} {ids[head]}")
        if (body, head, neg) in cycle:
            marked.append(str(i))
    out.append("  classDef keyword fill:#cfe2ff,stroke:#1f4e99,stroke-width:2px")
    out.append("  classDef input fill:#fff3cd")
    for kind in ("keyword", "input"):
        members = [ids[r] for r in g.relations if _kind(r) == kind]
        if members:
            out.append(f"  class {','.join(members)} {kind}")
    if marked:
        out.append("  classDef cycle stroke:#c00000,stroke-width:3px")
        out.append(f"  class {','.join(ids[r] for r in g.cycle_relations)} cycle")
        out.append(f"  linkStyle {','.join(marked)} stroke:#c00000,stroke-width:3px")
    if g.strata is None:
        out.append(f"  %% {g.cycle_note}")
    return "\n".join(out) + "\n"


def to_svg(g: RelationGraph, dot_program: str | None = None, seconds: float = DOT_SECONDS) -> str:
    """The DOT drawing rendered by Graphviz (raises ``GraphvizMissingError`` without it,
    ``GraphTooLargeError`` when it cannot be drawn within ``seconds``)."""
    return svg_of_dot(to_dot(g), dot_program, seconds)


__all__ = [
    "GraphTooLargeError",
    "GraphvizMissingError",
    "RelationGraph",
    "mermaid_text",
    "relation_graph",
    "to_dot",
    "to_mermaid",
    "to_svg",
]
