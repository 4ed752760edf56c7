"""Levenshtein distance (insertions, deletions and substitutions of one character, each costing 1)."""
from __future__ import annotations


def levenshtein(a: str, b: str) -> int:
    """The edit distance between ``a`` and ``b``; the common prefix and suffix are dropped first, and the shorter
    string indexes the rows, so a long reply against a short candidate stays cheap."""
    if a == b:
        return 0
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
