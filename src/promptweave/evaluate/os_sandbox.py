"""The OS sandbox model code runs in (``--allow-code-exec``): bubblewrap, or, only when asked for, bare rlimits.

``bwrap`` (the default) starts each program as::

    bwrap --unshare-all --unshare-user --disable-userns --uid 65534 --gid 65534 --cap-drop ALL
          --die-with-parent --new-session --clearenv --as-pid-1 --ro-bind /usr /usr ... --proc /proc --dev /dev
          --size N --tmpfs /sandbox --size N --tmpfs /tmp --chdir /sandbox --seccomp FD --info-fd FD -- python ...

so the program has no network (its own, empty network namespace), its own PID namespace in which it is PID 1 and
alone (``/proc`` is the sandbox's; there is no unguarded init beside it whose memory it could write), a clean
environment (bubblewrap itself is started with an empty one), a read-only view of only what the interpreter needs
(``/usr``, the interpreter's prefix and site-packages, a few public files of ``/etc``) and two private, size-capped
tmpfs folders as the only writable places. A seccomp filter refuses creating processes (threads are allowed),
``ptrace`` and ``prctl(PR_SET_PDEATHSIG)``: a process limit that holds as root too, where ``RLIMIT_NPROC`` is
ignored. The sandbox dies with the run (``--die-with-parent``, which the code cannot undo), and ``kill()`` ends its
PID 1 through a pidfd (from ``--info-fd``), which takes the whole namespace with it.

``rlimits`` is the old, weaker mode: a ``python -I`` subprocess in a temporary folder with resource limits only.
It is used only when the user names it (``--code-sandbox=rlimits``), and a warning says what it leaves open. Run as
root, it never hands model code root's reach: the process starts in its own session as a throwaway user (a random
uid and gid far above any account's, no supplementary groups, ``no_new_privs`` and an empty capability bounding set
where ``setpriv`` is installed), so it can signal, trace or read the memory of no process but its own, and
``kill()`` ends every process of that user. Where the interpreter lies in a folder only root may enter (a pyenv
under ``/root``), the throwaway user keeps one capability, ``CAP_DAC_READ_SEARCH`` (reading files, as root could),
and nothing else; where neither works the run is refused with ``PW632``, saying what to do.

Whether bubblewrap works here is found by starting it once (per process and bwrap binary) with the very options
used for model code, and checking that the process guard holds.
"""
from __future__ import annotations

import functools
import os
import platform
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from promptweave.errors import CodeSandboxError, CodeSandboxRootError

BWRAP = "bwrap"
RLIMITS = "rlimits"
MODES = (BWRAP, RLIMITS)
DEFAULT_MODE = BWRAP
FLAG = "--code-sandbox"
INSTALL_HINT = ("bubblewrap with user namespaces (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
                "bubblewrap; and sysctl user.max_user_namespaces > 0), or, knowingly, the weaker "
                f"{FLAG}=rlimits")
RLIMITS_WARNING = (f"{FLAG}=rlimits: model code runs WITHOUT OS isolation, with only time, memory and file-size "
                   "limits: it can read and write your files, open network connections, see and signal your "
                   "processes, read their environment (API keys) and start processes that outlive the run (run as "
                   "root, it runs as a throwaway user instead, which limits the processes it can reach to its own). "
                   "Use it only on answers you trust; install bubblewrap for the default sandbox.")
WORKDIR = "/sandbox"  # the program's working directory (and HOME) inside the sandbox
SANDBOX_UID = 65534  # the sandbox user: not root inside its user namespace, so it holds no capabilities
# rlimits as root: a fresh uid/gid per sandbox from a range no account or user-namespace mapping uses in practice
# (subordinate ids start at 100000 and come in blocks of 65536), so two sandboxes cannot signal each other either
THROWAWAY_IDS = (2_000_000_000, 2_100_000_000)


def throwaway_id() -> int:
    low, high = THROWAWAY_IDS
    return low + secrets.randbelow(high - low)

# public, non-secret files some libraries read (the dynamic loader's cache, time zone, fonts, BLAS alternatives)
_ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/fonts", "/etc/alternatives", "/etc/mime.types")


def check_mode(mode: str, field: str = FLAG) -> str:
    if mode not in MODES:
        raise CodeSandboxError("unknown code sandbox", field=field, value=mode, expected=" or ".join(MODES))
    return mode


