"""An agent's Python session: one persistent sandboxed interpreter per conversation (AgentInferencer's code tool).

One sandbox per conversation, kept alive between cells so a variable defined in one step is there in the next, as
in the Jupyter kernel the reference drives. The same OS sandbox as the code runner (:mod:`promptweave.evaluate.
os_sandbox`: bubblewrap, no processes, no network, a private tmpfs work dir; the data folder read-only under its own
name), limits on address space, CPU for the whole session, file size and open files, plus a wall-clock limit per
cell that ends the session (the next cell starts a fresh one, and says so). site-packages stay importable,
read-only: the model's code is meant to use the environment's libraries (pandas, matplotlib, ...), as in the
reference. Figures are saved inside the sandbox and sent back as bytes in the cell's report; the host writes them
where they are kept for scoring. A cell's outputs are what the session reports; nothing here is a verdict.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from promptweave.errors import CodeExecutionError
from promptweave.evaluate import os_sandbox
from promptweave.evaluate.code_exec import FLAG, ensure_sandbox
from promptweave.evaluate.code_harness import DISARM

_SESSION = r"""
import ast, base64, io, json, os, sys, traceback, resource, posix
_token = sys.argv[1]
_report = os.fdopen(os.dup(1), "w")
_exit = os._exit
_limits = json.loads(sys.argv[2])
_max_image = int(sys.argv[3])
for _res, _v in _limits.items():
    try:
        resource.setrlimit(getattr(resource, _res), (_v, _v))
    except (ValueError, OSError):
        pass
""" + DISARM + r"""def _no_input(*a, **k):
    raise NotImplementedError("Python input() function is disabled.")
_ns = {"__name__": "__main__", "input": _no_input}
class _Sink(io.TextIOBase):
    def __init__(self, name, chunks):
        self.name, self.chunks = name, chunks
    def writable(self):
        return True
    def write(self, s):
        if s:
            if self.chunks and self.chunks[-1][0] == self.name:
                self.chunks[-1][1] += s
            else:
                self.chunks.append([self.name, s])
        return len(s)
def _figures(chunks, images):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in list(plt.get_fignums()):
        buf = io.BytesIO()
        try:
            plt.figure(num).savefig(buf, format="png")
        except Exception:
            continue
        if buf.tell() <= _max_image:
            images.append(base64.b64encode(buf.getvalue()).decode("ascii"))
    plt.close("all")
