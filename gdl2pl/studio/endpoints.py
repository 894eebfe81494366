"""The studio's JSON endpoints (``docs/studio.md``), each a named function of one request
(``Call``) marked with the kind of work it is (``gdl2pl.studio.pipeline``):

- ``@front_end``: ``check``, ``convert``, ``translate``, ``graph`` read the request into a
  question for a worker process (``gdl2pl.studio.worker`` answers it);
- ``@reasoner``: ``play``, ``step``, ``explain``, ``analyze``, ``model`` ask Prolog, in a
  server thread, through ``gdl2pl.studio.api``.

Each reads its values with ``gdl2pl.studio.fields`` before it works: the game text
reaches Prolog only as text to parse and translate, moves and atoms only as terms.
"""

from __future__ import annotations

import time

from . import api
from . import fields
from .pipeline import Answer
from .pipeline import Call
from .pipeline import front_end
from .pipeline import reasoner
from .sessions import StudioError
from .why import why

# -- front-end work: a question for a worker process ------------------------------------------


@front_end
def check(call: Call) -> Answer:
    """The findings of the static checker."""
    return {"op": "check", **fields.game_fields(call.data, call.limits)}


@front_end
def convert(call: Call) -> Answer:
    """The game in the other syntax (``to``: ``kif`` or ``infix``)."""
    d = call.data
    to = d.get("to")
    if to not in ("kif", "infix"):
        raise StudioError('\'to\' must be "kif" or "infix"')
    return {
        "op": "convert",
        "text": fields.text(d, call.limits),
        "syntax": fields.syntax(d),
        "to": to,
    }


@front_end
def translate(call: Call) -> Answer:
    """The game's Prolog (``standalone``: the module that runs without gdl2pl)."""
    standalone = call.data.get("standalone", False)
    if not isinstance(standalone, bool):
        raise StudioError("'standalone' must be true or false")
    return {
        "op": "translate",
        **fields.game_fields(call.data, call.limits),
        "standalone": standalone,
    }


@front_end
def graph(call: Call) -> Answer:
    """The dependency graph of the game's relations, drawn."""
    return {"op": "graph", **fields.game_fields(call.data, call.limits)}


# -- reasoner work: Prolog, in a server thread ----------------------------------------------


@reasoner
def play(call: Call) -> Answer:
    """The state after ``moves``, its legal moves and the board."""
    answers = fields.answer_syntax(call.data)
    rows = fields.row_first(call.data)
    with call.game() as g:
        return api.view(g, fields.moves(call.data, call.limits), answers, rows)


@reasoner
def step(call: Call) -> Answer:
    """One joint move: the ``chosen`` moves, the others' from their ``players``."""
    d, lim = call.data, call.limits
    chosen = fields.names(d, "chosen")
    players = fields.names(d, "players")
    for role, kind in players.items():
        if kind not in api.PLAYERS:
            raise StudioError(f"players: {role}: expected one of {', '.join(api.PLAYERS)}")
    moves = fields.moves(d, lim)
    if len(moves) >= lim.max_moves:
        raise StudioError(f"the history is full ({lim.max_moves} moves)", 422)
    answers = fields.answer_syntax(d)
    rows = fields.row_first(d)
    with call.game() as g:
        return api.step(g, moves, chosen, players, lim, answer_syntax=answers, row_first=rows)


@reasoner
def explain(call: Call) -> Answer:
    """Why ``atom`` holds or not after ``moves``, to ``depth``."""
    d, lim = call.data, call.limits
    atom = fields.string(d, "atom", 2_000)
    depth = d.get("depth", 3)
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        raise StudioError("'depth' must be a whole number >= 0")
    answers = fields.answer_syntax(d)
    with call.game() as g:
        moves = fields.moves(d, lim)
        states = g.replay(moves)
        depth = min(depth, lim.max_depth)
        return why(g.sm, states, moves, atom, depth, api.answers_in(g, answers))


@reasoner
def analyze(call: Call) -> Answer:
    """The well-formedness report, within the server's analysis budget."""
    started = time.monotonic()  # loading the game counts against the budget
    answers = fields.answer_syntax(call.data)
    with call.game() as g:
        return api.analyze(g, call.limits, started=started, answer_syntax=answers)


@reasoner
def model(call: Call) -> Answer:
    """The minimal model of a plain program, given its ``input`` model."""
    d, lim = call.data, call.limits
    inputs = d.get("inputs", [])
    if not isinstance(inputs, list) or not all(isinstance(x, str) and len(x) < 200 for x in inputs):
        raise StudioError("'inputs' must be a list of relation names")
    text = fields.text(d, lim)
    given = d.get("input", "")
    if not isinstance(given, str) or len(given) > lim.max_text:
        raise StudioError(f"'input' must be a text of at most {lim.max_text} characters")
    return api.model(text, fields.syntax(d), given, inputs, lim, fields.answer_syntax(d))


#: Every endpoint, served at ``/api/<name>``.
ENDPOINTS = (check, convert, translate, graph, play, step, explain, analyze, model)
