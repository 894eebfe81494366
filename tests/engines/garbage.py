"""A fake engine that answers with text that is not JSON."""

import sys

sys.stdin.read()
print("hello, I am not a GDL engine")
