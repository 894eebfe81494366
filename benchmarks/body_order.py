"""Time to translate a rule whose body chains n literals (``(q ?v0 ?v1) (q ?v1 ?v2) ...``,
with a negation every seventh literal): the body ordering of ``gdl2pl.flatten`` must grow
linearly with n (issue 32: it was quadratic, a minute for 5,000 literals).

``--before FILE`` also times the ``order_body`` of another revision's ``flatten.py``
(e.g. ``git show 808818c:gdl2pl/flatten.py > /tmp/flatten_before.py``) on the same
bodies. Prints a Markdown table (seconds, best of ``--repeats``); ``--out FILE`` also
writes it there. Run from the source tree: ``python benchmarks/body_order.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gdl2pl.flatten import flatten_rules
from gdl2pl.flatten import order_body
from gdl2pl.kif import parse_kif
from gdl2pl.syntax import Rule


def chain(n: int) -> Rule:
    body = " ".join(f"(q ?v{i} ?v{i + 1})" for i in range(n))
    tests = " ".join(f"(not (r ?v{i}))" for i in range(0, n, 7))
    (rule,) = [c for c in parse_kif(f"(<= (p ?v0) {tests} {body})").clauses]
    assert isinstance(rule, Rule)
    return rule


def best(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="500,1000,2500,5000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", type=Path, help="another revision's flatten.py")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    before = None
    if args.before:
        spec = importlib.util.spec_from_file_location("flatten_before", args.before)
        assert spec and spec.loader
        before = importlib.util.module_from_spec(spec)
        sys.modules["flatten_before"] = before  # its dataclasses look themselves up
        spec.loader.exec_module(before)
    head = "| literals | order_body (s) | whole rule through flatten_rules (s) |"
    rows = [head + (" before: order_body (s) |" if before else ""), "| ---: | ---: | ---: |"]
    if before:
        rows[1] += " ---: |"
    for n in (int(x) for x in args.sizes.split(",")):
        rule = chain(n)
        body = list(rule.body)
        now = best(lambda b=body: order_body(list(b)), args.repeats)  # type: ignore[misc]
        d = parse_kif(f"(q 1 2) (r 3) {rule}")
        whole = best(lambda d=d: flatten_rules(d), args.repeats)  # type: ignore[misc]
        row = f"| {n:,} | {now:.3f} | {whole:.3f} |"
        if before:
            old = best(lambda b=body: before.order_body(list(b)), 1)  # type: ignore[misc,union-attr]
            row += f" {old:.2f} |"
        rows.append(row)
        print(rows[-1], flush=True)
    table = "\n".join(rows) + "\n"
    print()
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
