"""An exercise for the studio, as a teacher writes it (``docs/studio.md``, *Exercises*): a
JSON object with the starter text and the properties the answer must have, which the page
checks with the analyses the server already answers (check, analyze, model, explain).

``read_exercise`` reads the file ``gdl2pl studio EXERCISE.json`` is given and checks its
shape (the page reads the same object from a link or a file, and judges each property by
its words; one it does not understand it says so, beside the others).
"""

from __future__ import annotations

import json
from typing import Any

#: The most properties, and characters of the title, the instructions and a property.
MAX_PROPERTIES = 50
MAX_TITLE = 200
MAX_INSTRUCTIONS = 5_000
MAX_PROPERTY = 500


class ExerciseError(ValueError):
    """The file is not an exercise: says what is wrong, and where."""


def read_exercise(text: str, where: str, max_text: int) -> dict[str, Any]:
    """The exercise in ``text`` (the file ``where``): ``{"gdl2pl_studio": 1, "text",
    "syntax", "name", "title", "instructions", "properties"}``, the starter ``text`` of at
    most ``max_text`` characters. ``ExerciseError`` says what is not as it should be."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ExerciseError(f"{where}: not JSON: {e}") from None
    except RecursionError:
        raise ExerciseError(f"{where}: the JSON is nested too deeply") from None
    if not isinstance(data, dict) or data.get("gdl2pl_studio") != 1:
        raise ExerciseError(f'{where}: an exercise is a JSON object with "gdl2pl_studio": 1')
    out: dict[str, Any] = {"gdl2pl_studio": 1}
    out["text"] = _string(data, "text", max_text, where, required=True)
    out["title"] = _string(data, "title", MAX_TITLE, where)
    out["instructions"] = _string(data, "instructions", MAX_INSTRUCTIONS, where)
    out["name"] = _string(data, "name", 100, where) or None
    syntax = data.get("syntax", "auto")
    if syntax not in ("auto", "kif", "infix"):
        raise ExerciseError(f'{where}: "syntax" must be "auto", "kif" or "infix"')
    out["syntax"] = syntax
    properties = data.get("properties", [])
    if not isinstance(properties, list) or not all(
        isinstance(p, str) and 0 < len(p) <= MAX_PROPERTY for p in properties
    ):
        raise ExerciseError(
            f'{where}: "properties" must be a list of sentences (at most {MAX_PROPERTY} '
            "characters each), such as \"blue is weakly winnable\""
        )
    if len(properties) > MAX_PROPERTIES:
        raise ExerciseError(f"{where}: more than {MAX_PROPERTIES} properties")
    out["properties"] = properties
    return out


def _string(data: dict[str, Any], key: str, cap: int, where: str, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ExerciseError(f'{where}: "{key}" must be a string')
    if len(value) > cap:
        raise ExerciseError(f'{where}: "{key}" is longer than {cap:,} characters')
    return value
