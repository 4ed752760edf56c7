"""``promptweave lint --no-data`` of each shipped OpenCompass dataset config, each alone in a fresh process, in the
environment OpenCompass users have (opencompass installed *with* its dependencies, promptweave installed into it).

Run with that environment's interpreter (``benchmarks/config_sweep.py`` does, when ``$PROMPTWEAVE_OC_FULL_VENV`` or
``.venvs/oc-full`` in the checkout holds it)::

    V/bin/python benchmarks/oc_full_sweep.py --json out.json [--limit N] [--jobs 2]

Each config is linted in its own child process whose interpreter has imported **no module of opencompass** and
no promptweave module but the CLI's own: so whether a bridged name resolves cannot depend on another config
having imported ``opencompass.datasets`` first. Starting a child is a ``fork`` of a parent that has imported
promptweave's CLI and opencompass's third-party dependencies (torch, datasets, transformers, mmengine ...), never
opencompass itself (what the parent imported is listed in the JSON): a cold interpreter per config costs about
15 s of CPU for those imports alone, which would make the sweep take hours on a small machine, and nothing in those
libraries holds OpenCompass's registries.

Per config the child records its exit code, whether its output holds a Python traceback, and every network
connection attempted (``HF_HUB_OFFLINE=1`` and ``HF_DATASETS_OFFLINE=1`` are set; any ``connect`` to a
non-loopback address is refused and recorded). Files are visited in a fixed shuffled order, so a run cut short by
``--limit`` is a uniform sample.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# third-party packages opencompass imports (none of them is opencompass); preloaded once in the parent
PRELOAD = ("numpy", "torch", "datasets", "transformers", "mmengine", "mmengine.config", "mmengine.registry",
           "pandas", "scipy", "sklearn", "nltk", "jieba", "rouge", "rouge_score", "sacrebleu", "evaluate",
           "sentence_transformers", "tiktoken", "openai", "huggingface_hub", "PIL", "cv2", "matplotlib")


_PROBE = """
import sys
before = set(sys.modules)
for m in ("opencompass.registry", "opencompass.datasets", "opencompass.openicl", "opencompass.evaluator",
          "opencompass.utils.text_postprocessors", "opencompass.utils.dict_postprocessors"):
    try:
        __import__(m)
    except Exception:
        pass
print(" ".join(sorted({n for n in sys.modules if n not in before and n.split(".")[0] != "opencompass"
                       and not n.startswith("_") and "." not in n})))
"""


def _guard_network(log: list[str]) -> None:
    """Refuse, and record, every connection to something other than loopback."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def local(host: Any) -> bool:
        return isinstance(host, str) and (host in ("localhost", "::1") or host.startswith("127."))

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and not local(host):
            log.append(f"connect {host}")
            raise OSError("network refused by the sweep")
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not local(host):
            log.append(f"resolve {host}")
            raise socket.gaierror("network refused by the sweep")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]


def _child(path: Path, out_file: Path) -> None:
    """In the forked child: lint one config, write a JSON line, exit."""
    fd = os.open(str(out_file.with_suffix(".log")), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    net: list[str] = []
    _guard_network(net)
    start = time.perf_counter()
    rc = 0
    try:
        from promptweave.cli.app import run_cli

        rc = int(run_cli(["lint", "--no-data", str(path)]) or 0)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - an escaped exception is what the sweep counts
        import traceback

        traceback.print_exc()
        rc = 99
    sys.stdout.flush()
    sys.stderr.flush()
    loaded = sorted(m for m in sys.modules if m == "opencompass" or m.startswith("opencompass."))
    out_file.write_text(json.dumps({"rc": rc, "network": net, "seconds": round(time.perf_counter() - start, 2),
                                    "opencompass_modules": len(loaded)}))
    os._exit(0)


def sweep(files: list[Path], jobs: int, tmp: Path, partial: Path | None = None) -> dict[str, dict[str, Any]]:
    """Lint ``files``, ``jobs`` at a time; each result is also appended to ``partial`` (JSON lines) as it comes,
    so a run stopped early still leaves a uniform sample."""
    results: dict[str, dict[str, Any]] = {}
    running: dict[int, tuple[Path, Path]] = {}
    todo = list(enumerate(files))
    while todo or running:
        while todo and len(running) < jobs:
            i, path = todo.pop(0)
            out = tmp / f"{i}.json"
            pid = os.fork()
            if pid == 0:
                try:
                    _child(path, out)
                finally:
                    os._exit(98)
            running[pid] = (path, out)
        pid, status = os.wait()
        path, out = running.pop(pid)
        log = out.with_suffix(".log")
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        try:
            got = json.loads(out.read_text())
        except (OSError, ValueError):
            got = {"rc": 97, "network": [], "seconds": None, "crashed": os.waitstatus_to_exitcode(status)}
        got["traceback"] = "Traceback (most recent call last)" in text
        got["internal_error"] = "[PW001]" in text or "internal error" in text
        got["first_line"] = next((ln for ln in text.splitlines() if ln.startswith("error:")), "")[:400]
        results[str(path)] = got
        if partial is not None:
            with partial.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"path": str(path), **got}) + "\n")
        print(f"[{len(results)}/{len(files)}] rc={got['rc']} {path.name}", file=sys.stderr, flush=True)
    return results


