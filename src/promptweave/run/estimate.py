"""What a planned run will send, before it sends anything (``run --dry-run``).

Per task and in total: requests, prompt tokens (exact with the model's own tokenizer when its files are local,
else estimated at about 4 characters a token, and marked so), the most output tokens (requests × the
``max_out_len`` that wins), and, when the model config gives prices per million tokens (``input_price`` and
``output_price``, in any one currency), the cost: the prompts' cost plus at most the outputs'. Also which
``max_out_len`` a task uses when the inferencer and the model both set one: the inferencer's, as OpenCompass's
inferencers pass theirs to the model.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import PriceError, PromptweaveError

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text with BPE tokenizers; used only without a tokenizer
_PRICES = ("input_price", "output_price")
MAX_PRICE = 1e9  # per million tokens: far above any real price, low enough that no estimate overflows


@dataclass
class TaskEstimate:
    """One task's share of the run."""

    dataset: str
    model: str
    requests: int
    prompt_tokens: int | None  # None: the form builds its prompts as it runs (conversations, searches)
    exact: bool
    max_out_len: int | None
    cost_in: float | None = None
    cost_out_max: float | None = None

    @property
    def cost(self) -> float | None:
        if self.cost_in is None:
            return None
        return self.cost_in + (self.cost_out_max or 0.0)


def prices(mcfg: Mapping[str, Any], *, file: str | None, where: str) -> tuple[float, float] | None:
    """The model's (input, output) price per million tokens, or None when it gives none."""
    got = {k: mcfg.get(k) for k in _PRICES if mcfg.get(k) is not None}
    if not got:
        return None
    out = {}
    for key, value in got.items():
        try:
            price = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        except OverflowError:  # an int past float range, such as 10**400
            price = None
        if price is None or not math.isfinite(price) or not 0 <= price <= MAX_PRICE:
            raise PriceError(f"{key} is a price per million tokens", file=file, field=f"{where}.{key}",
                             value=value, expected=f"a finite number from 0 to {MAX_PRICE:g}, e.g. input_price=0.15, "
                             "output_price=0.60")
        out[key] = price
    return out.get("input_price", 0.0), out.get("output_price", 0.0)


def max_out_len_note(settings: Mapping[str, Any], mcfg: Mapping[str, Any]) -> str | None:
    """Which ``max_out_len`` wins when the inferencer and the model both set one and they differ."""
    from promptweave.work.out_len import model_max_out_len

    inf, model = settings.get("max_out_len"), mcfg.get("max_out_len")
    fixed = model_max_out_len(mcfg)
    if fixed is not None:  # AISBench's service models: the model's wins (work/out_len.py)
        return None if inf is None or inf == fixed else (
            f"max_out_len {fixed} from the model is used, not the inferencer's {inf} (AISBench's inferencers do "
            "not read theirs)")
    if inf is None or model is None or inf == model:
        return None
    return (f"max_out_len {inf} from the inferencer is used, not the model's {model} (the inferencer's setting "
            "wins, as in OpenCompass)")


def _prompts(task: Any) -> tuple[list | None, bool]:
    """The task's prompts (None when its form builds them as it runs: conversations, searches), and whether each
    call generates text (a scored prompt, or CLP's next-token choice, generates none)."""
    from promptweave.work.task import LazyRecords

    if task.refused is not None:
        return [], False
    # the builder's own chunks when it has them (a search's variant records are read one by one below)
    if isinstance(task.records, LazyRecords) and getattr(task.records, "chunks", None) is not None:
        out: list = []
        first = None
        for chunk in task.records.batches(4096):
            if first is None and len(chunk):
                first = chunk[0]
            out.extend(chunk.prompts)
    else:
        records = list(task.records)
        if not all(hasattr(r, "rendered") for r in records):
            return None, True  # conversations: each turn's prompt is built from the replies before it
        out, first = [r.rendered for r in records], (records[0] if records else None)
    generates = first is not None and getattr(first, "mode", "gen") == "gen" and not task.choices
    return out, generates


def text_chars(prompt: Any) -> int:
    """Characters of a prompt's text (messages' contents, segments; a token id counts as one token's worth)."""
    if isinstance(prompt, str):
        return len(prompt)
    if isinstance(prompt, Mapping):
        body = prompt.get("content", prompt.get("prompt", ""))
        return text_chars(body) if not isinstance(body, str) else len(body)
    if isinstance(prompt, (list, tuple)):
        return sum(text_chars(p) if not isinstance(p, int) else CHARS_PER_TOKEN for p in prompt)
    return 0


def _local_tokenizer(mcfg: Mapping[str, Any]) -> bool:
    """Whether the tokenizer the run would count with is a folder here (a hub id would be downloaded)."""
    from pathlib import Path

    path = mcfg.get("tokenizer_path") or mcfg.get("path")
    return bool(path) and Path(str(path)).expanduser().is_dir()


