"""From dataset and model specs to the exact prompts a model receives."""
from promptweave.engine.builder import PromptBuilder, PromptRecord
from promptweave.engine.spec import DatasetSpec, InferencerConfig, ModelSpec, ReaderConfig, build_template

__all__ = ["PromptBuilder", "PromptRecord", "DatasetSpec", "InferencerConfig", "ModelSpec", "ReaderConfig",
           "build_template"]
