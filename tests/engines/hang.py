"""A fake engine that never answers for games whose path contains 'hang' (all games if
argv[2] is 'all'); otherwise it answers honestly."""

import sys
import time

from _relay import emit, honest_records

game = sys.argv[1]
stdin = sys.stdin.read()
if "buttons" in game or sys.argv[2:] == ["all"]:
    time.sleep(600)
emit(honest_records(game, stdin))
