import sys
from pathlib import Path

# other test folders import the stand-in as ``openai_stub`` (or as ``tests.servers.openai_stub``)
sys.path.insert(0, str(Path(__file__).resolve().parent))
