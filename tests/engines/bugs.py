"""A fake engine with three bugs, computing its own states as an engine would (on
gdl2pl's state machine, which it then spoils):

- at step 3 of each match it loses a blank cell (one that stays blank to the end of the
  match) from its state, and goes on from that state;
- at step 5 it leaves out the last legal move of the first role with more than one;
- in a terminal state it swaps the two roles' goal values.

Each bug is one divergence where it happens; the lost cell spoils every later state too.
"""

import json
import re
import sys

from gdl2pl.bridge import StateMachine
from gdl2pl.contract import MachineState
from gdl2pl.kif import kif_term

sm = StateMachine.from_file(sys.argv[1])
roles = [str(r) for r in sm.roles]


def lost_cell(state, moves):
    """A blank cell of ``state`` that no later move marks."""
    marked = {tuple(re.findall(r"\d+", m)) for jm in moves for m in jm if "mark" in m}
    for f in sorted(kif_term(f) for f in state):
        blank = f.startswith("(cell") and f.endswith(" b)")
        if blank and tuple(re.findall(r"\d+", f)) not in marked:
            return f
    return None


for n, line in enumerate(sys.stdin):
    moves = json.loads(line)["moves"]
    state = sm.initial_state
    for step in range(len(moves) + 1):
        if step == 3:
            gone = lost_cell(state, moves[step:])
            state = MachineState.from_fluents(f for f in state if kif_term(f) != gone)
        terminal, legal, goals = sm.state_info(state)
        legal = [sorted(kif_term(m) for m in ms) for ms in legal]
        values = [vs[0] if len(vs) == 1 else None for vs in goals]
        if step == 5:
            i = next(i for i, ms in enumerate(legal) if len(ms) > 1)
            legal[i] = legal[i][:-1]
        if terminal:
            values.reverse()
        move = moves[step] if step < len(moves) else None
        print(json.dumps({
            "match": n, "step": step,
            "state": sorted(kif_term(f) for f in state),
            "legal": dict(zip(roles, legal, strict=True)),
            "terminal": terminal,
            "goals": dict(zip(roles, values, strict=True)),
            "move": move,
        }), flush=True)
        if move is None:
            break
        state = sm.next_state(state, [sm.term(m) for m in move])
