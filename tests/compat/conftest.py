import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

from openai_stub import stub_server  # noqa: F401  (pytest fixture)
from tiny_lm import tiny_model_dir  # noqa: F401  (pytest fixture)
