"""How many tokens each generation request asks for, where the reference decides it per model or per row.

AISBench's service models (``VLLMCustomAPIChat``, ``VLLMCustomAPI`` and their streaming variants) send:

- the model config's ``max_out_len`` (the class default, 4096, when the config gives none) — an inferencer's
  ``max_out_len`` is not read by AISBench's inferencers, whose requests carry the model's;
- for a row whose dataset names ``max_out_len`` among the reader's ``input_columns`` and has that column (AISBench's
  custom loader renames a row's ``max_tokens`` to it), that row's value instead, "dataset-specified max_out_len has
  highest priority"; an empty value (None, 0, "") falls back to the model's.

Other models keep promptweave's rule (the inferencer's, then the model's): OpenCompass has no per-row length.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promptweave.errors import ConfigError
from promptweave.models.factory import cfg_get

AISBENCH_SERVICE_DEFAULT = 4096  # the max_out_len of AISBench's VLLMCustomAPI(Chat) when the config gives none
COLUMN = "max_out_len"


def _service_model(mcfg: Any) -> bool:
    from promptweave.compat.models import type_name
    from promptweave.compat.service_types import is_service_type

    return is_service_type(type_name(cfg_get(mcfg, "type")))


def model_max_out_len(mcfg: Any) -> int | None:
    """The ``max_out_len`` every request of this model asks for whatever the inferencer says, or None where the
    inferencer's setting wins (every model but AISBench's service classes)."""
    if not _service_model(mcfg):
        return None
    value = cfg_get(mcfg, "max_out_len")
    return AISBENCH_SERVICE_DEFAULT if value is None else value


def row_max_out_lens(mcfg: Any, input_columns: Sequence[str], rows: Sequence[Any], indices: Sequence[int],
                     *, file: str | None = None, where: str = "") -> dict[int, int]:
    """Row index → the ``max_out_len`` its request asks for, for the rows that set their own (empty otherwise)."""
    if COLUMN not in input_columns or not _service_model(mcfg):
        return {}
    out: dict[int, int] = {}
    for i in indices:
        row = rows[i]
        value = cfg_get(row, COLUMN)
        if value is None or value == 0 or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"row {i}'s {COLUMN} must be a whole number of tokens (AISBench sends it as the "
                              "request's max_tokens)", file=file, field=f"{where}[{i}].{COLUMN}", value=value,
                              expected="a positive integer, or nothing for the model's max_out_len")
        out[i] = value
    return out