# -- the process guard: a seccomp filter (classic BPF, as bubblewrap's --seccomp takes it) -------------------------
# audit arch, syscall numbers: clone, clone3, prctl, then always refused: fork, vfork, ptrace, process_vm_readv,
# process_vm_writev, unshare, setns (no new namespaces, as --disable-userns, also where bubblewrap lacks that option),
# add_key, request_key, keyctl (the session keyring is inherited from the run), io_uring_setup (outside seccomp's view)
_ARCH = {
    "x86_64": (0xC000003E, 56, 435, 157, (57, 58, 101, 310, 311, 272, 308, 248, 249, 250, 425)),
    "aarch64": (0xC00000B7, 220, 435, 167, (117, 270, 271, 97, 268, 217, 218, 219, 425)),
}
_CLONE_THREAD = 0x00010000
_PR_SET_PDEATHSIG = 1
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO, _RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


def _assemble(items: list[tuple]) -> bytes:
    """``(label,)`` marks a place; ``(code, k, jt, jf)`` with jump targets as labels (``None``: the next one)."""
    where: dict[str, int] = {}
    n = 0
    for it in items:
        if len(it) == 1:
            where[it[0]] = n
        else:
            n += 1
    out, pc = [], 0
    for it in items:
        if len(it) == 1:
            continue
        code, k, jt, jf = it
        off = [0 if t is None else where[t] - pc - 1 for t in (jt, jf)]
        assert all(0 <= o < 256 for o in off)
        out.append(struct.pack("=HBBI", code, off[0], off[1], k))
        pc += 1
    return b"".join(out)


def process_guard(machine: str | None = None) -> bytes | None:
    """The filter: other architectures killed, the x32 ABI refused, ``clone`` only with ``CLONE_THREAD`` (threads,
    not processes), ``clone3`` answered ENOSYS (its flags cannot be read, so libc falls back to ``clone``), ``fork``,
    ``vfork``, ``ptrace``, ``process_vm_readv/writev``, ``unshare``, ``setns``, the keyring calls, ``io_uring_setup``
    and ``prctl(PR_SET_PDEATHSIG)`` (which would let the code outlive the run) refused. ``None`` on an architecture it does not know."""
    arch = _ARCH.get(machine or platform.machine())
    if arch is None:
        return None
    audit, clone, clone3, prctl, refused = arch
    items: list[tuple] = [(_LD, 4, None, None), (_JEQ, audit, "native", None), (_RET, _RET_KILL, None, None),
                          ("native",), (_LD, 0, None, None),
                          (_JGE, 0x40000000, "enosys", None), (_JEQ, clone3, "enosys", None)]
    items += [(_JEQ, nr, "eperm", None) for nr in refused]
    items += [(_JEQ, clone, "clone", None), (_JEQ, prctl, "prctl", None), (_RET, _RET_ALLOW, None, None),
              ("clone",), (_LD, 16, None, None), (_JSET, _CLONE_THREAD, "allow", "eperm"),
              ("prctl",), (_LD, 16, None, None), (_JEQ, _PR_SET_PDEATHSIG, "eperm", "allow"),
              ("allow",), (_RET, _RET_ALLOW, None, None),
              ("eperm",), (_RET, _RET_ERRNO | _EPERM, None, None),
              ("enosys",), (_RET, _RET_ERRNO | _ENOSYS, None, None)]
    return _assemble(items)


