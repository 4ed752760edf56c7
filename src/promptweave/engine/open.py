"""Turn config entries into engine specs: load a dataset's rows, validate a model's meta template."""
from __future__ import annotations

from typing import Any

from promptweave.config.loader import Config
from promptweave.engine.spec import DatasetSpec, ModelSpec
from promptweave.errors import PromptweaveError


def open_dataset(config: Config, index: int, *, add_meta: bool = False) -> DatasetSpec:
    """Load ``config.datasets[index]``'s rows and compile its templates."""
    from promptweave.data import load_dataset

    cfg = config.datasets[index]
    where = f"datasets[{index}]"
    # Templates first: a config mistake is reported before any data is read.
    spec = DatasetSpec.from_config(cfg, train=[], test=[], file=str(config.path), field_path=where,
                                   check_columns=False)
    try:
        splits = load_dataset(cfg, base_dir=config.base_dir, file=str(config.path), add_meta=add_meta)
    except PromptweaveError as exc:
        if exc.file in (None, str(config.path)) and not (exc.field or "").startswith("datasets["):
            raise exc.at(file=str(config.path), prefix=where) from None
        raise
    spec.train, spec.test, spec.same_split = splits.train, splits.test, splits.same_split
    spec.check_columns()
    return spec


def open_model(config: Config, index: int) -> ModelSpec:
    """Validate ``config.models[index]`` (its meta template is checked here, once)."""
    return ModelSpec.from_config(config.models[index], file=str(config.path), field_path=f"models[{index}]")


def dataset_rows_hint(cfg: dict[str, Any]) -> str:
    return str(cfg.get("path") or "inline rows")
