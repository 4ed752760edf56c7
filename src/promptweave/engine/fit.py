"""Fitting each row's in-context examples into a token budget (``max_seq_len``).

Examples are dropped from the end of the retrieved list, as the references do, but
without their loop of re-rendering and re-tokenising the whole prompt after every
drop: each row's prompt is counted once with no examples (once per label in ppl
mode), each train example's own contribution is counted once and cached by train
id, ``fit_shots`` picks the longest leading run that fits, and the prompt built
from it is checked by one real count. Every label of a ppl row gets the same
examples (the row's longest label decides).

A piece counted on its own can differ from its count inside the prompt by a token
or two (merges across its edges, a SentencePiece leading space): the real count of
the final prompt catches an underestimate (more examples are dropped), an
overestimate (the final prompt counts fewer tokens than estimated, or nothing was kept) is
settled by counting the next longer prefixes for real, so the kept run is the longest that fits,
as the references' drop-and-recount loop finds.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from promptweave.engine.builder import PromptBuilder, PromptRecord
from promptweave.errors import ConfigError, PromptweaveError, PromptweaveWarning
from promptweave.infer.budget import fit_shots
from promptweave.prompt.dialogue import Dialogue

CountTokens = Callable[[Any], int]
"""Token count of a rendered prompt (str, segments or chat messages), as the model will see it."""


@dataclass
class FitStats:
    rows: int = 0
    rows_cut: int = 0  # rows that lost at least one example
    examples_dropped: int = 0
    rows_over: int = 0  # rows that do not fit even with no examples
    counts: int = 0  # calls to the token counter
    rechecks: int = 0  # final prompts that were over after all and lost another example
    grow_tries: int = 0  # one-longer prefixes counted for real after an overestimate
    grown: int = 0  # examples added back because the estimate ran over and the real prompt fit


class ShotFitter:
    """Builds each row's prompts with the leading in-context examples that fit ``max_len`` tokens.

    ``count_tokens`` is the model's own counter (special tokens included). ``slack``:
    ppl labels whose estimated length comes within this many tokens of ``max_len``
    are counted for real too (the longest label always is).
    """

    def __init__(self, builder: PromptBuilder, count_tokens: CountTokens, max_len: int, *, slack: int = 2) -> None:
        if max_len < 1:
            raise ConfigError("the token budget for prompts must be positive", field="max_seq_len", value=max_len,
                              expected="max_seq_len larger than max_out_len")
        self.builder = builder
        self._count_fn = count_tokens
        self.max_len = int(max_len)
        self.slack = slack
        self.stats = FitStats()
        self._shot_tokens: dict[int, int] = {}
        self._empty: dict[str, int] = {}
        self._sep_tokens: int | None = None

    # ------------------------------------------------------------------ counting
    def _count(self, rendered: Any) -> int:
        self.stats.counts += 1
        return int(self._count_fn(rendered))

    def _text_tokens(self, text: str) -> int:
        """Tokens of a bare text inside a prompt: the counter's special tokens (BOS...) taken off."""
        if "text" not in self._empty:
            self._empty["text"] = self._count("")
        return self._count(text) - self._empty["text"] if text else 0

    def _dialogue_tokens(self, piece: Dialogue) -> int:
        # rendered after an empty leading item, so every item gets the newline it has mid-prompt
        # (without a meta template) and meta begin/end cancel out
        if "dialogue" not in self._empty:
            self._empty["dialogue"] = self._count(self.builder.render(Dialogue(("",))))
        return self._count(self.builder.render(Dialogue(("",) + tuple(piece.items)))) - self._empty["dialogue"]

    def sep_tokens(self) -> int:
        """Tokens of the separator between string examples (counted once)."""
        if self._sep_tokens is None:
            sep, _ = self.builder.ice_glue()
            self._sep_tokens = self._text_tokens(sep)
        return self._sep_tokens

    def shot_tokens(self, train_id: int, index: int, label: Any, base: int) -> int:
        """What train example ``train_id`` adds to a prompt (cached: counted once per id).

        ``index``, ``label`` and ``base`` (that prompt's zero-shot count) are used only
        when the example cannot be measured on its own.
        """
        hit = self._shot_tokens.get(train_id)
        if hit is not None:
            return hit
        piece = self.builder.example_piece(train_id)
        try:
            if isinstance(piece, Dialogue):
                n = self._dialogue_tokens(piece)
            else:
                n = self._text_tokens(piece) + self.sep_tokens()
        except PromptweaveError:
            # a meta template that cannot render an examples-only dialogue: measure it in this row instead
            n = self._count(self.builder.build(index, label, ids=(train_id,)).rendered) - base
        self._shot_tokens[train_id] = n = max(n, 0)
        return n

    # ------------------------------------------------------------------ fitting
    def build_row(self, index: int) -> list[PromptRecord]:
        """The row's prompts (one per label in ppl mode), all with the same kept examples.

        When examples were dropped each record's ``extra["retrieved_ids"]`` holds the
        retrieved list; ``shot_ids`` holds the kept one.
        """
        b = self.builder
        self.stats.rows += 1
        ids = list(b.ids_for(index))
        if not ids:
            return b.build_row(index)  # nothing to drop; an over-long question is the model's to report
        base_recs = b.build_row(index, ids=())
        if not base_recs:  # a ppl dataset with no labels: nothing to score
            return []
        base = [self._count(r.rendered) for r in base_recs]
        top = max(range(len(base)), key=base.__getitem__)
        glue = self.sep_tokens() if not isinstance(b.example_piece(ids[0]), Dialogue) else 0
        tokens = [self.shot_tokens(i, index, base_recs[top].label, base[top]) for i in ids]
        # n string examples carry n - 1 separators, the counts above one each: credit one back
        kept = fit_shots(ids, tokens, base[top] - glue, self.max_len)
        est = dict(zip(ids, tokens))
        while True:
            if not kept:
                recs, worst, real = base_recs, base[top], base[top]
                break
            recs = b.build_row(index, ids=kept)
            real, worst = self._measure(recs, base, top)
            if worst <= self.max_len:
                break
            self.stats.rechecks += 1
            over, freed = worst - self.max_len, 0
            while kept and freed < over:  # at least one
                freed += max(est[kept.pop()], 1)
        # counted for real only where the estimate is known to have run over (or kept nothing), so
        # exact estimates cost no extra count
        estimate = base[top] + sum(est[i] for i in kept) - (glue if kept else 0)
        if worst <= self.max_len and len(kept) < len(ids) and (not kept or real < estimate):
            recs, kept = self._grow(index, ids, kept, recs, base, top)
        if worst > self.max_len:
            self.stats.rows_over += 1
        if len(kept) < len(ids):
            self.stats.rows_cut += 1
            self.stats.examples_dropped += len(ids) - len(kept)
            for r in recs:
                r.extra["retrieved_ids"] = list(ids)
        return recs

    def _measure(self, recs: list[PromptRecord], base: list[int], top: int) -> tuple[int, int]:
        """(real count of the longest label's prompt, the longest real count among the labels).

        Other labels are counted only when their estimate comes within ``slack`` of the budget."""
        real = worst = self._count(recs[top].rendered)
        for j, r in enumerate(recs):
            if j != top and base[j] + real - base[top] > self.max_len - self.slack:
                worst = max(worst, self._count(r.rendered))
        return real, worst

    def _grow(self, index: int, ids: list[int], kept: list[int], recs: list[PromptRecord],
              base: list[int], top: int) -> tuple[list[PromptRecord], list[int]]:
        """Add back dropped examples while the real prompt still fits.

        The per-example estimates can run over (a chat template's per-message framing counted
        with every example, merges across edges), which would keep fewer examples than the
        reference's drop-until-it-fits loop; real counts of the next longer prefix settle it.
        """
        while len(kept) < len(ids):
            cand = ids[:len(kept) + 1]
            cand_recs = self.builder.build_row(index, ids=cand)
            self.stats.grow_tries += 1
            if self._measure(cand_recs, base, top)[1] > self.max_len:
                break
            self.stats.grown += 1
            kept, recs = cand, cand_recs
        return recs, kept

    def build_all(self, indices: Sequence[int]) -> list[PromptRecord]:
        out = [r for i in indices for r in self.build_row(i)]
        if self.stats.rows_over:
            warnings.warn(f"{self.builder.dataset.abbr}: {self.stats.rows_over} row(s) are longer than "
                          f"{self.max_len} tokens even with no in-context examples; a local model with "
                          "max_seq_len keeps only their last tokens to generate (recorded per row as 'truncated') "
                          "and fails them to score; view --tokens shows which rows", PromptweaveWarning,
                          stacklevel=2)
        return out


__all__ = ["ShotFitter", "FitStats", "CountTokens"]
