"""``promptweave lve``: run, replay and show LVE tests."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, Optional, TextIO

import typer

from promptweave.cli.app import app
from promptweave.cli.common import ExitCode
from promptweave.errors import PromptweaveError

lve_app = typer.Typer(no_args_is_help=True, help="Load, run and check LVE vulnerability tests (test.json).")
app.add_typer(lve_app, name="lve")


def parse_kv(items: list[str] | None) -> dict[str, Any]:
    """``k=v`` pairs; a value that parses as JSON (number, true, null, "quoted") takes that type."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected key=value, got {item!r}", param_hint="--args")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _open_out(out: Optional[Path]) -> TextIO:
    return open(out, "w", encoding="utf-8") if out else sys.stdout


def _err(text: str) -> None:
    typer.echo(text, err=True)


def _make_model(base_url: Optional[str], model: Optional[str], api_key: Optional[str]) -> Any:
    if not base_url or not model:
        _err("error: lve run needs a model: --base-url URL --model NAME (an OpenAI-compatible chat endpoint)")
        raise typer.Exit(ExitCode.BAD_INPUT)
    try:
        from promptweave.models.openai_compat import OpenAICompatModel
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("promptweave.models"):
            raise
        _err("error: the OpenAI-compatible backend (promptweave.models.openai_compat) is not installed "
             "in this build of promptweave")
        raise typer.Exit(ExitCode.BAD_INPUT)
    return OpenAICompatModel(base_url=base_url, model=model, api_key=api_key)


def _tests(path: Path) -> list[Path]:
    from promptweave.lve import find_test_dirs

    if not path.exists():
        _err(f"error: no such path: {path}")
        raise typer.Exit(ExitCode.BAD_INPUT)
    dirs = find_test_dirs(path)
    if not dirs:
        _err(f"error: no test.json at or under {path}")
        raise typer.Exit(ExitCode.BAD_INPUT)
    return dirs


