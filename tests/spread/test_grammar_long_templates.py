"""The grammar stays linear on long templates: the spans already edited are kept merged, so each overlap
question looks at one neighbour. Checked by counting the spans looked at, never by timing."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.spread import grammar
from promptweave.spread.grammar import Format, apply_text, sample_formats

spans = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12)).map(lambda t: (t[0], t[0] + t[1])), max_size=25)


@settings(max_examples=300, deadline=None)
@given(stored=spans, more=spans, queries=spans)
def test_merged_spans_answer_as_the_plain_list_does(stored, more, queries) -> None:
    taken = grammar.TakenSpans(stored)
    plain = list(stored)
    for a, b in more:
        taken.add(a, b)
        plain.append((a, b))
    for a, b in queries:
        assert taken.overlaps(a, b) == any(a < e and s < b for s, e in plain)


def _long_template(blocks: int) -> str:
    block = "Question {}: what is shown?\nContext: a few words of context\nA. {{A}}\nB. {{B}}\nC. {{C}}\n"
    return "".join(block.format(i % 9) for i in range(blocks)) + "{question}\nAnswer:"


class _Counting(grammar.TakenSpans):
    """The grammar's span set, counting every instance's probes into one tally."""

    total = 0

    def overlaps(self, a: int, b: int) -> bool:
        before = self.probes
        got = super().overlaps(a, b)
        _Counting.total += self.probes - before
        return got

    def add(self, a: int, b: int) -> None:
        before = self.probes
        super().add(a, b)
        _Counting.total += self.probes - before


def test_work_grows_linearly_with_the_template(monkeypatch) -> None:
    monkeypatch.setattr(grammar, "TakenSpans", _Counting)
    fmt = Format(separator=" - ", spacing=" || ", casing="upper", label="({})", choice_sep="; ", cue="Response")
    work = []
    for blocks in (500, 1000, 2000, 4000):  # 4,000 blocks: about 330 KB of template
        grammar.clear_cache()
        _Counting.total = 0
        out = apply_text(_long_template(blocks), fmt)
        assert out.count("{A}") == blocks and out.endswith("RESPONSE -") and out.count("CONTEXT - ") == blocks
        work.append(_Counting.total)
    per_block = [w / b for w, b in zip(work, (500, 1000, 2000, 4000))]
    assert max(per_block) <= 2 * min(per_block), per_block  # linear: the same work per block at every size
    assert max(per_block) < 20


def test_a_long_template_keeps_every_slot_in_every_variant() -> None:
    text = _long_template(300)
    for fmt in itertools.islice(sample_formats(7), 8):
        out = apply_text(text, fmt)
        assert out.count("{A}") == 300 and out.count("{question}") == 1