def _cell(src):
    chunks, images, ok = [], [], True
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Sink("stdout", chunks), _Sink("stderr", chunks)
    try:
        tree = ast.parse(src, "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not src.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), _ns)
            if value is not None:
                _ns["_"] = value
                chunks.append(["execute_result", repr(value)])
    except BaseException as exc:
        ok = False
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
            tb = tb.tb_next
        chunks.append(["error", "".join(traceback.format_exception(type(exc), exc, tb)).rstrip("\n")])
    finally:
        sys.stdout, sys.stderr = out, err
    try:
        _figures(chunks, images)
    except BaseException:
        pass
    return {"ok": ok, "outputs": chunks, "images": images}
for _line in sys.stdin:
    try:
        _job = json.loads(_line)
    except ValueError:
        continue
    try:
        _res = _cell(_job["code"])
    except BaseException as _exc:
        _res = {"ok": False, "outputs": [["error", repr(_exc)]], "images": []}
    _report.write(_token + json.dumps(_res) + "\n")
    _report.flush()
_exit(0)
"""


@dataclass(frozen=True)
class SessionLimits:
    """Limits of an agent's Python session: wall clock per cell; memory, CPU, file size and the private work
    folder's size for the whole session; the largest figure (PNG bytes) and cell report kept."""

    cell_timeout_s: float = 60.0
    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 64
    disk_mb: int = 256  # its work folder and its /tmp each (tmpfs: host memory, so kept small)
    image_mb: int = 16
    report_mb: int = 64


@dataclass(frozen=True)
class CellResult:
    """One cell's outcome: ``outputs`` as ``(kind, text)`` in order (``stdout``, ``stderr``, ``execute_result``,
    ``error``), the PNG files of the figures it left open, whether it timed out (the session was then ended)."""

    ok: bool
    outputs: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    timed_out: bool = False
    restarted: bool = False  # a fresh session ran it: what earlier cells defined is gone


class PythonSession:
    """A persistent sandboxed Python process for one conversation (see ``_SESSION``); ``run(code)`` runs one cell.

    ``data_dir``: a folder made visible, read-only, in the session's working directory under its own name
    (CIBench's ``datasources``), read where the model's code expects it; ``image_dir``: where figures are saved
    (kept after the session ends, for scoring); ``sandbox``: ``bwrap`` (the OS sandbox) or ``rlimits`` (only when
    the user asked for it). Use as a context manager, or call ``close()``.
    """

    def __init__(self, limits: SessionLimits = SessionLimits(), *, data_dir: str | os.PathLike | None = None,
                 image_dir: str | os.PathLike | None = None, sandbox: str = os_sandbox.DEFAULT_MODE) -> None:
        self.limits = limits
        self.sandbox = os_sandbox.check_mode(sandbox, "code_sandbox")
        self.data_dir = None if data_dir is None else os.path.abspath(data_dir)
        self._own_images = image_dir is None
        self.image_dir = tempfile.mkdtemp(prefix="pw-images-") if image_dir is None else str(image_dir)
        os.makedirs(self.image_dir, exist_ok=True)
        self._box: os_sandbox.Sandboxed | None = None
        self._buf = b""
        self._n_img = 0
        self.cells = 0
        self.started = 0

    @property
    def _proc(self) -> subprocess.Popen | None:
        return None if self._box is None else self._box.proc

    def _start(self) -> None:
        ensure_sandbox(self.sandbox)
        data = None
        if self.data_dir and os.path.isdir(self.data_dir):
            data = {self.data_dir: os.path.basename(self.data_dir.rstrip("/")) or "data"}
        self._token = secrets.token_hex(16)
        lim = {"RLIMIT_AS": self.limits.memory_mb * 1024 * 1024, "RLIMIT_CPU": self.limits.cpu_s,
               "RLIMIT_FSIZE": self.limits.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 256}
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        jail = os_sandbox.Jail(work_mb=self.limits.disk_mb, tmp_mb=self.limits.disk_mb, data=data)
        try:
            self._box = os_sandbox.start([sys.executable, "-I", "-c", _SESSION, self._token, json.dumps(lim),
                                          str(self.limits.image_mb * 1024 * 1024)], self.sandbox, jail, env)
        except OSError as exc:
            raise CodeExecutionError(f"the code interpreter could not start ({exc})",
                                     field="infer_cfg.inferencer") from None
        self._buf = b""
        self.started += 1

    def run(self, code: str) -> CellResult:
        restarted = self._box is None and self.started > 0
        if self._box is None or self._box.proc.poll() is not None:
            restarted = restarted or self._box is not None
            self._stop()
            self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self.cells += 1
        try:
            proc.stdin.write((json.dumps({"code": code}) + "\n").encode("utf-8", "surrogatepass"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._stop()
            return CellResult(False, (("error", "the Python session ended (a limit was hit)"),),
                              restarted=restarted)
        got = self._read_report(self.limits.cell_timeout_s)
        if got is None:
            timed_out = self._proc is not None and self._proc.poll() is None
            self._stop()
            why = (f"Timeout. No response after {self.limits.cell_timeout_s:g} seconds." if timed_out
                   else "the Python session ended (a memory, CPU or file-size limit was hit)")
            return CellResult(False, (("error", why),), timed_out=timed_out, restarted=restarted)
        return CellResult(bool(got.get("ok")), tuple((str(k), str(t)) for k, t in got.get("outputs", [])),
                          self._save_images(got.get("images")), restarted=restarted)

    def _save_images(self, images: Any) -> tuple[str, ...]:
        import base64
        import binascii

        paths = []
        for data in images if isinstance(images, list) else []:
            try:
                png = base64.b64decode(str(data), validate=True)
            except (binascii.Error, ValueError):
                continue
            if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) > self.limits.image_mb * 1024 * 1024:
                continue
            self._n_img += 1
            path = os.path.join(self.image_dir, "fig-%04d.png" % self._n_img)
            with open(path, "wb") as f:
                f.write(png)
            paths.append(path)
        return tuple(paths)

    def _read_report(self, timeout: float) -> dict | None:
        import selectors
        import time

        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        tag = self._token.encode()
        cap = self.limits.report_mb * 1024 * 1024
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                while b"\n" in self._buf:
                    line, self._buf = self._buf.split(b"\n", 1)
                    if line.startswith(tag):
                        try:
                            return json.loads(line[len(tag):].decode("utf-8", "replace"))
                        except ValueError:
                            return None
                if len(self._buf) > cap:  # a cell flooding the real stdout: the session is ended
                    return None
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self._buf += chunk

    def _stop(self) -> None:
        if self._box is not None:
            self._box.kill()
            self._box = None

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> PythonSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def require_code_exec(allow_code_exec: bool, *, file: str | None = None, field: str = "infer_cfg.inferencer",
                      value: Any = None) -> None:
    """The agent runs the model's code at every turn: refused, before any call, unless the user opted in."""
    if not allow_code_exec:
        raise CodeExecutionError(
            f"AgentInferencer infer_mode={value!r} runs the model's code in a Python session at every turn; it only "
            f"runs with {FLAG}", file=file, field=f"{field}.infer_mode", value=value,
            expected=f"promptweave run {FLAG} ... (the code runs in an OS sandbox, one per conversation)")
