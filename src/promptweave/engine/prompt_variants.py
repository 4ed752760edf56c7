"""A dataset's own ``prompt_variants`` (user-written instructions in the shape of its prompt template's text),
read and checked where every command plans a dataset: ``run`` and ``lint`` check them, ``spread`` runs them."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import ConfigError, TemplateError

PROMPT_VARIANTS = "prompt_variants"


def templates_of(raw: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The dataset entry's prompt and in-context templates (those it has), by name."""
    infer = raw.get("infer_cfg")
    if not isinstance(infer, Mapping):
        return {}
    return {name: infer[name] for name in ("prompt_template", "ice_template") if isinstance(infer.get(name), Mapping)}


def prompt_variants(raw: Mapping[str, Any], *, file: str | None = None, where: str = "dataset") -> list[Any]:
    """The dataset's ``prompt_variants`` (each in the shape of its prompt template's ``template``), checked."""
    got = raw.get(PROMPT_VARIANTS)
    if got is None:
        return []
    if not isinstance(got, (list, tuple)) or not got:
        raise ConfigError("prompt_variants must be a non-empty list of templates", file=file,
                          field=f"{where}.{PROMPT_VARIANTS}", value=got,
                          expected="[template, ...], each shaped like infer_cfg.prompt_template.template")
    templates = templates_of(raw)
    name = "prompt_template" if "prompt_template" in templates else "ice_template"
    if name not in templates:
        raise ConfigError("prompt_variants replace the prompt template's text, and this dataset has none",
                          file=file, field=f"{where}.{PROMPT_VARIANTS}",
                          expected="infer_cfg.prompt_template=dict(type=PromptTemplate, template=...)")
    from promptweave.engine.spec import build_template

    base = build_template(templates[name], file=file, field_path=f"{where}.infer_cfg.{name}")
    want = base.placeholder_names() if base is not None and hasattr(base, "placeholder_names") else None
    for j, tpl in enumerate(got):
        field_path = f"{where}.{PROMPT_VARIANTS}[{j}]"
        built = build_template({**templates[name], "template": tpl}, file=file, field_path=field_path)
        names = built.placeholder_names() if built is not None and hasattr(built, "placeholder_names") else None
        if want is not None and names is not None and not names <= want | {""}:
            extra = sorted(names - want)
            raise TemplateError("a prompt variant names a column the dataset's template does not use", file=file,
                                field=field_path, value=extra[0],
                                expected="placeholders of the prompt template: " + ", ".join(sorted(want)))
    return list(got)


def check_prompt_variants(raw: Mapping[str, Any], *, file: str | None = None, where: str = "dataset") -> None:
    """Lint's check of a dataset's ``prompt_variants``: each builds as a template and names only known columns."""
    prompt_variants(raw, file=file, where=where)




__all__ = ["PROMPT_VARIANTS", "check_prompt_variants", "prompt_variants", "templates_of"]
