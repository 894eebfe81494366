"""A fake engine that differs on one fluent: at match 0, step 2 it drops the first fluent
of the state and adds (ghost 1); everything else is gdl2pl's answer, re-spelled in upper
case and with extra spaces (which must not count as a difference)."""

import sys

from _relay import emit
from _relay import honest_records


def shout(kif: str) -> str:
    return kif.upper().replace("(", "( ").replace(" ", "  ")


records = honest_records(sys.argv[1], sys.stdin.read())
for r in records:
    if "state" not in r:
        continue
    state = r["state"]
    if r["match"] == 0 and r["step"] == 2:
        state = [*state[1:], "(ghost 1)"]
    r["state"] = [shout(f) for f in state]
    r["legal"] = {role.upper(): [shout(m) for m in ms] for role, ms in r["legal"].items()}
emit(records)
