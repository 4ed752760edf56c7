"""A model config entry as a typed object, checked where a run selects its models.

A config's ``models`` entries are dicts as the references write them, with any keys a reference model class takes.
:class:`ModelConfig` types the fields promptweave itself reads (names, sizes, limits, rates, retries, templates)
and keeps every other key as written, so a reference's keys pass through unchanged; a field of the wrong type or
shape is one ``[PW181]`` line naming ``models[j].<field>`` and the value, before anything is planned. Fields read as
attributes (``mc.batch_size``) or through ``models.factory.cfg_get`` alike.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from promptweave.errors import ModelConfigError


class ModelConfig(BaseModel):
    """One ``models`` entry: the fields promptweave reads, typed; the reference's other keys kept as extras."""

    model_config = ConfigDict(extra="allow", frozen=True, arbitrary_types_allowed=True, protected_namespaces=())

    abbr: str | None = None
    type: Any = None  # a class name, a dotted path, or (trusted .py configs) the class itself
    path: str | None = None
    kind: str | None = None  # "lm" (text in, text out) or "api" (chat messages)
    batch_size: int | None = None
    max_seq_len: int | None = None
    max_out_len: int | None = None
    concurrency: int | None = None
    max_workers: int | None = None
    retry: int | None = None
    max_retries: int | None = None
    timeout: float | None = None
    rpm: float | None = None
    query_per_second: float | None = None
    input_price: Any = None  # checked where the estimate reads it (a finite number from 0 to a bound, PW723)
    output_price: Any = None
    meta_template: Any = None  # checked by render.meta.MetaTemplate, which names its fields
    generation_kwargs: dict[str, Any] | None = None
    run_cfg: dict[str, Any] | None = None

    @field_validator("batch_size", "max_seq_len", "max_out_len", "concurrency", "max_workers", "retry",
                     "max_retries", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("a whole number, not true/false")
        return value

    @field_validator("abbr", "path", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @property
    def name(self) -> str:
        """The model's name in tasks and file names: ``abbr``, else ``name``, else ``path``."""
        extra = self.model_extra or {}
        return str(self.abbr or extra.get("name") or self.path or "model")

    def raw(self) -> dict[str, Any]:
        """The entry as a dict, every key as the config wrote it (the references' shape)."""
        return {**{k: getattr(self, k) for k in self.model_fields_set}, **(self.model_extra or {})}


def model_config_of(raw: Any, *, file: str | None = None, where: str = "models[0]") -> ModelConfig:
    """``raw`` (a ``models`` entry) as a :class:`ModelConfig`; a wrong field is ``ModelConfigError`` (PW181)."""
    if isinstance(raw, ModelConfig):
        return raw
    if not isinstance(raw, Mapping):
        raise ModelConfigError("a model config must be a dict", file=file, field=where, value=raw,
                               expected="dict(abbr=..., type=..., path=...)")
    try:
        return ModelConfig.model_validate(dict(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ()))
        raise ModelConfigError(f"{field or 'a field'} has the wrong type", file=file,
                               field=f"{where}.{field}" if field else where, value=first.get("input"),
                               expected=str(first.get("msg", "")).lower().removeprefix("value error, ")) from None


__all__ = ["ModelConfig", "model_config_of"]
