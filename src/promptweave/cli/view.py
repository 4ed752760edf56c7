"""``promptweave view``: print the exact prompt each model receives."""
from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

import typer

from promptweave.cli.app import app
from promptweave.cli.common import fail, select
from promptweave.cli.options import flag
from promptweave.errors import ConfigError, PromptweaveError, PromptweaveWarning, warning_text
from promptweave.run.options import RunOptions

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
    tokens: bool = typer.Option(False, "--tokens", help="Token ids and counts per segment (needs the model's "
                                "tokenizer files locally)."),
    compare: bool = typer.Option(False, "--compare", help="Two models (-m A -m B) side by side, or one model's "
                                 "meta template vs its tokenizer's chat template; differences marked."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python (it may run code)."),
    allow_env: Optional[List[str]] = flag("allow_env").option(),
    allow_data: Optional[List[str]] = flag("allow_data").option(),
    # eval hook (eval helper): judge prompts recorded by a run
    judge: Optional[Path] = typer.Option(None, "--judge", help="A run's work dir: show the LLM judge's prompt and "
                                         "verdict for the selected rows instead."),
    variant: Optional[int] = typer.Option(None, "--variant", help="spread: show format variant K of each dataset's "
                                          "template (0: the config's own)."),
    spread_seed: int = typer.Option(0, "--seed", help="spread: the seed the variants were drawn with."),
) -> None:
    """Show the final prompt each model receives, per dataset × model × row (ppl: every label).

    Chat-template models are shown as their tokenizer's template renders them, and rows are
    fitted into max_seq_len as a run fits them when the model's tokenizer is available.
    """
    req = ViewRequest(config, dataset, model, n, index, mode, as_json, shots, tokens, compare, trust_config,
                      allow_env or [], allow_data or [], judge, variant, spread_seed)
    show_prompts(req)


@dataclass
class ViewRequest:
    """What ``view`` was asked to show (its options, defined once in ``view_cmd``)."""

    config: Path
    dataset: list[str] | None
    model: list[str] | None
    n: int
    index: list[int] | None
    mode: str | None
    as_json: bool
    shots: bool
    tokens: bool
    compare: bool
    trust_config: bool
    allow_env: list[str]
    allow_data: list[str]
    judge: Path | None
    variant: int | None
    spread_seed: int


