"""Terms in py form: the shape a GDL term takes crossing janus. A constant is its
name (a string; janus may hand back ``True``/``False`` for the atoms true/false), a
compound ``(f a b)`` the list ``["f", a', b']``."""

from __future__ import annotations

from typing import Any

from gdl2pl.syntax import Const
from gdl2pl.syntax import Func
from gdl2pl.syntax import Term
from gdl2pl.vocabulary import goal_number


def term_of_py(x: Any) -> Term:
    """The term a py-form value stands for."""
    if isinstance(x, list):
        return Func(symbol_of_py(x[0]), tuple(term_of_py(a) for a in x[1:]))
    return Const(symbol_of_py(x))


def py_of_term(t: Term, error: type[Exception] = ValueError) -> Any:
    """A ground term in py form; ``error`` (a message naming the variable) if it is not
    ground."""
    if isinstance(t, Func):
        return [t.name, *(py_of_term(a, error) for a in t.args)]
    if isinstance(t, Const):
        return t.name
    raise error(f"not ground: ?{t.name}")


def goal_values(per_role: list[list[str]]) -> list[list[int | str]]:
    """Goal values per role as the runtime gives them (text), numbers read as ints; a
    value that is not a number stays text."""
    return [[n if (n := goal_number(v)) is not None else v for v in vs] for vs in per_role]


def symbol_of_py(x: Any) -> str:
    """The name of a constant in py form."""
    return str(x).lower() if isinstance(x, bool) else str(x)
