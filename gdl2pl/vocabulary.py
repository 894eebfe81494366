"""GDL's vocabulary, in one place: its keywords, the keyword relations with their arities,
the logical connectives, the input relations and the dependencies GDL forbids, with the
words GDL-II (games with chance and hidden information) adds: the role ``random`` and the
relations ``sees`` and ``percept``.

Every module that needs to know what a keyword is asks here. Names are in lowercase; GDL
is case-insensitive, so compare ``name.casefold()`` with them.
"""

from __future__ import annotations

#: The arity of each GDL keyword relation (GDL 2010: ``base`` and ``input`` included;
#: GDL-II: ``sees``, what a role perceives of a joint move, and ``percept``, which
#: declares a role's possible percepts as ``base`` declares fluents).
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
    "sees": 2,
    "percept": 2,
}

#: Logical connectives: never relation names, functions or constants.
CONNECTIVES = frozenset({"not", "or", "and", "distinct"})

#: GDL-II's role of chance: it chooses uniformly at random among its legal moves.
RANDOM_ROLE = "random"

#: Every name reserved by GDL (always spelled in lowercase after case normalization).
KEYWORDS = frozenset(KEYWORD_RELATIONS) | CONNECTIVES | {RANDOM_ROLE}

#: Relations a game may not define: they are the engine's inputs (the state and the move).
INPUT_RELATIONS = frozenset({"true", "does"})

#: Keyword relations that GDL 2010 added; games written before use the names freely.
GDL_2010_RELATIONS = frozenset({"base", "input"})

#: Keyword relations that GDL-II added; older games may use the names with other arities.
GDL_II_RELATIONS = frozenset({"sees", "percept"})

#: For each keyword relation, the relations it must not depend on (Love et al.).
FORBIDDEN_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "role": ("true", "does"),
    "base": ("true", "does"),
    "input": ("true", "does"),
    "percept": ("true", "does"),
    "init": ("true", "does", "next", "legal", "goal", "terminal"),
    "legal": ("does",),
    "goal": ("does",),
    "terminal": ("does",),
}


def is_keyword_relation(name: str, arity: int) -> bool:
    """True if ``name``/``arity`` is a GDL keyword relation (``base/1`` is; ``base/3``, in a
    game older than GDL 2010, is an ordinary relation)."""
    return KEYWORD_RELATIONS.get(name) == arity


#: The most digits a goal value may have and still be read as a number (Python reads no
#: longer decimal text into an int by default).
MAX_GOAL_DIGITS = 4000


def goal_number(value: str) -> int | None:
    """A goal value read as GDL writes numbers: a natural number in decimal digits (of at
    most ``MAX_GOAL_DIGITS``); None for anything else (``0x32``, ``+5``, ``1_0``, ``-1``,
    non-ASCII digits). Both engines, their playouts and GDL-II read goal values this way
    (the Prolog side: ``gdl_semantics:goal_number/2``)."""
    if value.isascii() and value.isdigit() and len(value) <= MAX_GOAL_DIGITS:
        return int(value)
    return None
