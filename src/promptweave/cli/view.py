"""``promptweave view``: print the exact prompt each model receives."""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any, List, Optional

import typer

from promptweave.cli.app import app
from promptweave.cli.common import fail, select
from promptweave.errors import PromptweaveError

_ROLE_STYLES = ("bold cyan", "bold green", "bold magenta", "bold yellow", "bold blue")


@app.command("view")
def view_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."),
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) to show (default: all)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Model abbr(s) to show (default: all)."),
    n: int = typer.Option(1, "-n", help="How many rows from the start of the test split."),
    index: Optional[List[int]] = typer.Option(None, "--index", "-i", help="Specific test row(s); overrides -n."),
    mode: Optional[str] = typer.Option(None, help="gen or ppl (default: from the dataset's inferencer)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output: one JSON list."),
    shots: bool = typer.Option(False, "--shots", help="Show the in-context example ids and retriever settings."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python (it may run code)."),
    # eval hook (eval helper): judge prompts recorded by a run
    judge: Optional[Path] = typer.Option(None, "--judge", help="A run's work dir: show the LLM judge's prompt and "
                                         "verdict for the selected rows instead."),
) -> None:
    """Show the final prompt each model receives, per dataset × model × row (ppl: every label)."""
    from rich.console import Console

    from promptweave.config import load_config, open_dataset, open_model
    from promptweave.engine import PromptBuilder

    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    records: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cfg = load_config(config, trust=trust_config)
            ds_ids = select(cfg.dataset_abbrs(), dataset, "dataset", cfg)
            model_ids = select(cfg.model_abbrs(), model, "model", cfg)
            models = [open_model(cfg, j) for j in model_ids]
            for i in ds_ids:
                spec = open_dataset(cfg, i)
                rows = index if index else list(range(min(n, len(spec.test))))
                if judge is not None:  # eval hook: the judge's prompts from the run's predictions
                    from promptweave.evaluate.judge_view import judge_records, show_judge

                    for m in models:
                        for rec in judge_records(judge, m.abbr, spec.abbr, rows):
                            records.append(rec)
                            if not as_json:
                                show_judge(console, rec)
                    continue
                for m in models:
                    if spec.template.kind_name == "MultiTurnPromptTemplate":
                        for r in rows:
                            for rec in _turn_records(spec, m, r):
                                records.append(_record(rec, None, False))
                                if not as_json:
                                    _show(console, rec, _Shim(spec, m), False)
                        continue
                    builder = PromptBuilder(spec, m, mode)
                    builder.prefetch(rows)
                    for r in rows:
                        for rec in builder.build_row(r, with_prompt=True):
                            records.append(_record(rec, builder, shots))
                            if not as_json:
                                _show(console, rec, builder, shots)
        except PromptweaveError as exc:
            fail(err, exc)
    sys.stdout.flush()
    for w in _unique(caught):
        err.print(f"warning: {w}", style="yellow", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(records, ensure_ascii=False, indent=1) + "\n")


class _Shim:
    """What ``_show`` needs of a builder, for multi-turn rows (which have no single-prompt builder)."""

    def __init__(self, dataset: Any, model: Any) -> None:
        self.dataset, self.model = dataset, model


def _turn_records(spec: Any, model: Any, index: int) -> list[Any]:
    """One record per model call of a multi-turn row (earlier replies shown as placeholders)."""
    from promptweave.engine import PromptRecord
    from promptweave.infer.multiturn import turn_prompts

    out = []
    for tv in turn_prompts(spec, model, index):
        rec = PromptRecord(index, "gen", None, [], tv.prompt, tv.rendered, spec.abbr, model.abbr)
        rec.extra["turn"] = tv.turn_id
        out.append(rec)
    return out


def _unique(caught: list) -> list[str]:
    seen: dict[str, None] = {}
    for w in caught:
        seen.setdefault(str(w.message), None)
    return list(seen)


def _chars(rendered: Any) -> int:
    if isinstance(rendered, str):
        return len(rendered)
    total = 0
    for m in rendered:
        if isinstance(m, str):
            total += len(m)
        elif isinstance(m, dict):
            p = m.get("prompt", "")
            total += len(p) if isinstance(p, str) else sum(len(json.dumps(x)) for x in p)
    return total


def _record(rec: Any, builder: Any, shots: bool) -> dict[str, Any]:
    out = {"dataset": rec.dataset, "model": rec.model, "index": rec.index, "mode": rec.mode,
           "label": rec.label, "prompt": rec.rendered, "chars": _chars(rec.rendered)}
    if "turn" in rec.extra:
        out["turn"] = rec.extra["turn"]
    if shots:
        out["shot_ids"] = rec.shot_ids
        out["retriever"] = builder.dataset.retriever.settings()
    return out


def _show(console: Any, rec: Any, builder: Any, shots: bool) -> None:
    from rich.rule import Rule
    from rich.text import Text

    from promptweave.prompt.dialogue import Dialogue
    from promptweave.prompt.multimodal import has_parts
    from promptweave.render.text import render_text_annotated

    title = f"{rec.dataset} × {rec.model} · row {rec.index} · {rec.mode}"
    if rec.label is not None:
        title += f" · label {rec.label!r}"
    if "turn" in rec.extra:
        title += f" · turn {rec.extra['turn']}"
    title += f" · {_chars(rec.rendered)} chars"
    console.print(Rule(title, align="left"))
    if shots:
        console.print(Text(f"shots: {rec.shot_ids}  retriever: {builder.dataset.retriever.settings()}", style="dim"))
    styles: dict[str, str] = {}

    def style_for(role: str) -> str:
        return styles.setdefault(role, _ROLE_STYLES[len(styles) % len(_ROLE_STYLES)])

    text = Text()
    if builder.model.kind == "api" and isinstance(rec.rendered, list):
        for msg in rec.rendered:
            role = str(msg.get("role", "?"))
            text.append(f"[{role}] ", style=style_for(role))
            p = msg.get("prompt", "")
            if isinstance(p, str):
                text.append(p)
            else:
                text.append(" ".join(_part_label(x) for x in p), style="italic")
            text.append("\n")
        if rec.mode == "gen":
            text.append("▶ the model answers here", style="reverse")
    else:
        prompt = rec.prompt
        if isinstance(prompt, Dialogue) and has_parts(prompt):
            prompt = builder.model.media_text().apply(prompt, model=builder.model.abbr)
        pieces, cut = render_text_annotated(prompt, builder.model.meta, rec.mode)
        for piece, tag in pieces:
            if not isinstance(piece, str):
                for seg in piece:
                    text.append(seg if isinstance(seg, str) else f"<ids {list(seg)}>",
                                style="dim" if isinstance(seg, str) else "bold red")
                continue
            if tag == "meta":
                text.append(piece, style="dim")
            elif tag.startswith("role:"):
                text.append(piece, style=style_for(tag[5:]))
            else:
                text.append(piece)
        if rec.mode == "gen":
            text.append("▶", style="reverse")
    console.print(text)


def _part_label(part: Any) -> str:
    if isinstance(part, dict) and part.get("type") == "text":
        return part.get("text", "")
    from promptweave.prompt.multimodal import part_label

    return part_label(part)
