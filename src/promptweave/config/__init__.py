"""Configs: OpenCompass-shaped .py (evaluated safely), .yaml and .json; building specs from their entries."""
from promptweave.config.loader import Config, load_config
from promptweave.config.open import open_dataset, open_model

__all__ = ["Config", "load_config", "open_dataset", "open_model"]
