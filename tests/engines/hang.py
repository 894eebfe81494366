"""A fake engine that never answers for games with a role ``robot``, as buttons.kif (all games if
argv[2] is 'all'); otherwise it answers honestly. With argv[3] it first writes its process
id to that file."""

import os
import sys
import time

from _relay import emit
from _relay import honest_records

game = sys.argv[1]
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as f:
        f.write(str(os.getpid()))
stdin = sys.stdin.read()
with open(game, encoding="utf-8") as f:
    robot = "(role robot)" in f.read()
if robot or sys.argv[2:3] == ["all"]:
    time.sleep(600)
emit(honest_records(game, stdin))