def summarise(results: dict[str, dict[str, Any]], helpers_marker: str = "defines no datasets") -> dict[str, Any]:
    helpers = {p for p, r in results.items() if r["rc"] != 0 and helpers_marker in r["first_line"]}
    counted = {p: r for p, r in results.items() if p not in helpers}
    ok = sum(r["rc"] == 0 for r in counted.values())
    return {"files": len(results), "dataset_configs": len(counted), "not_dataset_configs": len(helpers),
            "ok": ok, "share": ok / len(counted) if counted else 0.0,
            "tracebacks": sorted(p for p, r in results.items() if r["traceback"]),
            "internal_errors": sorted(p for p, r in results.items() if r.get("internal_error")),
            "network_attempts": {p: r["network"] for p, r in results.items() if r["network"]},
            "failed": {p: r["first_line"] for p, r in counted.items() if r["rc"] != 0}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", type=Path, nargs="+", help="only these configs (e.g. a run's failures, again)")
    args = ap.parse_args()
    os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    from promptweave.compat.reference_tables import package_root

    root = package_root("opencompass")
    if root is None:
        sys.exit("opencompass is not installed in this interpreter")
    files = sorted(p for p in (root / "configs" / "datasets").rglob("*.py") if p.name != "__init__.py")
    random.Random(args.seed).shuffle(files)
    if args.files:
        files = [p.resolve() for p in args.files]
    if args.limit:
        files = files[:args.limit]
    preloaded = []
    import importlib
    import subprocess
    import warnings

    # what opencompass's own modules import from outside it, found by a throw-away interpreter that imports them
    probe = subprocess.run([sys.executable, "-W", "ignore", "-c", _PROBE], capture_output=True, text=True,
                           timeout=1800)
    third_party = [m for m in probe.stdout.split() if m] if probe.returncode == 0 else []

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mod in dict.fromkeys([*PRELOAD, *third_party]):
            try:
                importlib.import_module(mod)
                preloaded.append(mod)
            except Exception:  # noqa: BLE001 - a dependency this environment lacks is simply not preloaded
                pass
        import promptweave.cli.app  # noqa: F401 - the CLI itself, as every child needs it
    assert not [m for m in sys.modules if m.split(".")[0] == "opencompass"], "the parent must not import opencompass"
    from importlib import metadata

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pw-ocfull-") as tmp:
        partial = args.json.with_suffix(".partial.jsonl")
        partial.unlink(missing_ok=True)
        results = sweep(files, args.jobs, Path(tmp), partial)
    summary = summarise(results)
    summary.update({"seconds": round(time.perf_counter() - start, 1), "preloaded": preloaded,
                    "limit": args.limit, "total_files": len(sorted((root / "configs" / "datasets").rglob("*.py"))),
                    "versions": {d: metadata.version(d) for d in ("opencompass", "numpy", "datasets", "torch")}})
    args.json.write_text(json.dumps({"summary": summary, "results": results}, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k not in ("failed",)}, indent=1))


if __name__ == "__main__":
    main()
