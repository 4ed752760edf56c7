"""Which dataset × model pairs a config runs: all of them, or those its ``model_dataset_combinations`` lists.

OpenCompass reads ``model_dataset_combinations = [dict(models=[...], datasets=[...]), ...]`` to run each group's
datasets on that group's models only (a perplexity dataset on the models that can score it, say). Entries are
matched to ``models`` / ``datasets`` by their abbr.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import ConfigError

KEY = "model_dataset_combinations"


def allowed_pairs(cfg: Any) -> set[tuple[int, int]] | None:
    """(dataset index, model index) pairs to run, or None when the config does not restrict them."""
    from promptweave.config.loader import dataset_abbr, model_abbr, normalise

    groups = (getattr(cfg, "variables", None) or {}).get(KEY)
    if groups is None:
        return None
    file = str(cfg.path)
    if isinstance(groups, Mapping):
        groups = [groups]
    if not isinstance(groups, (list, tuple)):
        raise ConfigError(f"{KEY} must be a list of dict(models=[...], datasets=[...])", file=file, field=KEY,
                          value=groups)
    ds_abbrs, m_abbrs = cfg.dataset_abbrs(), cfg.model_abbrs()
    out: set[tuple[int, int]] = set()
    for g, group in enumerate(groups):
        if not isinstance(group, Mapping):
            raise ConfigError("each combination must be a dict(models=[...], datasets=[...])", file=file,
                              field=f"{KEY}[{g}]", value=group)
        picked: dict[str, list[int]] = {}
        for key, abbrs, name_of in (("models", m_abbrs, model_abbr), ("datasets", ds_abbrs, dataset_abbr)):
            entries = group.get(key)
            if isinstance(entries, Mapping):
                entries = [entries]
            if not isinstance(entries, (list, tuple)):
                raise ConfigError(f"a combination's {key} must be a list of the config's {key}", file=file,
                                  field=f"{KEY}[{g}].{key}", value=entries)
            picked[key] = []
            for n, entry in enumerate(entries):
                abbr = name_of(normalise(entry), -1) if isinstance(entry, Mapping) else str(entry)
                if abbr not in abbrs:
                    raise ConfigError(f"a combination names a {key[:-1]} that is not in {key}", file=file,
                                      field=f"{KEY}[{g}].{key}[{n}]", value=abbr,
                                      expected="one of " + ", ".join(abbrs))
                picked[key] += [k for k, a in enumerate(abbrs) if a == abbr]
        out.update((i, j) for i in picked["datasets"] for j in picked["models"])
    return out


def paired(allowed: set[tuple[int, int]] | None, i: int, model_ids: list[int], specs: list[Any]
           ) -> tuple[list[int], list[Any]]:
    """The models (indices and their specs) that dataset ``i`` runs on."""
    keep = [k for k, j in enumerate(model_ids) if allowed is None or (i, j) in allowed]
    return [model_ids[k] for k in keep], [specs[k] for k in keep]