# -- the read-only view of the interpreter ---------------------------------------------------------------------
def _python_dirs() -> list[str]:
    import site

    dirs = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
            os.path.dirname(os.path.realpath(sys.executable))]
    try:
        dirs += site.getsitepackages()
    except AttributeError:
        pass
    out: list[str] = []
    for d in dirs:
        d = os.path.realpath(d)
        if os.path.isdir(d) and not (d == "/usr" or d.startswith("/usr/")) and d != "/":
            out.append(d)
    # a folder inside another one bound already adds nothing
    out = sorted(set(out), key=len)
    kept: list[str] = []
    for d in out:
        if not any(d.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(d)
    # the unresolved venv path too, so ``sys.executable`` and its pyvenv.cfg are found where they are
    if sys.prefix != os.path.realpath(sys.prefix) and os.path.isdir(sys.prefix):
        kept.append(sys.prefix)
    return kept


def _root_entries() -> list[str]:
    """/bin, /lib, /lib64, /sbin as the host has them: a symlink into /usr is a symlink, a folder a read-only bind."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


@dataclass(frozen=True)
class Jail:
    """What one sandbox gets: the sizes of its private folders, extra read-only folders (host path -> name under
    the work dir), and, only for the tests of the namespace teardown, whether processes may be started."""

    work_mb: int = 64
    tmp_mb: int = 64
    data: Mapping[str, str] | None = None
    processes: bool = False


@functools.lru_cache(maxsize=8)
def _options(bwrap: str) -> frozenset[str]:
    """The newer options this bubblewrap has (``--disable-userns``, ``--size``: 0.8), from its ``--help``."""
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=30, env={}).stdout
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    text = out.decode("utf-8", "replace")
    return frozenset(o for o in ("--disable-userns", "--size") if o in text)


def bwrap_args(bwrap: str, jail: Jail, env: Mapping[str, str], seccomp_fd: int | None,
               info_fd: int | None = None) -> list[str]:
    has = _options(bwrap)
    args = [bwrap, "--unshare-all", "--unshare-user", *(("--disable-userns",) if "--disable-userns" in has else ()),
            "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID), "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
            # the code is the namespace's PID 1 itself: no unguarded bubblewrap init beside it whose memory
            # (/proc/1/mem) it could write, and a kill of "init" from inside is ignored
            *(() if jail.processes else ("--as-pid-1",)),
            "--ro-bind", "/usr", "/usr", *_root_entries()]
    for path in _ETC:
        args += ["--ro-bind-try", path, path]
    for d in _python_dirs():
        args += ["--ro-bind", d, d]
    # then everything read-only but the two tmpfs: the sandbox user maps to our own uid, which may be root, and
    # root-owned files such as /proc/sys/* would otherwise be writable to it (bubblewrap leaves /proc/sys alone
    # when the folder itself is not writable); the mount points are made first, while / still is
    args += ["--proc", "/proc", "--dev", "/dev", "--dir", WORKDIR, "--dir", "/tmp",
             "--remount-ro", "/", "--remount-ro", "/proc", "--remount-ro", "/dev"]
    for size, path in ((jail.work_mb, WORKDIR), (jail.tmp_mb, "/tmp")):
        args += [*(("--size", str(size * 1024 * 1024)) if "--size" in has else ()), "--tmpfs", path]
    for d in _python_dirs():  # an interpreter under /tmp (a venv in a checkout there) is hidden by the tmpfs: again
        if d == "/tmp" or d.startswith("/tmp/"):
            args += ["--ro-bind", d, d]
    for host, name in (jail.data or {}).items():
        args += ["--ro-bind", host, f"{WORKDIR}/{name}"]
    args += ["--chdir", WORKDIR]
    for k, v in env.items():
        args += ["--setenv", k, v]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    return args + ["--"]


# -- is it usable here? ----------------------------------------------------------------------------------------
_PROBE = ("import os\ntry:\n    pid = os.fork()\nexcept OSError:\n    print('guarded')\nelse:\n"
          "    if pid == 0:\n        os._exit(0)\n    print('open')\n")


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str | None) -> str | None:
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if process_guard() is None:
        return f"the sandbox's process guard does not know this architecture ({platform.machine()})"
    try:
        proc = Sandboxed.start([sys.executable, "-I", "-S", "-c", _PROBE], BWRAP, Jail(work_mb=1, tmp_mb=1),
                              {"PATH": "/usr/bin:/bin"}, bwrap=bwrap, stderr=subprocess.PIPE)
    except OSError as exc:
        return f"bubblewrap could not start ({exc})"
    try:
        out, err = proc.proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return "bubblewrap did not finish a trivial program in 30 s"
    finally:
        proc.kill()
    text = out.decode("utf-8", "replace").strip()
    if text == "guarded":
        return None
    if text == "open":
        return "bubblewrap ran, but its seccomp process guard did not hold"
    why = err.decode("utf-8", "replace").strip().splitlines()
    return f"bubblewrap cannot make a sandbox here ({why[-1] if why else f'exit status {proc.proc.returncode}'})"


def unavailable_reason() -> str | None:
    """Why the bubblewrap sandbox cannot be used here (``None``: it can); found once per process."""
    return _probe(shutil.which(BWRAP))


def require(mode: str, *, field: str = FLAG, file: str | None = None) -> None:
    """Plan time: the bwrap sandbox must work (else a typed error saying how to get it); rlimits is warned about."""
    check_mode(mode, field)
    if mode == RLIMITS:
        import warnings

        if os.geteuid() == 0:
            as_throwaway_user(throwaway_id())  # refused here, at plan time, where it cannot drop root

        from promptweave.errors import PromptweaveWarning

        warnings.warn(RLIMITS_WARNING, PromptweaveWarning, stacklevel=2)
        return
    why = unavailable_reason()
    if why is not None:
        raise CodeSandboxError(f"--allow-code-exec runs model code only in an OS sandbox, and {why}", file=file,
                               field=field, value=mode, expected=INSTALL_HINT)


# -- starting a sandboxed process ------------------------------------------------------------------------------
_spawner: tuple[int, ThreadPoolExecutor] | None = None
_spawner_lock = threading.Lock()


def _spawn(fn, *args, **kwargs):
    """Start processes from one long-lived thread: ``--die-with-parent`` (PR_SET_PDEATHSIG) follows the *thread*
    that started bubblewrap, and a worker thread that ends would take a live session with it. A forked process
    gets its own spawner (the parent's thread is not in it)."""
    global _spawner
    with _spawner_lock:
        if _spawner is None or _spawner[0] != os.getpid():
            _spawner = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="pw-sandbox-spawner"))
        pool = _spawner[1]
    return pool.submit(fn, *args, **kwargs).result()