@lve_app.command("run")
def run_cmd(
    path: Path = typer.Argument(..., help="An LVE folder, its test.json, or a folder to search for tests."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"),
    model: Optional[str] = typer.Option(None, "--model", help="Model name sent to the endpoint."),
    api_key: Optional[str] = typer.Option(None, "--api-key", envvar="OPENAI_API_KEY", help="API key (or $OPENAI_API_KEY)."),
    args: Optional[List[str]] = typer.Option(None, "--args", "-a", help="Instance argument k=v (repeatable). "
                                             "Without any, each recorded instance's args are re-run."),
    trust_checkers: bool = typer.Option(False, "--trust-checkers", help="Allow running checker/checker.py code from the test folders."),
    skip_unavailable: bool = typer.Option(False, "--skip-unavailable-checkers",
                                          help="Run tests whose checker lacks an optional dependency (verdict null)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write instance JSONL here (default stdout)."),
) -> None:
    """Run LVE tests against a model; print one instance line (JSONL) per run."""
    from promptweave.lve import iter_instances, load_test, run_instance

    dirs = _tests(path)
    given = parse_kv(args) if args else None
    chat_model = _make_model(base_url, model, api_key)
    failures = runs = 0
    sink = _open_out(out)
    try:
        for folder in dirs:
            try:
                test = load_test(folder)
                arg_sets = [given] if given is not None else [r.get("args", {}) for _, _, r in iter_instances(test)]
            except PromptweaveError as exc:
                _err(f"{folder}: {exc}")
                failures += 1
                continue
            for instance_args in arg_sets or [{}]:
                try:
                    result = run_instance(test, instance_args, chat_model, trust_checkers=trust_checkers,
                                          skip_unavailable_checker=skip_unavailable)
                except PromptweaveError as exc:
                    _err(f"{folder}: {exc}")
                    failures += 1
                    continue
                runs += 1
                sink.write(json.dumps(result.to_instance(), ensure_ascii=False) + "\n")
                sink.flush()
    finally:
        if out:
            sink.close()
    _err(f"{runs} runs, {failures} errors")
    if failures:
        raise typer.Exit(ExitCode.FAILURES)


@lve_app.command("replay")
def replay_cmd(
    path: Path = typer.Argument(..., help="An LVE folder or a folder to search for tests."),
    trust_checkers: bool = typer.Option(False, "--trust-checkers", help="Allow running checker/checker.py code."),
    strict: bool = typer.Option(False, "--strict", help="Exit non-zero when a verdict disagrees with the record."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write JSONL here (default stdout)."),
) -> None:
    """Re-check recorded instances (their stored responses) without calling a model."""
    from promptweave.lve import load_test, replay_test

    dirs = _tests(path)
    total = agree = disagree = unknown = errors = 0
    sink = _open_out(out)
    try:
        for folder in dirs:
            try:
                outcomes = replay_test(load_test(folder), trust_checkers=trust_checkers)
            except PromptweaveError as exc:
                _err(f"{folder}: {exc}")
                errors += 1
                continue
            for o in outcomes:
                total += 1
                if o.error:
                    errors += 1
                    _err(f"{o.file}:{o.index}: {o.error}")
                elif o.agrees is True:
                    agree += 1
                elif o.agrees is False:
                    disagree += 1
                else:
                    unknown += 1
                sink.write(json.dumps(o.to_json(), ensure_ascii=False) + "\n")
    finally:
        if out:
            sink.close()
    _err(f"{total} instances: {agree} agree, {disagree} disagree, {unknown} without verdict, {errors} errors")
    if errors or (strict and disagree):
        raise typer.Exit(ExitCode.FAILURES)


@lve_app.command("show")
def show_cmd(
    path: Path = typer.Argument(..., help="An LVE folder or a folder to search for tests."),
    args: Optional[List[str]] = typer.Option(None, "--args", "-a", help="Fill with these k=v arguments."),
    as_json: bool = typer.Option(False, "--json", help="Print the resolved messages as JSON."),
) -> None:
    """Print the resolved prompts of a test (filled when --args are given)."""
    from promptweave.lve import load_test, prepare

    failures = 0
    for folder in _tests(path):
        try:
            test = load_test(folder)
            if args:
                prepared = prepare(test, parse_kv(args), trust_checkers=False, skip_unavailable_checker=True) \
                    if test.checker.builtin else None
                conversations = prepared.conversations if prepared else _fill_only(test, parse_kv(args))
            else:
                conversations = [list(spec.messages) for spec in test.prompts()]
        except PromptweaveError as exc:
            _err(f"{folder}: {exc}")
            failures += 1
            continue
        if as_json:
            typer.echo(json.dumps({"test": str(test.test_file), "model": test.model, "checker": test.checker.name,
                                   "prompts": [[m.to_json() for m in c] for c in conversations]}, ensure_ascii=False))
            continue
        typer.echo(f"# {test.test_file}")
        typer.echo(f"# model: {test.model}   checker: {test.checker.name}   "
                   f"parameters: {', '.join(test.prompt_parameters or ()) or '-'}")
        for k, conv in enumerate(conversations):
            if len(conversations) > 1:
                typer.echo(f"## run {k + 1}")
            for msg in conv:
                label = msg.role.value + (f" -> {msg.variable}" if msg.variable else "")
                body = "<model reply>" if msg.content is None else msg.content
                typer.echo(f"[{label}] {body}")
                if msg.image_url:
                    typer.echo(f"    image: {msg.image_url}")
        typer.echo("")
    if failures:
        raise typer.Exit(ExitCode.FAILURES)


def _fill_only(test: Any, args: dict[str, Any]) -> list:
    """Fill prompts without building a (custom, untrusted) checker."""
    from promptweave.lve.runner import fill_conversations, split_instance_args

    params, _ = split_instance_args(args, test.prompt_parameters)
    return fill_conversations(test, params)
