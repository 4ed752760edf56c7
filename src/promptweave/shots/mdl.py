"""MDL (Wu et al., 2022): among candidate example sets, keep the one whose label distribution for the
test row has the lowest entropy (minimum description length), as scored by a language model."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from promptweave.errors import RetrieverError
from promptweave.shots.base import Row
from promptweave.shots.embed import inner_product_top_k
from promptweave.shots.text import row_text
from promptweave.shots.topk import EmbeddingRetriever

# score(prompts) -> one loss per prompt: the mean negative log-likelihood per token (lower = likelier).
Scorer = Callable[[list[str]], Sequence[float]]
# prompts(test_row, example_rows, label) -> the text scored for that label.
PromptBuilder = Callable[[Row, list[Row], Any], str]


def neg_entropy_of_losses(losses: Sequence[float]) -> float:
    """Negative entropy of the label distribution ``softmax(-loss)`` (higher = more confident)."""
    probs = np.exp(-np.asarray(losses, dtype=np.float64))
    probs = probs / probs.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probs > 0, probs * np.log(probs), 0.0)
    return float(terms.sum())


class MDLRetriever(EmbeddingRetriever):
    """Pick, per test row, the best of ``select_time`` candidate sets drawn from its ``candidate_num``
    nearest train rows (the first set is the TopK set), scoring each set with ``scorer``.

    ``scorer`` is any callable ``score(prompts: list[str]) -> list[float]`` returning a
    loss (mean token negative log-likelihood) per prompt; the model backend provides one.
    ``prompt_builder(test_row, example_rows, label)`` builds the scored text; the default
    joins examples as ``input output`` lines followed by the test input and the label.
    Draws use one legacy NumPy RandomState seeded once, as the reference does.
    """

    name = "MDLRetriever"

    def __init__(self, *, candidate_num: int = 1, select_time: int = 5, labels: Sequence[Any] | None = None,
                 seed: int = 1, scorer: Scorer | None = None, prompt_builder: PromptBuilder | None = None,
                 output_column: str | None = None, ce_model_name: str | None = None,
                 ice_template: Any = None, prompt_template: Any = None, **kw: Any) -> None:
        super().__init__(**kw)
        if not isinstance(select_time, int) or select_time < 1:
            raise RetrieverError("select_time must be a positive integer", field="select_time", value=select_time)
        self.candidate_num = candidate_num
        self.select_time = select_time
        self.labels = list(labels) if labels is not None else None
        self.seed = seed
        self.scorer = scorer
        self.prompt_builder = prompt_builder
        self.output_column = output_column
        for key, val in (("ce_model_name", ce_model_name), ("ice_template", ice_template),
                         ("prompt_template", prompt_template)):
            if val is not None:
                self.ignored[key] = val

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "candidate_num": self.candidate_num, "select_time": self.select_time,
                "seed": self.seed, "labels": self.labels}

    def _labels(self, train: Sequence[Row]) -> list[Any]:
        if self.labels is not None:
            return self.labels
        if self.output_column is None:
            raise RetrieverError("MDLRetriever needs labels or output_column to know the candidate answers",
                                 field="labels")
        return sorted({r[self.output_column] for r in train}, key=str)

    def _prompt(self, test_row: Row, examples: list[Row], label: Any) -> str:
        if self.prompt_builder is not None:
            return self.prompt_builder(test_row, examples, label)
        lines = [f"{row_text(r, self.input_columns)} {r[self.output_column]}" for r in examples]
        lines.append(f"{row_text(test_row, self.input_columns)} {label}")
        return self.ice_eos_token.join(lines) if self.ice_eos_token else "\n".join(lines)

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        if self.scorer is None:
            raise RetrieverError("MDLRetriever needs a scorer: score(prompts) -> losses", field="scorer",
                                 expected="a callable, e.g. from a model backend")
        if self.prompt_builder is None and self.output_column is None:
            raise RetrieverError("MDLRetriever's default prompts need output_column (or give prompt_builder)",
                                 field="output_column")
        if not train or not test:
            return [[] for _ in test]
        train_emb, test_emb = self.embed_splits(train, test, same_split)
        exclude = list(range(len(test))) if same_split else None
        pool = max(1, min(self.candidate_num, len(train) - (1 if same_split else 0)))
        near_all = inner_product_top_k(test_emb, train_emb, pool, exclude=exclude)
        labels = self._labels(train)
        rng = np.random.RandomState(self.seed)
        out = []
        for i, near in enumerate(near_all):
            take = min(self.ice_num, len(near))
            best, best_score = near[:take], -np.inf
            for j in range(self.select_time):
                ids = near[:take] if j == 0 else [int(x) for x in rng.choice(near, take, replace=False)]
                examples = [train[x] for x in ids]
                losses = list(self.scorer([self._prompt(test[i], examples, lab) for lab in labels]))
                if len(losses) != len(labels):
                    raise RetrieverError(f"scorer returned {len(losses)} losses for {len(labels)} prompts",
                                         field="scorer")
                score = neg_entropy_of_losses(losses)
                if score > best_score:  # first of equal scores wins, as the reference's index(max)
                    best, best_score = ids, score
            out.append(list(best))
        return out
