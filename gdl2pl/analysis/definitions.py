"""The properties ``analyze`` decides, as the course notes (``../shared/seeds``) define
them: the text of each definition, quoted in ``gdl2pl analyze --help`` and the tutorial.

Monotonicity and well-formedness are defined in the notes' German slides; the English
here is a word-for-word translation ("Eine Spielbeschreibung in GDL ist monoton, gdw.
jeder Spieler genau eine Bewertung in jedem vom Initialzustand aus erreichbaren Zustand
hat und die Bewertungen niemals geringer werden"; "... ist wohlgeformt, wenn es
terminiert und monoton, spielbar sowie schwach gewinnbar ist").
"""

from __future__ import annotations

#: The course notes' definitions (``../shared/seeds``), word for word, that each verdict
#: decides (see ``READING`` for how a verdict reads them).
DEFINITIONS = {
    "termination": "A game description in GDL terminates if and only if all infinite "
    "sequences of legal moves from the initial state of the game reach a terminal state "
    "after a finite number of steps.",
    "playability": "A game description in GDL is playable if and only if every role has at "
    "least one legal move in every non-terminal state reachable from the initial state.",
    "monotonicity": "A game description in GDL is monotonic if and only if every player has "
    "exactly one goal value in every state reachable from the initial state, and goal values "
    "never decrease.",
    "goal_definition": "(Not one of the notes' properties: what GGP's game managers ask.) "
    "In every reachable terminal state each role has exactly one goal value; the notes: "
    '"every game description does contain complete definitions for initial state, '
    'legality, termination, goalhood, and update".',
    "weak_winnability": "A game is weakly winnable if and only if, for every player, there "
    "is a sequence of joint moves of the players that leads to a terminating goal state for "
    "that player.",
    "strong_winnability": "A game is strongly winnable if and only if, for some player, "
    "there is a sequence of individual moves of that player that leads to a terminating "
    "goal state for that player.",
    "strong_winnability_strategy": "(Not the notes' definition: a strategy, where the "
    "notes speak of a sequence.) A game is strongly winnable by a strategy if, for some "
    "player, there is a way of choosing each of its moves after seeing the moves the others "
    "made before that leads to a terminating goal state for that player whatever the "
    "others do.",
    "well_formed": "A game description in GDL is well-formed if it terminates and is "
    "monotonic, playable and weakly winnable.",
}

#: How the verdicts read the definitions where the words leave a choice.
READING = (
    "A goal state for a player is a terminal state where its goal value is the maximum, "
    "100. Strong winnability is decided as the notes word it: one sequence of the player's "
    "own moves, fixed before the match, each legal whatever the others played before it, "
    "that leads to a goal state for the player whatever the others do. It is then decided "
    "for a strategy too, each move chosen after seeing the others' moves before it (AND-OR "
    "search over the graph), which game theory calls a forced win: a sequence is a "
    "strategy, so a game strongly winnable by a sequence is so by a strategy, not always "
    "the other way round (in nim, the winning reply depends on the other's move). "
    "Per-role verdicts combine as the definition says: for every player (weak "
    "winnability), for some player (strong winnability)."
)
