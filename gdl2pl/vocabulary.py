"""GDL's vocabulary, in one place: its keywords, the keyword relations with their arities,
the logical connectives, the input relations and the dependencies GDL forbids.

Every module that needs to know what a keyword is asks here. Names are in lowercase; GDL
is case-insensitive, so compare ``name.casefold()`` with them.
"""

from __future__ import annotations

#: The arity of each GDL keyword relation (GDL 2010: ``base`` and ``input`` included).
KEYWORD_RELATIONS: dict[str, int] = {
    "role": 1,
    "base": 1,
    "input": 2,
    "init": 1,
    "true": 1,
    "does": 2,
    "next": 1,
    "legal": 2,
    "goal": 2,
    "terminal": 0,
}

#: Logical connectives: never relation names, functions or constants.
CONNECTIVES = frozenset({"not", "or", "and", "distinct"})

#: Every name reserved by GDL (always spelled in lowercase after case normalization).
KEYWORDS = frozenset(KEYWORD_RELATIONS) | CONNECTIVES

#: Relations a game may not define: they are the engine's inputs (the state and the move).
INPUT_RELATIONS = frozenset({"true", "does"})

#: Keyword relations that GDL 2010 added; games written before use the names freely.
GDL_2010_RELATIONS = frozenset({"base", "input"})

#: For each keyword relation, the relations it must not depend on (Love et al.).
FORBIDDEN_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "role": ("true", "does"),
    "base": ("true", "does"),
    "input": ("true", "does"),
    "init": ("true", "does", "next", "legal", "goal", "terminal"),
    "legal": ("does",),
    "goal": ("does",),
    "terminal": ("does",),
}


def is_keyword_relation(name: str, arity: int) -> bool:
    """True if ``name``/``arity`` is a GDL keyword relation (``base/1`` is; ``base/3``, in a
    game older than GDL 2010, is an ordinary relation)."""
    return KEYWORD_RELATIONS.get(name) == arity
