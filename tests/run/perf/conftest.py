import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "servers"))

from openai_stub import stub_server  # noqa: E402,F401  (pytest fixture)
