import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_lm import tiny_model_dir  # noqa: F401  (pytest fixture)

ray = pytest.importorskip("ray", reason="the Ray executor tests need Ray: pip install 'promptweave[ray]'")


@pytest.fixture(scope="module")
def ray_instance():
    """One real local Ray instance (2 CPUs, loopback) per test module."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="promptweave",
             _node_ip_address="127.0.0.1", log_to_driver=False)
    yield ray
    ray.shutdown()
