"""A dataset's prompt variants: the config's template (variant 0), the config's own ``prompt_variants``
(user-written instructions, ProSA's form), then distinct points of the format grammar for a seed.

Each variant is the dataset's config entry with only its template text rewritten, so a variant plans,
runs, caches and scores exactly as the config would (``run``'s planner takes it unchanged).
"""
from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from promptweave.engine.prompt_variants import PROMPT_VARIANTS, check_prompt_variants, prompt_variants, templates_of
from promptweave.errors import ConfigError, PromptweaveWarning
from promptweave.spread.grammar import Format, apply_template, sample_formats

MAX_VARIANTS = 1000
_MAX_MISSES = 2000  # draws in a row that render like earlier ones: the grammar is taken as exhausted
_PLAIN_TYPES = ("PromptTemplate",)


@dataclass(frozen=True)
class Variant:
    """Variant ``index`` of one dataset: its config entry and how its format differs from the config's."""

    index: int
    description: str
    source: str  # "config", "prompt_variants[j]" or "grammar"
    format: Format | None
    dataset: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.index, "description": self.description, "source": self.source,
                "format": None if self.format is None else self.format.to_json()}


def _type_name(tcfg: Mapping[str, Any]) -> str:
    kind = tcfg.get("type", "PromptTemplate")
    name = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    return name.rsplit(".", 1)[-1]


def _protected(templates: Mapping[str, Mapping[str, Any]]) -> list[str]:
    toks: list[str] = []
    for t in templates.values():
        for key in ("ice_token", "sep_token"):
            if isinstance(t.get(key), str) and t[key]:
                toks.append(t[key])
    return toks


def _with_templates(raw: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with ``infer_cfg.<name>.template`` replaced for each ``name`` in ``new``; nothing else shared."""
    out = dict(raw)
    infer = dict(raw["infer_cfg"])
    for name, template in new.items():
        infer[name] = {**infer[name], "template": template}
    out["infer_cfg"] = infer
    return out


def _key(templates: Mapping[str, Any]) -> str:
    return json.dumps(templates, sort_keys=True, default=repr, ensure_ascii=False)


def dataset_variants(raw: Mapping[str, Any], n: int, seed: int = 0, *, file: str | None = None,
                     where: str = "dataset") -> list[Variant]:
    """Up to ``n`` variants of one dataset config entry (fewer, with a warning, if the template has fewer
    distinct formats). Deterministic for ``seed``."""
    if n < 1 or n > MAX_VARIANTS:
        raise ConfigError("the number of variants is out of range", field="-n", value=n,
                          expected=f"1 to {MAX_VARIANTS}")
    out = [Variant(0, "the config's template as written", "config", None, raw)]
    templates = templates_of(raw)
    seen = {_key({k: t.get("template") for k, t in templates.items()})}
    name = "prompt_template" if "prompt_template" in templates else "ice_template"
    for j, tpl in enumerate(prompt_variants(raw, file=file, where=where)):
        if len(out) == n:
            return out
        text = json.dumps(tpl, ensure_ascii=False, default=repr)
        out.append(Variant(len(out), f"prompt_variants[{j}]: {text[:70]}{'…' if len(text) > 70 else ''}",
                           f"{PROMPT_VARIANTS}[{j}]", None, _with_templates(raw, {name: tpl})))
        seen.add(_key({**{k: t.get("template") for k, t in templates.items()}, name: tpl}))
    if len(out) == n:
        return out
    kinds = {k: _type_name(t) for k, t in templates.items()}
    odd = [f"{k} ({v})" for k, v in kinds.items() if v not in _PLAIN_TYPES]
    if not templates or odd:
        warnings.warn(f"{file + ': ' if file else ''}{where}: the format grammar varies PromptTemplate text only "
                      f"({', '.join(odd) or 'no template'}): {len(out)} variant(s)", PromptweaveWarning,
                      stacklevel=2)
        return out
    protect = _protected(templates)
    formats = sample_formats(seed)
    misses = 0
    while misses < _MAX_MISSES:
        fmt = next(formats)
        new = {k: apply_template(t.get("template"), fmt, protect=protect) for k, t in templates.items()}
        key = _key(new)
        if key in seen:
            misses += 1
            continue
        misses = 0
        seen.add(key)
        fmt = _effective(fmt, templates, protect)
        out.append(Variant(len(out), fmt.describe(), "grammar", fmt, _with_templates(raw, new)))
        if len(out) == n:
            return out
    warnings.warn(f"{file + ': ' if file else ''}{where}: the template has only {len(out)} distinct format(s) "
                  f"under the grammar (asked for {n})", PromptweaveWarning, stacklevel=2)
    return out


def _effective(fmt: Format, templates: Mapping[str, Mapping[str, Any]], protect: Sequence[str]) -> Format:
    """``fmt`` without the properties that change nothing in these templates (so its description is true)."""
    base = _key({k: t.get("template") for k, t in templates.items()})
    keep = {}
    for f in fields(Format):
        value = getattr(fmt, f.name)
        if value is None:
            continue
        one = Format(**{f.name: value})
        if _key({k: apply_template(t.get("template"), one, protect=protect) for k, t in templates.items()}) != base:
            keep[f.name] = value
    return Format(**keep)


def variant_config(cfg: Any, k: int, seed: int = 0, *, datasets: Sequence[int] | None = None,
                   notify: Callable[[str], None] | None = None) -> Any:
    """``cfg`` with every selected dataset entry replaced by its variant ``k`` (``view --variant K``);
    ``notify`` is told each dataset's variant description."""
    if k < 0 or k >= MAX_VARIANTS:
        raise ConfigError("no such variant", field="--variant", value=k,
                          expected=f"0 (the config's own template) to {MAX_VARIANTS - 1}")
    new = list(cfg.datasets)
    for i in (range(len(new)) if datasets is None else datasets):
        got = dataset_variants(new[i], k + 1, seed, file=str(cfg.path), where=f"datasets[{i}]")
        if len(got) <= k:
            raise ConfigError(f"dataset {i} has only {len(got)} variant(s)", file=str(cfg.path),
                              field="--variant", value=k, expected=f"0 to {len(got) - 1}")
        new[i] = got[k].dataset
        if notify is not None:
            notify(f"{new[i].get('abbr') or f'datasets[{i}]'}: variant {k} (seed {seed}): {got[k].description}")
    return replace(cfg, datasets=new)


def with_variants(cfg: Any, per_dataset: Mapping[int, Variant]) -> Any:
    """``cfg`` with dataset ``i`` replaced by ``per_dataset[i]``'s entry (a shallow copy; the rest shared)."""
    new = list(cfg.datasets)
    for i, v in per_dataset.items():
        new[i] = v.dataset
    return replace(cfg, datasets=new)


__all__ = ["PROMPT_VARIANTS", "Variant", "check_prompt_variants", "dataset_variants", "prompt_variants",
           "variant_config", "with_variants"]
