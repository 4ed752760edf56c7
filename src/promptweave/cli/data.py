"""``promptweave data fetch``: download, verify and unpack the data a config's datasets read (``data.fetch``)."""
from __future__ import annotations

from pathlib import Path

import typer

from promptweave.cli.app import app

data_app = typer.Typer(no_args_is_help=True, help="Get the data a config reads (run itself never downloads).")
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def fetch_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json); a dataset config too."),
    data_root: Path | None = typer.Option(None, "--data-root", help="Unpack under this folder (default: "
                                          "$COMPASS_DATA_CACHE, else ~/.cache/opencompass; for AISBench paths "
                                          "$AIS_BENCH_DATASETS_CACHE, else the working directory)."),
    mirror: str | None = typer.Option(None, "--mirror", help="Fetch from this scheme://host[/prefix] instead, "
                                      "keeping each archive's path."),
    md5_table: Path | None = typer.Option(None, "--md5-table", help="JSON {\"/gsm8k/\": {\"url\", \"md5\"}} merged "
                                          "over the built-in table (private mirrors)."),
    revision: list[str] | None = typer.Option(None, "--revision", help="REPO=REV: fetch the Hugging Face hub "
                                              "dataset REPO at this branch, tag or commit (repeatable); default: "
                                              "the config's revision, else the commit the first fetch recorded."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python (it may run code)."),
) -> None:
    """Download each archive the config's datasets need once, check its md5, unpack it safely into the data root.

    Data already present is left alone and costs no request.
    """
    from promptweave.data.fetch import fetch_archive, plan_fetch, read_md5_table
    from promptweave.data.hub_fetch import fetch_hub, parse_revisions
    from promptweave.run.lint import load_for_lint

    cfg, _ = load_for_lint(config, trust=trust_config)
    overrides = read_md5_table(md5_table) if md5_table else None
    revisions = parse_revisions(revision)
    plan = plan_fetch(cfg.datasets, cfg.dataset_abbrs(), data_root=data_root, md5_table=overrides, mirror=mirror,
                      revisions=revisions)
    for abbr, where in plan.present:
        typer.echo(f"present   {abbr}: {where}")
    for abbr, path, why in plan.unknown:
        typer.echo(f"skipped   {abbr}: {path!r}: {why}", err=True)
    for arch in plan.archives:
        out = fetch_archive(arch)
        names = ", ".join(sorted({a for a, _ in arch.needs}))
        typer.echo(f"{out.status:<9} {arch.name} ({arch.md5}) -> {arch.root}  for {names}")
    for repo in plan.hub:
        got = fetch_hub(repo)
        typer.echo(f"{got.status:<9} {repo.repo_id}@{got.commit} -> {got.snapshot}  for {', '.join(repo.needs)}")
    n = len(plan.archives)
    typer.echo(f"{n} archive(s) fetched, {len(plan.present)} dataset(s) already present, "
               f"{len(plan.unknown)} without a known archive, {len(plan.hub)} hub dataset(s)")