def _counter(mcfg: Mapping[str, Any]) -> Any:
    """The exact counter a dry run can have without importing torch: ``tokenizer.json`` read by ``tokenizers``
    alone; transformers' tokenizer only when something already imported transformers; else None (estimated)."""
    import sys

    from promptweave.models.factory import cfg_get, load_token_counter, token_counter_path
    from promptweave.models.light_tokens import light_token_counter

    light = light_token_counter(token_counter_path(mcfg), cfg_get(mcfg, "tokenizer_kwargs"))
    if light is not None:
        return light
    return load_token_counter(mcfg) if "transformers" in sys.modules else None


def estimate(tasks: Sequence[Any], cfg: Any) -> list[TaskEstimate]:
    """Each task's requests, prompt tokens and cost."""

    file = str(cfg.path)
    by_abbr = dict(zip(cfg.model_abbrs(), range(len(cfg.models))))
    counters: dict[int, Any] = {}
    out = []
    for t in tasks:
        j = by_abbr.get(t.model_name)
        mcfg = cfg.models[j] if j is not None else {}
        if j is not None and j not in counters:
            try:  # a local tokenizer folder only: a dry run never downloads
                counters[j] = _counter(mcfg) if _local_tokenizer(mcfg) else None
            except PromptweaveError:
                counters[j] = None
        count = counters.get(j) if j is not None else None
        prompts, generates = _prompts(t)
        tokens = None
        if prompts is not None:
            tokens = sum(count(p) for p in prompts) if count is not None else \
                sum(-(-text_chars(p) // CHARS_PER_TOKEN) for p in prompts)
        refused = t.refused is not None
        params = getattr(t, "params", None)
        est = TaskEstimate(t.dataset, t.model_name, 0 if refused else t.calls, tokens, count is not None,
                           getattr(params, "max_out_len", None) if generates else 0)
        price = prices(mcfg, file=file, where=f"models[{j}]") if j is not None else None
        if price is not None and tokens is not None:
            est.cost_in = tokens / 1e6 * price[0]
            est.cost_out_max = est.requests * (est.max_out_len or 0) / 1e6 * price[1]
        out.append(est)
    return out


def _num(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:,.4f}"


def show_estimate(console: Any, tasks: Sequence[Any], cfg: Any) -> list[TaskEstimate]:
    """Print the estimate table (and the max_out_len notes) for a dry run; return the estimates."""
    from rich.table import Table

    rows = estimate(tasks, cfg)
    if not rows:
        return rows
    priced = any(r.cost_in is not None for r in rows)
    table = Table(title="estimate: what the run sends", title_justify="left")
    for col in ("dataset", "model", "requests", "prompt tokens", "counted", "max output tokens"):
        table.add_column(col, justify="right" if col in ("requests", "prompt tokens", "max output tokens") else "left",
                         overflow="fold")
    if priced:
        table.add_column("cost (at most)", justify="right")
    for r in rows:
        cells = [r.dataset, r.model, _num(r.requests), _num(r.prompt_tokens),
                 "-" if r.prompt_tokens is None else ("exact" if r.exact else "estimated"),
                 _num(None if r.max_out_len is None else r.requests * r.max_out_len)]
        if priced:
            cells.append(_money(r.cost))
        table.add_row(*cells)
    known = [r for r in rows if r.prompt_tokens is not None]
    total = ["total", f"{len(rows)} task(s)", _num(sum(r.requests for r in rows)),
             _num(sum(r.prompt_tokens or 0 for r in known)),
             "exact" if known and all(r.exact for r in known) else ("estimated" if known else "-"),
             _num(sum(r.requests * (r.max_out_len or 0) for r in rows))]
    if priced:
        total.append(_money(sum(r.cost or 0.0 for r in rows)))
    table.add_section()
    table.add_row(*total, style="bold")
    console.print(table)
    console.print("prompt tokens: exact = counted with the model's own tokenizer (its files are local); estimated = "
                  f"characters / {CHARS_PER_TOKEN} (no tokenizer here: set tokenizer_path for exact counts)",
                  markup=False)
    if priced:
        console.print("cost: prompt tokens × input_price plus at most max output tokens × output_price, per million "
                      "tokens (models without prices count as 0)", markup=False)
    notes: dict[str, None] = {}
    by_abbr = dict(zip(cfg.model_abbrs(), cfg.models))
    for t in tasks:
        note = max_out_len_note(_inferencer_settings(cfg, t.dataset), by_abbr.get(t.model_name) or {})
        if note:
            notes.setdefault(f"{t.dataset} × {t.model_name}: {note}", None)
    for line in notes:
        console.print(line, markup=False)
    return rows


def _inferencer_settings(cfg: Any, dataset: str) -> Mapping[str, Any]:
    for abbr, d in zip(cfg.dataset_abbrs(), cfg.datasets):
        if abbr == dataset:
            inf = (d.get("infer_cfg") or {}).get("inferencer") if isinstance(d.get("infer_cfg"), Mapping) else None
            return inf if isinstance(inf, Mapping) else {}
    return {}
