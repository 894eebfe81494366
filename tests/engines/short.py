"""A fake engine that leaves out the last record (and otherwise agrees)."""

import sys

from _relay import emit, honest_records

emit(honest_records(sys.argv[1], sys.stdin.read())[:-1])