def _read_info(fd: int, timeout: float = 30.0) -> int | None:
    """The sandbox's PID 1 as the host sees it, from bubblewrap's ``--info-fd`` JSON (``None`` if it never came)."""
    import json
    import selectors
    import time

    data = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while len(data) < 65536:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    try:
        pid = json.loads(data.decode("utf-8", "replace")).get("child-pid")
    except (ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


class Sandboxed:
    """One sandboxed process (``proc``, its pipes), the folder it runs in (``workdir``, as the process sees it),
    and ``kill()``: the whole sandbox, its private folder and every process it started."""

    def __init__(self, proc: subprocess.Popen, workdir: str, tmp: tempfile.TemporaryDirectory | None,
                 init: int | None = None) -> None:
        self.proc, self.workdir, self._tmp = proc, workdir, tmp
        self._init = init  # a pidfd of the sandbox's PID 1: killing it ends the PID namespace and all in it
        self._uid: int | None = None  # rlimits as root: the throwaway user whose every process is ended

    @classmethod
    def start(cls, argv: Sequence[str], mode: str, jail: Jail, env: Mapping[str, str], *, bwrap: str | None = None,
              stderr: int = subprocess.DEVNULL) -> Sandboxed:
        if mode == BWRAP:
            bwrap = bwrap or shutil.which(BWRAP)
            if bwrap is None:
                raise OSError("bwrap is not installed")
            guard = None if jail.processes else process_guard()
            rfd = None
            if guard is not None:
                rfd, wfd = os.pipe()
                os.write(wfd, guard)  # a few hundred bytes: fits the pipe's buffer
                os.close(wfd)
            info_r, info_w = os.pipe()
            try:
                cmd = bwrap_args(bwrap, jail, {**env, "HOME": WORKDIR}, rfd, info_w) + list(argv)
                # bubblewrap itself gets an empty environment: the sandbox's PID 1 is bubblewrap, and its
                # /proc/1/environ must not hold ours
                proc = _spawn(subprocess.Popen, cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                              env={}, start_new_session=True, close_fds=True,
                              pass_fds=(info_w,) if rfd is None else (rfd, info_w))
            except BaseException:
                os.close(info_r)
                raise
            finally:
                os.close(info_w)
                if rfd is not None:
                    os.close(rfd)
            try:
                pid = _read_info(info_r)
            finally:
                os.close(info_r)
            init = None
            if pid is not None:
                try:
                    init = os.pidfd_open(pid)
                except (OSError, AttributeError):
                    init = None
            return cls(proc, WORKDIR, None, init)
        tmp = tempfile.TemporaryDirectory(prefix="pw-sandbox-")
        for host, name in (jail.data or {}).items():
            os.symlink(host, os.path.join(tmp.name, name))
        uid = None
        if os.geteuid() == 0:
            uid = throwaway_id()
            os.chown(tmp.name, uid, uid)
            argv = [*as_throwaway_user(uid), *argv]
        try:
            proc = _spawn(subprocess.Popen, list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                          cwd=tmp.name, env={**env, "HOME": tmp.name}, start_new_session=True, close_fds=True)
        except OSError:
            tmp.cleanup()
            raise
        box = cls(proc, tmp.name, tmp)
        box._uid = uid
        return box

    def kill(self) -> None:
        proc = self.proc
        if self._init is not None:
            # PID 1 first: bubblewrap's monitor exits only once the namespace is empty, so after the wait nothing
            # the code started is left (killing the monitor first would leave that to happen on its own time)
            if proc.poll() is None:
                try:
                    signal.pidfd_send_signal(self._init, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            os.close(self._init)
            self._init = None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        if self._uid is not None:
            _kill_user(self._uid)
            self._uid = None
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


# -- rlimits as root: a throwaway user -----------------------------------------------------------------------------
_ROOT_DROP_WHAT_TO_DO = ("the bubblewrap sandbox (the default), promptweave run as an ordinary user, or a Python "
                         "installed where every user may read it (e.g. /usr or /opt), with util-linux's setpriv")


def _can_run(prefix: tuple[str, ...]) -> str | None:
    """``None`` when a throwaway user started with ``prefix`` runs this interpreter (its stdlib included), else why."""
    uid = throwaway_id()
    try:
        proc = subprocess.run([*prefix, sys.executable, "-I", "-S", "-c",
                               "import json, math, sys; print(sys.version, sys.base_prefix)"],
                              user=None if prefix else uid, group=None if prefix else uid,
                              extra_groups=None if prefix else [], env={}, cwd="/", stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60, close_fds=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if proc.returncode == 0:
        # the same interpreter with the same standard library (one that cannot read its own prefix falls back to
        # another installation's, silently)
        got = proc.stdout.decode("utf-8", "replace").strip()
        if got == f"{sys.version} {sys.base_prefix}":
            return None
        return f"it starts with another standard library: {got[:200]}"
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return err[-1] if err else f"exit status {proc.returncode}"


_SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")


def _setpriv(uid: int, caps: str, setpriv: str) -> tuple[str, ...]:
    out: tuple[str, ...] = (setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs")
    if caps:
        out += (f"--inh-caps=-all,+{caps}", f"--ambient-caps=-all,+{caps}")
    return (*out, f"--bounding-set=-all{',+' + caps if caps else ''}", "--")


@functools.lru_cache(maxsize=4)
def unprivileged_plan(setpriv: str | None = _SETPRIV) -> tuple[str, str]:
    """How model code drops root here (found once): ``("setpriv", caps)`` (util-linux's ``setpriv``, keeping
    ``caps`` only where the interpreter needs them), ``("exec", "")`` (a small wrapper that drops and execs, where
    there is no ``setpriv`` and every user may run the interpreter) or ``("refuse", why)``."""
    if setpriv:
        for caps in ("", "dac_read_search"):
            why = _can_run(_setpriv(throwaway_id(), caps, setpriv))
            if why is None:
                return "setpriv", caps
        return "refuse", f"a throwaway user cannot run {sys.executable} ({why})"
    why = _can_run(())
    if why is None:
        return "exec", ""
    return "refuse", f"a throwaway user cannot run {sys.executable} ({why}), and setpriv is not installed"


def as_throwaway_user(uid: int, plan: tuple[str, str] | None = None) -> tuple[str, ...]:
    """The command prefix that starts model code as the throwaway user ``uid`` (rlimits mode run as root)."""
    how, what = plan or unprivileged_plan()
    if how == "refuse":
        raise CodeSandboxRootError(
            f"{FLAG}=rlimits runs as root here, and model code must not keep root's reach over every process; "
            f"it runs as a throwaway user, but {what}", field=FLAG, value=RLIMITS, expected=_ROOT_DROP_WHAT_TO_DO)
    if how == "setpriv":
        assert _SETPRIV is not None
        return _setpriv(uid, what, _SETPRIV)
    # no setpriv: su-free dropping through a tiny exec wrapper run by this interpreter as root
    return (sys.executable, "-I", "-S", "-c", _DROP_AND_EXEC, str(uid))


# sets the groups, gid and uid (in that order, so none can be regained), then execs the rest of argv
_DROP_AND_EXEC = ("import os, sys\nuid = int(sys.argv[1])\nos.setgroups([])\nos.setresgid(uid, uid, uid)\n"
                  "os.setresuid(uid, uid, uid)\nos.execv(sys.argv[2], sys.argv[2:])\n")


def _kill_user(uid: int) -> None:
    """Every process of a throwaway user, also those that left the session: ``kill(-1, SIGKILL)`` sent as that
    user reaches exactly its processes."""
    try:
        subprocess.run([*as_throwaway_user(uid), sys.executable, "-I", "-S", "-c",
                        "import os, signal; os.kill(-1, signal.SIGKILL)"], env={}, cwd="/", stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, close_fds=True)
    except (OSError, subprocess.SubprocessError, CodeSandboxRootError):
        pass


def start(argv: Sequence[str], mode: str, jail: Jail, env: Mapping[str, str]) -> Sandboxed:
    """Start ``argv`` (an interpreter on the host's paths) in the sandbox ``mode``; stdin/stdout are pipes, stderr
    is dropped. The caller must ``kill()`` it. ``env`` is the whole environment the program gets."""
    return Sandboxed.start(argv, check_mode(mode), jail, env)


__all__ = ["BWRAP", "DEFAULT_MODE", "FLAG", "INSTALL_HINT", "Jail", "MODES", "RLIMITS", "RLIMITS_WARNING",
           "Sandboxed", "WORKDIR", "bwrap_args", "check_mode", "process_guard", "require", "start",
           "unavailable_reason"]
