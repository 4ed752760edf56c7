"""The references' data-cache settings: the environment variables and default folders their data paths join onto.

Read by ``data.locate`` (where ``run`` looks) and ``data.fetch`` (where ``data fetch`` unpacks), so both agree.
"""
from __future__ import annotations

from pathlib import Path

COMPASS_ENV = "COMPASS_DATA_CACHE"
AISBENCH_ENV = "AIS_BENCH_DATASETS_CACHE"
COMPASS_DEFAULT = Path("~/.cache/opencompass")
AISBENCH_PREFIX = "ais_bench/"
