"""A line diff that stays near-linear on long prompts: common head and tail first, then unique-line anchors
(as patience diff chooses them), and :class:`difflib.SequenceMatcher` only on gaps small enough for it.

``SequenceMatcher(autojunk=False)`` is quadratic on long texts of repeated lines (few-shot prompts repeat
their descriptor lines hundreds of times); here no gap larger than :data:`MATCHER_CELLS` (lines of A × lines of
B) reaches it, and a larger gap with no anchor left is shown as removed then added, which is still a correct
diff, only a coarser one.
"""
from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence

Op = tuple[str, int, int, int, int]  # (tag, i1, i2, j1, j2) as SequenceMatcher.get_opcodes gives them
MATCHER_CELLS = 2_000_000


class DiffWork:
    """How much alignment work a diff did (``cells``: the sum of len(A gap) × len(B gap) handed to the
    matcher), so tests can bound it without timing anything."""

    def __init__(self) -> None:
        self.cells = 0


def line_opcodes(a: Sequence[str], b: Sequence[str], work: DiffWork | None = None) -> list[Op]:
    """Opcodes turning lines ``a`` into lines ``b`` (``equal`` / ``replace`` / ``delete`` / ``insert``)."""
    work = work or DiffWork()
    # lines as small ints: the matcher and the anchors compare numbers, not long strings
    ids: dict[str, int] = {}
    ia = [ids.setdefault(x, len(ids)) for x in a]
    ib = [ids.setdefault(x, len(ids)) for x in b]
    out: list[Op] = []
    _diff(ia, ib, 0, len(ia), 0, len(ib), out, work)
    return _merge(out)


def _diff(a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int, out: list[Op], work: DiffWork) -> None:
    # common head and tail, in linear time
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    if head:
        out.append(("equal", alo, alo + head, blo, blo + head))
        alo, blo = alo + head, blo + head
    tail = 0
    while ahi - tail > alo and bhi - tail > blo and a[ahi - tail - 1] == b[bhi - tail - 1]:
        tail += 1
    ahi_mid, bhi_mid = ahi - tail, bhi - tail
    _middle(a, b, alo, ahi_mid, blo, bhi_mid, out, work)
    if tail:
        out.append(("equal", ahi_mid, ahi, bhi_mid, bhi))


def _middle(a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int, out: list[Op],
            work: DiffWork) -> None:
    na, nb = ahi - alo, bhi - blo
    if not na and not nb:
        return
    if not na:
        out.append(("insert", alo, alo, blo, bhi))
        return
    if not nb:
        out.append(("delete", alo, ahi, blo, blo))
        return
    if na * nb <= MATCHER_CELLS:
        work.cells += na * nb
        sm = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
        out.extend((tag, alo + i1, alo + i2, blo + j1, blo + j2) for tag, i1, i2, j1, j2 in sm.get_opcodes())
        return
    anchors = _anchors(a, b, alo, ahi, blo, bhi)
    if not anchors:
        out.append(("replace", alo, ahi, blo, bhi))
        return
    pa, pb = alo, blo
    for i, j in anchors:
        _diff(a, b, pa, i, pb, j, out, work)
        out.append(("equal", i, i + 1, j, j + 1))
        pa, pb = i + 1, j + 1
    _diff(a, b, pa, ahi, pb, bhi, out, work)


def _anchors(a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines that occur exactly once in each side, the longest run of them in the same order in both."""
    count_a: dict[int, int] = {}
    for i in range(alo, ahi):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    count_b: dict[int, int] = {}
    where_b: dict[int, int] = {}
    for j in range(blo, bhi):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if count_a[a[i]] == 1 and count_b.get(a[i]) == 1]
    # longest increasing run of the B positions (patience sorting, n log n)
    tops: list[int] = []
    top_at: list[int] = []
    prev: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tops, j)
        if pos == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[pos] = j
            top_at[pos] = k
        prev[k] = top_at[pos - 1] if pos else -1
    chain: list[tuple[int, int]] = []
    k = top_at[-1] if top_at else -1
    while k >= 0:
        chain.append(pairs[k])
        k = prev[k]
    return chain[::-1]


def _merge(ops: list[Op]) -> list[Op]:
    """Adjacent opcodes of the same kind joined, empty ones dropped."""
    out: list[Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if i1 == i2 and j1 == j2:
            continue
        if out and out[-1][0] == tag and out[-1][2] == i1 and out[-1][4] == j1:
            out[-1] = (tag, out[-1][1], i2, out[-1][3], j2)
        else:
            out.append((tag, i1, i2, j1, j2))
    return out


__all__ = ["DiffWork", "MATCHER_CELLS", "line_opcodes"]
