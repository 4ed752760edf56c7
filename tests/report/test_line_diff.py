"""The compare page's line diff: a correct diff of any two texts, and bounded work on long prompts of repeated
lines (the alignment work is counted, never timed)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.report.compare import prompt_diff
from promptweave.report.line_diff import MATCHER_CELLS, DiffWork, line_opcodes

lines = st.lists(st.sampled_from(["Question: x", "Answer: A", "Answer: B", "", "C", "D", "unique"]), max_size=40)


def _check(a: list[str], b: list[str], ops) -> None:
    """The opcodes cover both sides in order, and ``equal`` spans really are equal."""
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))


@settings(max_examples=300, deadline=None)
@given(a=lines, b=lines)
def test_any_two_texts(a, b) -> None:
    _check(a, b, line_opcodes(a, b))


def test_large_gaps_go_through_anchors_and_stay_correct(monkeypatch) -> None:
    import promptweave.report.line_diff as ld

    monkeypatch.setattr(ld, "MATCHER_CELLS", 16)  # every gap past 4 × 4 lines takes the anchor path
    rng = __import__("random").Random(3)
    for _ in range(200):
        a = [rng.choice("abcdefgh") + str(rng.randint(0, 30)) for _ in range(rng.randint(0, 60))]
        b = list(a)
        for _ in range(rng.randint(0, 8)):
            k = rng.randint(0, len(b))
            b[k:k + rng.randint(0, 3)] = [rng.choice("xyz") + str(rng.randint(0, 30))]
        _check(a, b, ld.line_opcodes(a, b))


def _prompt(n: int, changed: int | None = None) -> str:
    out = []
    for i in range(n):
        out.append(f"Question: item {i % 40}\nA. one\nB. two\nAnswer: {'AB'[i % 2]}")
        if i == changed:
            out[-1] = "Question: a changed line\nA. one\nB. two\nAnswer: C"
    return "\n".join(out)


def test_two_long_prompts_differing_in_one_place() -> None:
    a, b = _prompt(7200, None), _prompt(7200, 2500)  # about 300 KB each, lines repeated hundreds of times
    assert len(a) > 290_000
    diff = prompt_diff(a, b)
    changed = [d for d in diff if d[0] != "="]
    assert changed == [["-", "Question: item 20"], ["+", "Question: a changed line"],
                       ["-", "Answer: A"], ["+", "Answer: C"]]
    work = DiffWork()
    line_opcodes(a.split("\n"), b.split("\n"), work)
    assert work.cells <= 16  # the common head and tail leave the one changed block: four lines each side


def test_long_prompts_differing_everywhere_stay_within_the_matcher_bound() -> None:
    a = [f"Question: item {i % 40}" if i % 3 else f"row {i}" for i in range(40_000)]
    b = [f"Answer: {i % 7}" if i % 5 == 0 else x for i, x in enumerate(a)]
    work = DiffWork()
    ops = line_opcodes(a, b, work)
    _check(a, b, ops)
    assert work.cells <= 40 * MATCHER_CELLS  # bounded, not 40,000²
