"""``promptweave lint``: check a config end to end without calling any model."""
from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from promptweave.cli.app import app


@app.command("lint")
def lint_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."),
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) (default: all)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Model abbr(s) (default: all)."),
    limit: Optional[int] = typer.Option(None, help="Build at most this many rows per dataset."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python (it may run code)."),
) -> None:
    """Load every dataset, validate every template and meta template, and build every prompt; exit 1 on errors."""
    from rich.console import Console

    from promptweave.cli.common import ExitCode, select
    from promptweave.config import load_config, open_dataset, open_model
    from promptweave.engine import PromptBuilder
    from promptweave.errors import PromptweaveError

    console = Console(highlight=False, soft_wrap=True)
    problems = 0
    try:
        cfg = load_config(config, trust=trust_config)
        ds_ids = select(cfg.dataset_abbrs(), dataset, "dataset", cfg)
        model_ids = select(cfg.model_abbrs(), model, "model", cfg)
    except PromptweaveError as exc:
        console.print(f"error: {exc}", style="red", markup=False)
        raise typer.Exit(ExitCode.BAD_INPUT)  # the config did not load: as view and run exit
    models = []
    for j in model_ids:
        try:
            models.append(open_model(cfg, j))
        except PromptweaveError as exc:
            problems += 1
            console.print(f"error: {exc}", style="red", markup=False)
    for i in ds_ids:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                spec = open_dataset(cfg, i)
            except PromptweaveError as exc:
                problems += 1
                console.print(f"error: {exc}", style="red", markup=False)
                continue
            n = len(spec.test) if limit is None else min(limit, len(spec.test))
            for m in models:
                start = time.perf_counter()
                try:
                    if spec.template.kind_name == "MultiTurnPromptTemplate":
                        from promptweave.infer.multiturn import turn_prompts

                        count = sum(len(turn_prompts(spec, m, r)) for r in range(n))
                    else:
                        count = sum(1 for _ in PromptBuilder(spec, m).build_all(range(n)))
                except PromptweaveError as exc:
                    problems += 1
                    console.print(f"error: {spec.abbr} × {m.abbr}: {exc}", style="red", markup=False)
                    continue
                took = time.perf_counter() - start
                console.print(f"ok: {spec.abbr} × {m.abbr}: {count} prompts from {n} rows in {took:.2f}s")
        seen: dict[str, None] = {}
        for w in caught:
            seen.setdefault(str(w.message), None)
        for msg in seen:
            console.print(f"warning: {msg}", style="yellow", markup=False)
    if problems:
        console.print(f"{problems} problem(s) found")
        raise typer.Exit(ExitCode.FAILURES)
