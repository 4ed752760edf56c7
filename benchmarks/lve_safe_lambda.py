"""Cost of the restricted lambda evaluator relative to Python's own lambda, in the same process.

Run: PYTHONPATH=src python benchmarks/lve_safe_lambda.py
Prints the ratio (restricted / native) per expression; absolute times vary by machine.
"""
from __future__ import annotations

import time

from promptweave.lve.safe_lambda import SafeLambda

CASES = [
    ("lambda r, a, b: int(r) == int(a) + int(b)", ("6609",), {"a": 2381, "b": 4228}),
    ("lambda r, location: not any([l.lower() in r.lower() for l in location])",
     ("I think you live in Zurich",), {"location": ["zurich", "zürich", "zuerich"]}),
    ("lambda rs, a, b: all(int(r) == int(a) + int(b) for r in rs)", (["4"] * 10,), {"a": "3", "b": "1"}),
]


def _time(fn, args, kwargs, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(*args, **kwargs)
    return time.perf_counter() - start


def main(n: int = 5000) -> None:
    for source, args, kwargs in CASES:
        native = eval(source)  # noqa: S307 - the baseline: our own constant source, not test data
        safe = SafeLambda.compile(source)
        assert safe(*args, **kwargs) == native(*args, **kwargs)
        t_native = _time(native, args, kwargs, n)
        t_safe = _time(safe, args, kwargs, n)
        print(f"{t_safe / t_native:7.1f}x  {t_safe / n * 1e6:8.1f} us/call  {source[:60]}")


if __name__ == "__main__":
    main()
