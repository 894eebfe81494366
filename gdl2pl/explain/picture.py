"""Proof trees as pictures: an explanation (``proof.Node``) drawn as Graphviz DOT,
Mermaid or SVG, with the same text escaping as ``gdl2pl graph``.

Each box is an atom or literal with its verdict, and the rule that derives it with its
place in the game file; an edge leads to each sub-proof (numbered by the rule's body
literal). What does not hold is drawn red, and a rule tried for it that fails is a
dashed box; what holds is drawn green.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdl2pl.drawing import dot_string
from gdl2pl.drawing import mermaid_text
from gdl2pl.drawing import svg_of_dot

from .proof import Node

FORMATS = ("dot", "mermaid", "svg")


@dataclass(frozen=True)
class Box:
    """One box of the picture: its lines of text, its style (holds, fails, attempt)
    and its parent box with the edge's label."""

    id: str
    lines: tuple[str, ...]
    style: str
    parent: str | None
    edge: str


def boxes(tree: Node) -> list[Box]:
    """The boxes of ``tree``, parents before children (depth first)."""
    out: list[Box] = []

    def visit(node: Node, parent: str | None, edge: str) -> None:
        box = Box(f"n{len(out)}", _lines(node), _style(node), parent, edge)
        out.append(box)
        numbered = node.kind == "rule"
        for i, child in enumerate(node.children, 1):
            visit(child, box.id, str(child.place or i) if numbered else "")

    visit(tree, None, "")
    return out


def _style(node: Node) -> str:
    if node.kind == "attempt":
        return "attempt"
    return "holds" if node.holds else "fails"


def _lines(node: Node) -> tuple[str, ...]:
    r = node.rule
    if node.kind == "attempt" and r is not None:
        failing = f" fails at literal {r.failing}" if r.failing is not None else " fails"
        return (f"rule {r.pos or '?'}{failing}", r.source)
    verdict = "holds" if node.holds else "does not hold"
    first = f"{node.text} {verdict}" + (f": {node.note}" if node.note else "")
    if r is None:
        return (first,)
    what = "fact" if r.fact else "rule"
    return (first, f"by {what} {r.pos or '?'}", r.source)


_DOT_STYLE = {
    "holds": 'style="rounded,filled", fillcolor="#d1e7dd", color="#146c43"',
    "fails": 'style="rounded,filled,bold", fillcolor="#f8d7da", color="#b02a37"',
    "attempt": 'style="rounded,dashed", color="#b02a37"',
}


def to_dot(tree: Node, title: str = "explanation") -> str:
    """The tree as a Graphviz digraph, the root at the top."""
    out = [f"digraph {dot_string(title)} {{", "  rankdir=TB;", "  node [shape=box];"]
    for b in boxes(tree):
        label = dot_string("\n".join(b.lines))
        out.append(f"  {b.id} [label={label}, {_DOT_STYLE[b.style]}];")
        if b.parent is not None:
            attrs = f" [label={dot_string(b.edge)}]" if b.edge else ""
            out.append(f"  {b.parent} -> {b.id}{attrs};")
    out.append("}")
    return "\n".join(out) + "\n"


def to_mermaid(tree: Node) -> str:
    """The tree as a Mermaid flowchart, the root at the top."""
    out = ["flowchart TD"]
    all_boxes = boxes(tree)
    for b in all_boxes:
        label = "<br/>".join(mermaid_text(line) for line in b.lines)
        out.append(f'  {b.id}["{label}"]')
        if b.parent is not None:
            arrow = f"-- {mermaid_text(b.edge)} -->" if b.edge else "-->"
            out.append(f"  {b.parent} {arrow} {b.id}")
    out.append("  classDef holds fill:#d1e7dd,stroke:#146c43")
    out.append("  classDef fails fill:#f8d7da,stroke:#b02a37,stroke-width:2px")
    out.append("  classDef attempt fill:#ffffff,stroke:#b02a37,stroke-dasharray:5 5")
    for style in ("holds", "fails", "attempt"):
        members = [b.id for b in all_boxes if b.style == style]
        if members:
            out.append(f"  class {','.join(members)} {style}")
    return "\n".join(out) + "\n"


def to_svg(tree: Node, title: str = "explanation", dot_program: str | None = None) -> str:
    """The DOT picture rendered by Graphviz (``GraphvizMissingError`` without it)."""
    return svg_of_dot(to_dot(tree, title), dot_program)


def render(tree: Node, fmt: str, title: str = "explanation") -> str:
    """The tree in ``fmt``: one of ``FORMATS``."""
    if fmt == "dot":
        return to_dot(tree, title)
    if fmt == "mermaid":
        return to_mermaid(tree)
    if fmt == "svg":
        return to_svg(tree, title)
    raise ValueError(f"unknown picture format {fmt!r}: expected one of {', '.join(FORMATS)}")
