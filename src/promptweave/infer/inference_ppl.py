"""Inference-PPL (OpenCompass's ``InferencePPLOnlyInferencer``): the loss on labelled spans of each prompt.

Each row carries ``label``: character spans ``[start, end, ...]`` of the prompt text (e.g. the reasoning steps of
a worked solution). The prompt is tokenized as the reference's transformers model does (special tokens added,
cut at the model's ``max_seq_len`` from the right); every token is decoded on its own and lined up with the
prompt's characters; the cross-entropy of predicting a token counts when that token covers a labelled character.
The prediction is the summed loss (``ppl``) and the number of counted tokens (``token_len``);
``AverageInferencePPLEvaluator`` divides the sums over all rows.

The alignment follows the reference's rules, quirks included, so the counted tokens are the same: an empty token
string covers nothing; a token holding U+FFFD (a piece of a multi-byte character) takes the next character for
itself and the following ``sep_len - 1`` tokens (2 or 3 by the model's name, as the reference guesses); any other
token takes the shortest run of characters ending in its text.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import DataError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.local_lm import prompt_text, require_local_lm
from promptweave.infer.records import RecordLike

WHO = "InferencePPLOnlyInferencer"


@dataclass
class InferencePPLResult:
    index: int
    prompt: Any
    ppl: float  # summed cross-entropy over the counted tokens (the reference's name)
    token_len: int
    shot_ids: list


def sep_len_for(path: str) -> int:
    """Tokens a split multi-byte character spans, as the reference guesses it from the model path."""
    for marks, n in ((("qwen", "Qwen"), 2), (("Llama-3",), 2), (("Yi",), 3), (("Llama-2",), 3), (("deepseek",), 2)):
        if any(m in path for m in marks):
            return n
    return 3


def align_tokens(pieces: Sequence[str], text: str, sep_len: int) -> list[list[int]]:
    """For each entry, the character positions of ``text`` a decoded token covers (see the module docstring).

    Entries follow the tokens except where a token finds no characters before the text runs out (no entry is
    made, so later entries shift, as in the reference)."""
    out: list[list[int]] = []
    i = j = 0
    while i < len(pieces) and j < len(text):
        piece = pieces[i]
        if not piece:
            out.append([])
            i += 1
            continue
        if "\ufffd" in piece:
            out.extend([j] for _ in range(sep_len))
            i += sep_len
            j += 1
            continue
        acc = ""
        while j < len(text) and acc != piece:
            acc += text[j]
            if acc == piece or (len(acc) > len(piece) and acc.endswith(piece)):
                out.append(list(range(j - len(piece) + 1, j + 1)))
                j += 1
                break
            j += 1
        i += 1
    return out


def labelled_chars(label: Any, *, where: str) -> set[int]:
    if label is None:
        return set()
    if not isinstance(label, (list, tuple)):
        raise DataError(f"{WHO} reads each row's 'label' as a list of [start, end, ...] character spans",
                        field=where, value=label, expected="[[start, end, 1], ...]")
    chars: set[int] = set()
    for span in label:
        if not isinstance(span, (list, tuple)) or len(span) < 2 or not all(isinstance(v, int) for v in span[:2]):
            raise DataError(f"{WHO}: a label span is [start, end, ...] with whole-number offsets", field=where,
                            value=span, expected="[start, end, 1]")
        chars.update(range(span[0], span[1]))
    return chars


def span_loss(losses: Sequence[float], pieces: Sequence[str], text: str, chars: set[int],
              sep_len: int) -> tuple[float, int]:
    """Summed loss and count of the loss positions whose predicted token covers a labelled character.

    ``losses[p]`` is the loss of predicting token ``p + 1``; ``pieces`` are the decoded tokens 2..n."""
    tagged = {p for p, cover in enumerate(align_tokens(pieces, text, sep_len)) if any(c in chars for c in cover)}
    total, count = 0.0, 0
    for p, v in enumerate(losses):
        if p in tagged:
            total += v
            count += 1
    return total, count


def _score_one(model: Any, text: str) -> tuple[list[float], list[str]]:
    """Per-position cross-entropy (tokens 2..n) and the decoded tokens 2..n of ``text``."""
    torch = model.torch
    kw: dict[str, Any] = {"add_special_tokens": True}
    if model.max_seq_len:
        kw.update(truncation=True, max_length=int(model.max_seq_len))
    tok = model.tokenizer
    side = getattr(tok, "truncation_side", None)
    if side is not None:
        tok.truncation_side = "right"  # the reference scores the start of an over-long prompt
    try:
        ids = list(tok(text, **kw)["input_ids"])
    finally:
        if side is not None:
            tok.truncation_side = side
    if len(ids) < 2:
        return [], []
    t = torch.tensor([ids], dtype=torch.long)
    logits = model.forward(t, torch.ones_like(t)).logits[0, :-1].float()
    target = t[0, 1:].to(logits.device)
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="none")
    pad = model.pad_id
    if pad is not None:  # the reference ignores the pad id as a target, wherever it occurs
        loss = loss.masked_fill(target == pad, 0.0)
    pieces = [tok.decode([i]) for i in ids[1:]]
    return [float(v) for v in loss.cpu().tolist()], pieces


def infer_inference_ppl(model: Any, records: Sequence[RecordLike], labels: Mapping[int, Any],
                        cache: ResponseCache | None = None,
                        progress: Callable[[int], None] | None = None) -> list[InferencePPLResult]:
    require_local_lm(model, WHO)
    caller = CachedCaller(model, cache, progress)
    sep_len = sep_len_for(str(model.path))
    todo = []
    for r in records:
        text = prompt_text(r.rendered, WHO)
        label = labels.get(r.index)
        chars = labelled_chars(label, where=f"test[{r.index}].label")
        request = {"text": text, "label": label, "sep_len": sep_len, "max_seq_len": model.max_seq_len}
        todo.append((r, text, chars, request, caller.key("inference_ppl", request, None)))
    found = cache.get_many([k for *_, k in todo]) if cache is not None else {}
    out: list[InferencePPLResult] = []
    for r, text, chars, request, key in todo:
        got = found.get(key)
        if got is None:
            losses, pieces = _score_one(model, text)
            total, count = span_loss(losses, pieces, text, chars, sep_len)
            got = {"ppl": total, "token_len": count}
            if cache is not None:
                cache.put_many([(key, caller.name, "inference_ppl", request, got)])
        caller.progress(1)
        out.append(InferencePPLResult(r.index, r.rendered, float(got["ppl"]), int(got["token_len"]),
                                      list(r.shot_ids or [])))
    return out
