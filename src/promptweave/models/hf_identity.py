"""A fingerprint of everything a transformers model's identity is computed from, read without transformers.

The response cache keys every call on the model's identity (tokenizer, chat template, config,
dtype, eos ids), which takes transformers — and, with it, torch — to compute. The fingerprint
hashes the files and settings that identity comes from, so a run can keep the identity it
computed once next to its answers and a fully cached rerun needs neither library. Any change
to a tokenizer or config file, a setting, the transformers version or the GPUs present gives
another fingerprint, and the identity is computed afresh.
"""
from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

VERSION = "hf-identity-1"  # bump when HFModel.identity() changes what it returns
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack", ".ckpt", ".onnx", ".pkl")
_MAX_FILE = 256 << 20


def _files(folder: Path) -> list[list[str]]:
    """Name and content hash of each non-weight file at the top of ``folder``."""
    out = []
    for p in sorted(folder.iterdir()):
        if not p.is_file() or p.name.endswith(_WEIGHTS) or p.stat().st_size > _MAX_FILE:
            continue
        out.append([p.name, hashlib.sha256(p.read_bytes()).hexdigest()])
    return out


def _gpus() -> list[str]:
    """The GPUs the driver shows and which of them the process may see (an ``auto`` dtype depends on them)."""
    root = Path("/proc/driver/nvidia/gpus")
    found = []
    if root.is_dir():
        for d in sorted(root.iterdir()):
            info = d / "information"
            found.append(info.read_text(errors="replace") if info.is_file() else d.name)
    return found + [os.environ.get("CUDA_VISIBLE_DEVICES", "")] if found else []


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def identity_fingerprint(path: str, tokenizer_path: str, settings: dict[str, Any]) -> str | None:
    """The fingerprint of a model in local folders; None for a hub id (its files are not read here)."""
    folders = []
    for where in (path, tokenizer_path):
        p = Path(where)
        if not p.is_dir():
            return None
        folders.append([str(p.resolve()), _files(p)])
    auto = settings.get("dtype") == "auto" or settings.get("device") == "auto"
    text = json.dumps({"v": VERSION, "folders": folders, "settings": settings,
                       "transformers": _version("transformers"), "gpus": _gpus() if auto else None},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
