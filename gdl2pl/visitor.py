"""Walking and rewriting the AST: the one traversal every pass over rules uses.

- ``walk(node)`` yields a node and everything inside it, in reading order (it lives in
  ``gdl2pl.syntax`` beside the node types; re-exported here);
- ``Transformer`` rebuilds a node bottom-up; a subclass overrides the method of the node
  types it changes (``const``, ``var``, ``func``, ``not_``, ``distinct``, ``or_``, ``and_``,
  ``fact``, ``rule``) and inherits the rebuilding of all others;
- ``Renamer`` is the common transformer that maps symbol names and variable names.

Nodes are immutable: a transformer returns new nodes and keeps every position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gdl2pl.syntax import And
from gdl2pl.syntax import Const
from gdl2pl.syntax import Description
from gdl2pl.syntax import Distinct
from gdl2pl.syntax import Fact
from gdl2pl.syntax import Func
from gdl2pl.syntax import Node
from gdl2pl.syntax import Not
from gdl2pl.syntax import Or
from gdl2pl.syntax import Rule
from gdl2pl.syntax import Var
from gdl2pl.syntax import children
from gdl2pl.syntax import variables
from gdl2pl.syntax import walk

__all__ = ["Node", "Renamer", "Transformer", "children", "symbol_names", "variables", "walk"]


class Transformer:
    """Rebuilds a node from its transformed parts. ``t(node)`` dispatches on the node's
    type; every method by default rebuilds its node from the transformed children.
    With ``keep_positions = False`` the rebuilt nodes carry no source position."""

    keep_positions = True

    def pos(self, node: Any) -> Any:
        """The position a rebuilt ``node`` carries."""
        return node.pos if self.keep_positions else None

    def __call__(self, node: Any) -> Any:
        method = _METHODS.get(node.__class__)
        if method is None:
            raise TypeError(f"not a GDL node: {node!r}")
        return getattr(self, method)(node)

    def description(self, d: Description) -> Description:
        return Description(tuple(self(c) for c in d.clauses), d.source, d.syntax)

    def const(self, node: Const) -> Any:
        return node

    def var(self, node: Var) -> Any:
        return node

    def func(self, node: Func) -> Any:
        return Func(node.name, tuple(self(a) for a in node.args), self.pos(node))

    def not_(self, node: Not) -> Any:
        return Not(self(node.body), self.pos(node))

    def distinct(self, node: Distinct) -> Any:
        return Distinct(self(node.left), self(node.right), self.pos(node))

    def or_(self, node: Or) -> Any:
        return Or(tuple(self(x) for x in node.disjuncts), self.pos(node))

    def and_(self, node: And) -> Any:
        return And(tuple(self(x) for x in node.conjuncts), self.pos(node))

    def fact(self, node: Fact) -> Any:
        return Fact(self(node.head), self.pos(node))

    def rule(self, node: Rule) -> Any:
        return Rule(self(node.head), tuple(self(b) for b in node.body), self.pos(node))


_METHODS: dict[type, str] = {
    Const: "const",
    Var: "var",
    Func: "func",
    Not: "not_",
    Distinct: "distinct",
    Or: "or_",
    And: "and_",
    Fact: "fact",
    Rule: "rule",
}


class Renamer(Transformer):
    """Renames every symbol (constant, function, relation) with ``symbol`` and every
    variable with ``variable``; connectives are structure, not names, and stay."""

    def __init__(
        self,
        symbol: Callable[[str], str],
        variable: Callable[[str], str] = lambda name: name,
    ) -> None:
        self.symbol = symbol
        self.variable = variable

    def const(self, node: Const) -> Const:
        return Const(self.symbol(node.name), self.pos(node))

    def var(self, node: Var) -> Var:
        return Var(self.variable(node.name), self.pos(node))

    def func(self, node: Func) -> Func:
        return Func(self.symbol(node.name), tuple(self(a) for a in node.args), self.pos(node))


def symbol_names(node: Node) -> list[str]:
    """The symbol names in ``node`` (constants, functions, relations), in reading order,
    with repeats."""
    return [n.name for n in walk(node) if n.__class__ is Const or n.__class__ is Func]  # type: ignore[union-attr]

