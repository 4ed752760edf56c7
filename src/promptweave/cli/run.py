"""``promptweave run CONFIG -w WORKDIR``: evaluate every dataset × model, resumably."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import List, Optional

import typer

from promptweave.cli.app import app


@app.command("run")
def run_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."),
    workdir: Path = typer.Option(Path("outputs"), "-w", "--work-dir", help="Where predictions, results and the "
                                 "response cache go; rerun the same command to resume."),
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) (default: all)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Model abbr(s) (default: all)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N test rows of each dataset."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan and show the tasks; load no model, send nothing."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python and allow its "
                                      "callables (custom postprocessors) to run."),
    allow_env: Optional[List[str]] = typer.Option(None, "--allow-env", help="Let the config read this "
                                                  "credential-looking environment variable, or send it as a model's "
                                                  "API key (key='ENV' / api_key_env); repeatable."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
    on_row_error: str = typer.Option("wrong", "--on-row-error", help="A row whose request still fails after its "
                                     "retries: 'wrong' (default: scored as incorrect, counted in the results), "
                                     "'skip' (left out of the metrics, counted), 'fail' (the task fails). Its "
                                     "error is in the predictions either way; a rerun retries only such rows."),
    no_wait: bool = typer.Option(False, "--no-wait", help="If another run is writing to the work dir, stop at "
                                 "once (exit 4) instead of waiting for it."),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write WORKDIR/report.html at the end."),
    # eval hook (eval helper): code-executing evaluators and the default LLM judge
    allow_code_exec: bool = typer.Option(False, "--allow-code-exec", help="Let code evaluators (HumanEval, MBPP) "
                                         "and the CIBench agent run the model's code, in the OS sandbox."),
    code_sandbox: str = typer.Option("bwrap", "--code-sandbox", help="Where --allow-code-exec runs model code: "
                                     "'bwrap' (default: bubblewrap; no network, own PID namespace, clean env, "
                                     "private tmpfs) or 'rlimits' (WEAKER: only time/memory limits, no isolation)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="Judge for LLM-judged datasets whose "
                                              "judge_cfg is empty: a model abbr from judge_models or models."),
    # -- ray helper: executor options (run/executors/)
    executor: str = typer.Option("local", "--executor", help="local (this process) or ray (row shards on a Ray "
                                 "cluster; needs promptweave[ray])."),
    address: Optional[str] = typer.Option(None, "--address", help="Ray: join this running cluster (default: start "
                                          "a local Ray instance on loopback)."),
    shard_rows: Optional[int] = typer.Option(None, "--shard-rows", min=1, help="Ray: rows per shard (default: "
                                             "from the model's batch size and the number of workers)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Ray: model replicas (actors) per model "
                                          "(default: one per num_gpus GPUs of the cluster, else 1)."),
    num_gpus: Optional[float] = typer.Option(None, "--num-gpus", min=0, help="Ray: GPUs per replica (default: the "
                                             "model's run_cfg.num_gpus)."),
    num_cpus: Optional[float] = typer.Option(None, "--num-cpus", min=0, help="Ray: CPUs per replica (default: the "
                                             "model's run_cfg.num_cpus, else 1; 0 for API models)."),
    mode: str = typer.Option("accuracy", "--mode", help="accuracy (default: answers and scores) or perf "
                             "(serving performance: streamed requests at the model's batch_size and request_rate; "
                             "AISBench's performances/ files; see also `promptweave perf`)."),
) -> None:
    """Send each dataset's prompts to each model, score the answers, write predictions and results."""
    from rich.console import Console
    from rich.table import Table

    from promptweave.cli.common import ExitCode, fail, select
    from promptweave.config import load_config
    from promptweave.errors import PromptweaveError
    from promptweave.run import run_tasks, summary_table
    from promptweave.run.plan import plan_config

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    if on_row_error not in ("wrong", "skip", "fail"):
        raise typer.BadParameter(f"{on_row_error!r}: expected wrong, skip or fail", param_hint="--on-row-error")
    if code_sandbox not in ("bwrap", "rlimits"):
        raise typer.BadParameter(f"{code_sandbox!r}: expected bwrap or rlimits", param_hint="--code-sandbox")
    # forms hook: planning's warnings (placeholders sent as written, ...) printed as `lint` and `view` print them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from promptweave.sandbox.env import set_policy

            set_policy(allow_env or (), trusted=trust_config)  # the user's env allow-list, before any read
            cfg = load_config(config, trust=trust_config)
            ds_ids = select(cfg.dataset_abbrs(), dataset, "dataset", cfg)
            model_ids = select(cfg.model_abbrs(), model, "model", cfg)
            from promptweave.models.factory import check_api_keys

            check_api_keys(cfg, model_ids, ds_ids)  # the env rule on API keys, before planning or sending anything
            if mode not in ("accuracy", "perf"):
                raise typer.BadParameter(f"{mode!r}: expected accuracy or perf", param_hint="--mode")
            if mode == "perf" and not dry_run:  # perf hook: serving performance (run/perf/), one library call
                from promptweave.cli.perf import run_perf_mode

                run_perf_mode(cfg, workdir, ds_ids, model_ids, limit, trust_config, not no_progress, console, err,
                              executor=executor, workers=workers, address=address)
                return
            if executor not in ("local", "ray"):
                from promptweave.errors import ConfigError

                raise ConfigError("unknown executor", field="--executor", value=executor, expected="local or ray")
            # ray helper: the ray executor builds prompts where each shard runs, so nothing is planned here for it
            tasks = (plan_config(cfg, limit=limit, allow_code=trust_config, datasets=ds_ids, models=model_ids)
                     if executor == "local" or dry_run else [])
            # eval hook (eval helper): refuse code evaluators without the flag / judges without a model, before sending
            from promptweave.evaluate import prepare_tasks
            from promptweave.evaluate.judge import judge_model_cfg

            judge_cfg = judge_model_cfg(cfg, judge_model)

            def prepare(planned: list) -> None:
                try:
                    prepare_tasks(planned, allow_code_exec=allow_code_exec, judge_model=judge_cfg,
                                  code_sandbox=code_sandbox)
                except PromptweaveError as exc:
                    raise (exc if exc.file else exc.at(file=str(config))) from None

            if dry_run:  # agent hook: a dry run lists an agent task without --allow-code-exec as refused, and why
                from promptweave.forms.agent_loop import mark_refused

                mark_refused(tasks, allow_code_exec)
            prepare(tasks)
        except PromptweaveError as exc:
            fail(err, exc)
    for msg in dict.fromkeys(str(w.message) for w in caught):
        err.print(f"warning: {msg}", style="yellow", markup=False, soft_wrap=True)
    if dry_run:
        table = Table(title=f"plan: {len(tasks)} task(s); nothing sent")
        for col in ("dataset", "model", "mode", "rows", "calls"):
            table.add_column(col)
        refused = [t for t in tasks if t.settings.get("refused") is not None]
        for t in tasks:
            refusal = t.settings.get("refused")
            table.add_row(t.dataset, t.model_name, t.mode, "-" if refusal else str(t.rows),
                          f"refused ({refusal.code})" if refusal else str(t.calls))
        console.print(table)
        try:  # requests, prompt tokens and cost per task and in total (run/estimate.py)
            from promptweave.run.estimate import show_estimate

            show_estimate(console, tasks, cfg)
        except PromptweaveError as exc:
            fail(err, exc)
        from promptweave.models.factory import batching_note  # perf hook: how local models batch

        for j in model_ids:
            note = batching_note(cfg.models[j], cfg.model_abbrs()[j])
            if note:
                console.print(note, markup=False, soft_wrap=True)
        for t in refused:  # the other tasks run; these fail with this line, so a dry run shows it up front
            err.print(f"will fail: {t.dataset} × {t.model_name}: {t.settings['refused']}", style="yellow",
                      markup=False, soft_wrap=True)
        # sandbox hook (owned by reliability): environment variables the config read, shown, never their values
        from promptweave.sandbox.env import env_reads

        reads = {**cfg.env_reads, **env_reads()}  # the config's own reads and the API keys its models asked for
        if reads:
            console.print("config read env: " + ", ".join(
                f"{name} ({'set' if is_set else 'unset'})" for name, is_set in sorted(reads.items())))
        if refused:  # the same verdict lint gives: this plan cannot run as a whole
            raise typer.Exit(ExitCode.WILL_FAIL)
        return
    try:  # bridge hook: a reference class read from an unimportable package cannot score; say so before sending
        from promptweave.compat.bridge import check_runnable

        check_runnable(tasks, file=str(config))
    except PromptweaveError as exc:
        fail(err, exc)

    def notify(msg: str) -> None:
        err.print(msg, style="yellow", markup=False)

    try:
        if executor == "local":
            outcomes = run_tasks(tasks, workdir, show_progress=not no_progress, console=console,
                                 on_row_error=on_row_error, wait=not no_wait, notify=notify)
        else:  # ray helper: other executors plan their own prompts (built where each shard runs)
            from promptweave.run.executors import RunRequest, make_executor

            runner = make_executor(executor, address=address, shard_rows=shard_rows, workers=workers,
                                   num_gpus=num_gpus, num_cpus=num_cpus)
            outcomes = runner.run(RunRequest(cfg, workdir, ds_ids, model_ids, limit, trust_config,
                                             show_progress=not no_progress, console=console, prepare=prepare,
                                             on_row_error=on_row_error, wait=not no_wait, notify=notify))
    except PromptweaveError as exc:
        fail(err, exc)
    console.print(summary_table(outcomes))
    for o in outcomes:
        if not o.ok:
            err.print(f"failed: {o.dataset} × {o.model}: {o.error}", style="red", markup=False, soft_wrap=True)
    console.print(f"predictions and results in {workdir}")
    if not no_report:  # report hook (report helper): the HTML report; never fails the run
        from promptweave.report.hook import report_after_run

        report_after_run(workdir, console, err)
    # failed tasks, then failed rows or conversations: a rerun retries them
    if not all(o.ok for o in outcomes):
        raise typer.Exit(ExitCode.FAILURES)
    if not all(o.complete for o in outcomes):
        raise typer.Exit(ExitCode.FAILED_ROWS)
