"""A front-end worker of the studio: a process (``python -m gdl2pl.studio.worker
MEGABYTES DOT_SECONDS``) that answers ``check``, ``convert``, ``translate`` and ``graph``
questions, one at a time, so that the server can stop one at its deadline by killing it
(Python work cannot be interrupted in a thread) and no such work holds the server's
interpreter.

The protocol is JSON, one object a line: the server writes ``{"op": ..., "text": ...,
"syntax": ..., "name": ..., "answer_syntax": ..., "to": ..., "standalone": ...}`` on the
worker's stdin; the worker answers ``{"answer": {...}}``
or ``{"error": message, "status": n, "line": l, "column": c}`` on its stdout. Its address
space is capped at MEGABYTES (``MemoryError`` is answered 422); it ends at the end of its
input, that is when the server goes.
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any
from typing import TextIO

from gdl2pl.errors import GdlError

from . import api
from .sessions import GAME_NAME
from .sessions import StudioError

#: The questions a worker answers.
OPS = ("check", "convert", "translate", "graph")


def answer(request: dict[str, Any], dot_seconds: float) -> dict[str, Any]:
    """The answer to one request (the server has checked its values)."""
    op, text, syntax = request["op"], request["text"], request["syntax"]
    name = request.get("name", GAME_NAME)
    answers = request.get("answer_syntax")
    if op == "check":
        return api.check(text, syntax, name, answers)
    if op == "convert":
        return api.convert(text, syntax, request["to"])
    if op == "translate":
        return api.translate(text, syntax, name, bool(request.get("standalone")), answers)
    if op == "graph":
        return api.graph(text, syntax, name, dot_seconds)
    raise StudioError(f"unknown question {op!r}")


def reply(request: dict[str, Any], dot_seconds: float) -> dict[str, Any]:
    """``answer`` as the line the server reads: every error a status, never a crash."""
    try:
        return {"answer": answer(request, dot_seconds)}
    except StudioError as e:
        return {"error": e.message, "status": e.status, "line": e.line, "column": e.column}
    except GdlError as e:
        err = api.game_error(e)
        return {"error": err.message, "status": 422, "line": err.line, "column": err.column}
    except (MemoryError, RecursionError):
        return {"error": "the text is too large or too deep for this server", "status": 422}
    except Exception as e:  # a bug: the server logs it and answers 500
        return {"error": f"internal error: {type(e).__name__}: {e}", "status": 500}


def serve(source: TextIO, sink: TextIO, dot_seconds: float) -> None:
    """Answer the requests of ``source`` (one JSON object a line) on ``sink``."""
    for line in source:
        out = reply(json.loads(line), dot_seconds)
        try:
            text = json.dumps(out)
        except MemoryError:
            text = json.dumps({"error": "the answer is too large for this server", "status": 422})
        sink.write(text + "\n")
        sink.flush()


def main(argv: list[str]) -> int:
    megabytes, dot_seconds = int(argv[0]), float(argv[1])
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    serve(sys.stdin, sys.stdout, dot_seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
