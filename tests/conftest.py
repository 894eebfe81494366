"""Shared test helpers: where the public material (``../shared``) and the examples are, and
comparing descriptions up to a renaming of variables.

``../shared`` sits beside the repository. When it is missing a test that needs it is skipped,
except in CI (``CI=true``), where a missing corpus is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gdl2pl.syntax import (
    And,
    Clause,
    Description,
    Distinct,
    Fact,
    Func,
    Literal,
    Not,
    Or,
    Rule,
    Term,
    Var,
)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "gdl2pl" / "examples"


def shared_dir() -> Path:
    """``../shared``; skips the calling test if it is missing (fails it in CI)."""
    if not SHARED.is_dir():
        message = f"the shared material is missing: {SHARED}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SHARED


def shared_files(folder: str, pattern: str) -> list[str]:
    """Paths (relative to ``../shared``) matching ``pattern`` under ``folder``, sorted, for
    ``parametrize``. Without ``../shared`` it is ``[folder]``, so the test still runs once and
    ``shared_dir()`` skips or fails it instead of pytest quietly collecting nothing."""
    if not SHARED.is_dir():
        return [folder]
    return sorted(str(p.relative_to(SHARED)) for p in (SHARED / folder).glob(pattern))


@pytest.fixture
def shared() -> Path:
    """``../shared`` (see ``shared_dir``)."""
    return shared_dir()


def canonical_variables(d: Description) -> Description:
    """``d`` with the variables of each clause renamed ``V0``, ``V1``... in order of first
    occurrence: two descriptions are equal up to a consistent renaming of variables (per
    clause) exactly when their canonical forms are equal."""

    def clause(c: Clause) -> Clause:
        names: dict[str, str] = {}

        def term(t: Term) -> Term:
            if isinstance(t, Var):
                return Var(names.setdefault(t.name, f"V{len(names)}"))
            if isinstance(t, Func):
                return Func(t.name, tuple(map(term, t.args)))
            return t

        def literal(x: Literal) -> Literal:
            if isinstance(x, Not):
                return Not(literal(x.body))
            if isinstance(x, Distinct):
                return Distinct(term(x.left), term(x.right))
            if isinstance(x, Or):
                return Or(tuple(map(literal, x.disjuncts)))
            if isinstance(x, And):
                return And(tuple(map(literal, x.conjuncts)))
            return term(x)  # type: ignore[return-value]

        if isinstance(c, Fact):
            return Fact(term(c.head))  # type: ignore[arg-type]
        return Rule(term(c.head), tuple(map(literal, c.body)))  # type: ignore[arg-type]

    return Description(tuple(map(clause, d.clauses)))