def show_prompts(req: ViewRequest) -> None:
    """Build and print (or, with --json, collect) the prompts ``req`` asks for; warnings after them, one line each."""
    from rich.console import Console

    from promptweave.cli.view_final import final_model, fitter_for
    from promptweave.config import load_config, open_dataset, open_model
    from promptweave.engine import PromptBuilder

    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    records: list[dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from promptweave.run.pipeline import apply_policy  # the env allow-list and data paths, before any read
            apply_policy(RunOptions(allow_env=req.allow_env, allow_data=req.allow_data, trust_config=req.trust_config))
            cfg = load_config(req.config, trust=req.trust_config)
            ds_ids = select(cfg.dataset_abbrs(), req.dataset, "dataset", cfg)
            model_ids = select(cfg.model_abbrs(), req.model, "model", cfg)
            if req.variant is not None:  # spread hook: the same prompts with variant K's template (spread/variants.py)
                from promptweave.spread.variants import variant_config

                cfg = variant_config(cfg, req.variant, req.spread_seed, datasets=ds_ids,
                                     notify=lambda msg: err.print(msg, style="dim", markup=False))
            if req.compare and len(model_ids) > 2:
                raise ConfigError("--compare shows two models side by side, or one model's meta template beside "
                                  "its chat template", file=str(req.config), field="--model",
                                  value=[cfg.model_abbrs()[j] for j in model_ids], expected="one or two -m")
            models = [open_model(cfg, j) for j in model_ids]
            finals = [final_model(m) for m in models]
            from promptweave.work.verdicts import view_pairs  # the verdicts lint and run give, as warnings

            shows = view_pairs(cfg, model_ids, explicit=bool(req.dataset) and bool(req.model))
            for i in ds_ids:
                spec = open_dataset(cfg, i)
                from promptweave.forms.registry import view_dataset

                spec, note = view_dataset(spec)  # the dataset as its form shows it (e.g. its first prompt filled)
                if note:
                    warnings.warn(note, PromptweaveWarning, stacklevel=1)
                rows = req.index if req.index else list(range(min(req.n, len(spec.test))))
                if req.judge is not None:  # the judge's prompts from the run's predictions
                    from promptweave.evaluate.judge_stage import judge_abbr
                    from promptweave.evaluate.judge_view import judge_records, show_judge

                    stage = judge_abbr(cfg.datasets[i])  # an AISBench judge stage's results are <abbr>-<judge>
                    name = f"{spec.abbr}-{stage}" if stage else spec.abbr
                    for m in models:
                        for rec in judge_records(req.judge, m.abbr, name, rows):
                            records.append(rec)
                            if not req.as_json:
                                show_judge(console, rec)
                    continue
                per_model: list[list[Any]] = []
                for k, (m, fm) in enumerate(zip(models, finals)):
                    if not shows(i, k):
                        continue
                    if spec.template.kind_name == "MultiTurnPromptTemplate" or _chat_turns(spec, m):
                        for r in rows:
                            for rec in _turn_records(spec, m, r):
                                records.append(_record(rec, None, False))
                                if not req.as_json:
                                    _show(console, rec, _Shim(spec, m), False)
                        continue
                    builder = PromptBuilder(spec, m, req.mode)
                    builder.prefetch(rows)
                    fitter = fitter_for(builder, fm, builder.mode, rows)
                    recs = [rec for r in rows for rec in _build_row(builder, fitter, r)]
                    per_model.append(recs)
                    _warn_meta_vs_chat(fm, recs)
                    if req.compare:
                        continue
                    for rec in recs:
                        records.append(_record(rec, builder, req.shots, fm, req.tokens))
                        if not req.as_json:
                            _show(console, rec, builder, req.shots, fm, req.tokens)
                if req.compare and per_model:
                    records.extend(_compare(console, finals, per_model, req.as_json))
        except PromptweaveError as exc:
            fail(err, exc)
    sys.stdout.flush()
    for w in _unique(caught):
        err.print(f"warning: {w}", style="yellow", markup=False)
    if req.as_json:
        sys.stdout.write(json.dumps(records, ensure_ascii=False, indent=1) + "\n")




def _build_row(builder: Any, fitter: Any, index: int) -> list[Any]:
    """The row's records as the run builds them (fitted when it fits), each with its filled prompt for display."""
    if fitter is None:
        return builder.build_row(index, with_prompt=True)
    fitted = fitter.build_row(index)
    if not fitted:
        return fitted
    shown = builder.build_row(index, ids=fitted[0].shot_ids, with_prompt=True)
    for a, b in zip(shown, fitted):
        a.extra.update(b.extra)
        a.extra["max_seq_len"] = fitter.max_len
    return shown


def _warn_meta_vs_chat(fm: Any, recs: list[Any]) -> None:
    """A text model whose meta template and own tokenizer chat template render a row differently: say so."""
    if fm.uses_chat_template or fm.chat is None or fm.spec.kind != "lm":
        return
    for rec in recs:
        pair = fm.meta_vs_chat(rec)
        if pair is not None and isinstance(pair[0], str) and pair[0] != pair[1]:
            warnings.warn(f"model {fm.spec.abbr}: its meta_template renders {rec.dataset} row {rec.index} "
                          "differently from its tokenizer's chat_template (see view --compare -m "
                          f"{fm.spec.abbr})", PromptweaveWarning, stacklevel=2)
            return


def _compare(console: Any, finals: list[Any], per_model: list[list[Any]], as_json: bool) -> list[dict[str, Any]]:
    """Side by side: two models' final prompts, or one model's meta template vs its tokenizer's chat template."""
    from promptweave.cli.view_final import as_lines

    out = []
    if len(per_model) == 2:
        fa, fb = finals
        pairs = [(ra, _final_or_rendered(fa, ra), rb, _final_or_rendered(fb, rb))
                 for ra, rb in zip(per_model[0], per_model[1])]
        heads = (fa.spec.abbr, fb.spec.abbr)
    else:
        fm = finals[0]
        if fm.chat is None:
            cfg = fm.spec.config
            raise ConfigError("--compare with one model needs its tokenizer's chat template to compare the meta "
                              "template with", file=fm.spec.file, field=f"models[{fm.spec.abbr}].tokenizer_path",
                              value=cfg.get("tokenizer_path") or cfg.get("path") or "(none set)",
                              expected="a local tokenizer folder with a chat_template, or two -m to compare two "
                                       "models")
        pairs = []
        for rec in per_model[0]:
            chat_text = fm.final_text(rec) if fm.uses_chat_template else (fm.meta_vs_chat(rec) or (None, None))[1]
            pairs.append((rec, rec.rendered, rec, chat_text))
        heads = (f"{fm.spec.abbr} · meta template", f"{fm.spec.abbr} · tokenizer chat template")
    for ra, a, rb, b in pairs:
        ta, tb = as_lines(a), as_lines(b)
        out.append({"dataset": ra.dataset, "index": ra.index, "label": ra.label, "left": heads[0], "right": heads[1],
                    "left_prompt": a, "right_prompt": b, "identical": ta == tb})
        if not as_json:
            _show_side_by_side(console, ra, heads, ta, tb)
    return out


def _final_or_rendered(fm: Any, rec: Any) -> Any:
    text = fm.final_text(rec)
    return rec.rendered if text is None else text


def _show_side_by_side(console: Any, rec: Any, heads: tuple[str, str], a: str, b: str) -> None:
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    from promptweave.cli.view_final import side_by_side

    title = f"{rec.dataset} · row {rec.index} · {rec.mode}"
    if rec.label is not None:
        title += f" · label {rec.label!r}"
    rows = side_by_side(a, b)
    changed = sum(1 for mark, _, _ in rows if mark != " ")
    title += " · identical" if not changed else f" · {changed} line(s) differ"
    console.print(Rule(title, align="left"))
    table = Table(show_lines=False, expand=True, pad_edge=False)
    table.add_column("", width=1, no_wrap=True)
    table.add_column(heads[0], ratio=1, overflow="fold")
    table.add_column(heads[1], ratio=1, overflow="fold")
    styles = {" ": ("", ""), "~": ("yellow", "yellow"), "-": ("red", ""), "+": ("", "green")}
    for mark, left, right in rows:
        sl, sr = styles[mark]
        table.add_row(Text(mark, style="bold"), Text(left, style=sl), Text(right, style=sr))
    console.print(table)


class _Shim:
    """What ``_show`` needs of a builder, for multi-turn rows (which have no single-prompt builder)."""

    def __init__(self, dataset: Any, model: Any) -> None:
        self.dataset, self.model = dataset, model


def _chat_turns(spec: Any, model: Any) -> Any:
    """The row's prompts turn by turn when the dataset's form runs a conversation per row (its own ``view_turns``)."""
    from promptweave.forms.registry import view_turns

    return view_turns(spec, model)


def _turn_records(spec: Any, model: Any, index: int) -> list[Any]:
    """One record per model call of a multi-turn row (earlier replies shown as placeholders)."""
    from promptweave.engine import PromptRecord
    from promptweave.forms.turn_loop import turn_prompts

    chat = _chat_turns(spec, model)  # ChatInferencer every / every_with_gt: the row's own chat, turn by turn
    out = []
    for tv in (chat.turn_prompts(index) if chat is not None else turn_prompts(spec, model, index)):
        rec = PromptRecord(index, "gen", None, [], tv.prompt, tv.rendered, spec.abbr, model.abbr)
        rec.extra["turn"] = tv.turn_id
        out.append(rec)
    return out


def _unique(caught: list) -> list[str]:
    seen: dict[str, None] = {}
    for w in caught:
        seen.setdefault(warning_text(w.message), None)
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


def _final(rec: Any, fm: Any) -> str | None:
    """The chat-template text of a record (computed once), or None when the model takes its rendering as is."""
    if fm is None:
        return None
    if "final" not in rec.extra:
        rec.extra["final"] = fm.final_text(rec)
    return rec.extra["final"]


def _fit_facts(rec: Any) -> dict[str, Any]:
    if "retrieved_ids" not in rec.extra:
        return {}
    kept = set(rec.shot_ids)
    return {"retrieved_ids": list(rec.extra["retrieved_ids"]),
            "dropped_shot_ids": [i for i in rec.extra["retrieved_ids"] if i not in kept],
            "max_seq_len": rec.extra.get("max_seq_len")}


def _record(rec: Any, builder: Any, shots: bool, fm: Any = None, tokens: bool = False) -> dict[str, Any]:
    final = _final(rec, fm)
    prompt = rec.rendered if final is None else final
    out = {"dataset": rec.dataset, "model": rec.model, "index": rec.index, "mode": rec.mode,
           "label": rec.label, "prompt": prompt, "chars": _chars(prompt)}
    if final is not None:
        out["messages"] = rec.rendered
        out["chat_template"] = True
    if "turn" in rec.extra:
        out["turn"] = rec.extra["turn"]
    fit = _fit_facts(rec)
    if shots or fit:
        out["shot_ids"] = rec.shot_ids
    if shots:
        out["retriever"] = builder.dataset.retriever.settings()
    out.update(fit)
    if tokens:
        segs = _token_segments(rec, builder, fm)
        out["tokens"] = segs
        out["token_count"] = None if segs is None else sum(s["count"] for s in segs)
        out["over_budget"] = _over_budget(out["token_count"], rec, builder, fm)
    return out


def _text_pieces(rec: Any, builder: Any) -> list[tuple[Any, str]]:
    """A text model's rendering as (piece, tag): meta-template text, each role's content, token-id segments."""
    from promptweave.prompt.dialogue import Dialogue
    from promptweave.prompt.multimodal import has_parts
    from promptweave.render.text import render_text_annotated

    prompt = rec.prompt
    if prompt is None:
        return [(rec.rendered, "text")] if isinstance(rec.rendered, str) else [
            (seg, "text" if isinstance(seg, str) else "ids") for seg in rec.rendered]
    if isinstance(prompt, Dialogue) and has_parts(prompt):
        prompt = builder.model.media_text().apply(prompt, model=builder.model.abbr)
    pieces, _ = render_text_annotated(prompt, builder.model.meta, rec.mode)
    flat: list[tuple[Any, str]] = []
    for piece, tag in pieces:
        if isinstance(piece, str):
            if piece:
                flat.append((piece, tag))
        else:
            flat += [(seg, tag if isinstance(seg, str) else "ids") for seg in piece if seg]
    return flat


def _token_segments(rec: Any, builder: Any, fm: Any) -> list[dict[str, Any]] | None:
    """Token ids per segment with the model's tokenizer; None when it has none locally."""
    from promptweave.render.chat_template import render_with_chat_template, segments_of

    if fm is None or fm.tokenizer_path is None:
        return None
    final = _final(rec, fm)
    if final is None and isinstance(rec.rendered, list) and all(isinstance(m, dict) for m in rec.rendered):
        if fm.chat is None:  # a chat API with no template here: what the server does with it is unknown
            return None
        final = render_with_chat_template(rec.rendered, fm.chat, add_generation_prompt=rec.mode == "gen")
    if final is not None:  # the template wrote the special tokens itself
        return fm.token_segments(segments_of(final, fm.messages(rec)), add_special=False)
    pieces = _text_pieces(rec, builder)
    return fm.token_segments(pieces, add_special=isinstance(rec.rendered, str))


def _show(console: Any, rec: Any, builder: Any, shots: bool, fm: Any = None, tokens: bool = False) -> None:
    from rich.rule import Rule
    from rich.text import Text

    final = _final(rec, fm)
    title = f"{rec.dataset} × {rec.model} · row {rec.index} · {rec.mode}"
    if rec.label is not None:
        title += f" · label {rec.label!r}"
    if "turn" in rec.extra:
        title += f" · turn {rec.extra['turn']}"
    if final is not None:
        title += " · chat template"
    title += f" · {_chars(rec.rendered if final is None else final)} chars"
    console.print(Rule(title, align="left"))
    if shots:
        console.print(Text(f"shots: {rec.shot_ids}  retriever: {builder.dataset.retriever.settings()}", style="dim"))
    fit = _fit_facts(rec)
    if fit:
        console.print(Text(f"fitted to max_seq_len={fit['max_seq_len']} tokens: kept shots {rec.shot_ids}, "
                           f"dropped {fit['dropped_shot_ids']}", style="yellow"))
    styles: dict[str, str] = {}

    def style_for(role: str) -> str:
        return styles.setdefault(role, _ROLE_STYLES[len(styles) % len(_ROLE_STYLES)])

    def add(piece: Any, tag: str) -> None:
        if not isinstance(piece, str):
            text.append(f"<ids {list(piece)}>", style="bold red")
        elif tag == "meta":
            text.append(piece, style="dim")
        elif tag.startswith("role:"):
            text.append(piece, style=style_for(tag[5:]))
        else:
            text.append(piece)

    text = Text()
    if final is not None:
        from promptweave.render.chat_template import segments_of

        for piece, tag in segments_of(final, fm.messages(rec)):
            add(piece, tag)
        if rec.mode == "gen":
            text.append("▶", style="reverse")
    elif builder.model.kind == "api" and isinstance(rec.rendered, list):
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
        for piece, tag in _text_pieces(rec, builder):
            add(piece, tag)
        if rec.mode == "gen":
            text.append("▶", style="reverse")
    console.print(text)
    if tokens:
        segs = _token_segments(rec, builder, fm)
        _show_tokens(console, segs, fm)
        note = _over_budget(None if segs is None else sum(s["count"] for s in segs), rec, builder, fm)
        if note:
            console.print(Text(f"over budget: {note}", style="bold yellow"))


def _over_budget(count: int | None, rec: Any, builder: Any, fm: Any) -> str | None:
    """What run does with a row longer than its budget (run/truncation.py), or None."""
    from promptweave.run.truncation import over_budget

    if count is None or fm is None or builder is None:
        return None
    return over_budget(count, fm.spec.config, {**builder.dataset.inferencer.settings,
                                               "type": builder.dataset.inferencer.type}, rec.mode)


def _show_tokens(console: Any, segs: list[dict[str, Any]] | None, fm: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    if segs is None:
        console.print(Text(f"tokens: model {fm.spec.abbr if fm else '?'} has no tokenizer here (set tokenizer_path "
                           "to a local folder with its tokenizer files)", style="dim"))
        return
    table = Table(title=f"tokens: {sum(s['count'] for s in segs)}", title_justify="left", expand=False)
    for col in ("segment", "text", "tokens", "ids"):
        table.add_column(col, overflow="fold")
    for s in segs:
        ids = s["ids"]
        shown = ", ".join(map(str, ids[:24])) + (f", … (+{len(ids) - 24})" if len(ids) > 24 else "")
        preview = s["text"] if len(s["text"]) <= 40 else s["text"][:37] + "..."
        table.add_row(s["tag"], Text(repr(preview) if s["text"] else ""), str(s["count"]), shown)
    console.print(table)


def _part_label(part: Any) -> str:
    if isinstance(part, dict) and part.get("type") == "text":
        return part.get("text", "")
    from promptweave.prompt.multimodal import part_label

    return part_label(part)
