"""A fake engine that leaves out one record (the last one; with argv[2] 'middle' the second
one of match 0) and otherwise agrees."""

import sys

from _relay import emit
from _relay import honest_records

records = honest_records(sys.argv[1], sys.stdin.read())
if sys.argv[2:3] == ["middle"]:
    emit(records[:1] + records[2:])
else:
    emit(records[:-1])
