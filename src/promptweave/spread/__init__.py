"""Format spread: many formats of each dataset's own template, run as ordinary tasks, and what changes.

``grammar`` (the formats) → ``variants`` (a dataset's variants) → ``execute`` (run's planner and task
execution per variant; ``spread.json``) → ``stats`` (the figures), ``search`` (the extremes within a budget);
the report package reads ``spread.json`` (``report/spread.py``).
"""
from promptweave.spread.execute import SpreadRequest, run_search, run_spread
from promptweave.spread.grammar import Format, apply_template, apply_text
from promptweave.spread.search import search_extremes
from promptweave.spread.stats import pss, summarize
from promptweave.spread.variants import Variant, dataset_variants, variant_config

__all__ = ["Format", "SpreadRequest", "Variant", "apply_template", "apply_text", "dataset_variants", "pss",
           "run_search", "run_spread", "search_extremes", "summarize", "variant_config"]
