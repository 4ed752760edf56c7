"""torch's intra-op threads, chosen from the CPUs this process may actually use.

torch starts as many threads as the machine has cores, whatever the process's CPU
affinity or its container's CPU quota allow; on a shared or limited machine the extra
threads only wait for each other (a local run under load took 81 s with the default and
5.7 s with one thread). So, unless the user chose a number (``num_threads`` in the model
config, ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, or ``torch.set_num_threads`` before the
model loads), the count is the smaller of the affinity mask and the cgroup quota.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

USER_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
_CGROUP = Path("/sys/fs/cgroup")


def _quota_v2(root: Path) -> float | None:
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else int(quota) / int(period)


def _quota_v1(root: Path) -> float | None:
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def cgroup_cpu_quota(root: Path = _CGROUP) -> float | None:
    """CPUs the container's quota allows (cgroup v2 ``cpu.max`` or v1 ``cfs_quota_us``); None when unlimited."""
    return _quota_v2(root) or _quota_v1(root)


def available_cpus(root: Path = _CGROUP) -> int:
    """CPUs this process can use: its affinity mask, capped by the cgroup quota (rounded up, at least 1)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota(root)
    if quota:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


def _user_set(torch: Any, imported_before: bool) -> bool:
    if any(os.environ.get(v) for v in USER_VARS):
        return True
    # torch imported by the user's code may have had set_num_threads called; torch's own default is the
    # machine's core count, so any other value was chosen by someone
    return imported_before and torch.get_num_threads() not in (os.cpu_count(), available_cpus())


def choose_threads(torch: Any, configured: int | None = None, *, imported_before: bool = False) -> int:
    """Set torch's intra-op threads (see the module docstring) and return the count in force."""
    if configured:
        torch.set_num_threads(max(1, int(configured)))
    elif not _user_set(torch, imported_before):
        n = available_cpus()
        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
    return int(torch.get_num_threads())
