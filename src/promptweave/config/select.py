"""Choosing a config's datasets or models by ``abbr`` (the commands' ``--dataset`` / ``--model``)."""
from __future__ import annotations

from typing import Any, Sequence


def select(names: Sequence[str], wanted: Sequence[str] | None, what: str, cfg: Any) -> list[int]:
    """Indices of the entries whose abbr is in ``wanted`` (all when None); unknown names are an error."""
    if not wanted:
        return list(range(len(names)))
    out = []
    for w in wanted:
        hits = [i for i, n in enumerate(names) if n == w]
        if not hits:
            from promptweave.errors import ConfigError

            raise ConfigError(f"no {what} named {w!r}", file=str(cfg.path),
                              expected="one of " + ", ".join(names) if names else f"a {what} in the config")
        out.extend(hits)
    return out
