"""Configs: OpenCompass-shaped .py (evaluated safely), .yaml and .json.

``open_dataset`` / ``open_model`` (building engine specs from a config's entries) live in ``engine/open.py``; they
are still reachable here by name, imported on first use, so configs sit below the engine."""
import importlib

from promptweave.config.loader import Config, load_config

__all__ = ["Config", "load_config", "open_dataset", "open_model"]


def __getattr__(name: str):
    if name in ("open_dataset", "open_model"):
        return getattr(importlib.import_module("promptweave.engine.open"), name)
    raise AttributeError(name)
