"""A fake engine that answers half of the records honestly, then dies."""

import sys

from _relay import emit
from _relay import honest_records

records = honest_records(sys.argv[1], sys.stdin.read())
emit(records[: len(records) // 2])
print("engine: segmentation fault in move generator", file=sys.stderr)
sys.exit(3)
