"""Explanations: why a ground atom holds in a state (its proof tree), or why not.

A teaching feature over the state machine: ``explain(sm, state, atom)`` asks the
meta-interpreter ``prolog/gdl_explain.pl`` about a game served by ``gdl2pl.bridge``.
"""

from .proof import ExplainError
from .proof import Explanation
from .proof import explain

__all__ = ["ExplainError", "Explanation", "explain"]
