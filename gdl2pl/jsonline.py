"""One JSON value per line from a stranger, with its nesting bounded before it is parsed."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text``, ignoring those inside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_line(line: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(line)``, refusing with a ValueError a value nested deeper than
    ``max_depth`` (so that no input can exhaust the parser's recursion)."""
    depth = nesting_depth(line)
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} deep (at most {max_depth})")
    return json.loads(line)
