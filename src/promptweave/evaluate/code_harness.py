"""The script run inside the code sandbox: it runs the model's program, then the test's steps, and reports.

It is the sandboxed process's own code, as reachable and patchable by the program as anything in that process, so
it holds nothing the verdict depends on: no token, no expected value, no comparison of a probe. It sends the values
the program produced and whether a step raised, one JSON record a line, on a copy of stdout (fds 0, 1 and 2 are
/dev/null while the program runs); :mod:`promptweave.evaluate.code_verdict` decides. See
:mod:`promptweave.evaluate.code_plan` for the steps.

``DISARM`` replaces Python's process, exit and file-removal functions with ones that refuse: a courtesy that makes
such programs fail fast with a clear error, not a boundary (``importlib.reload`` or ``ctypes`` get around it; the OS
sandbox is what holds).
"""
from __future__ import annotations

DISARM = r'''
def _refuse(*a, **k):
    raise PermissionError("disabled in the promptweave code sandbox")
for _name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
              "execlp", "execlpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
              "spawnvpe", "posix_spawn", "posix_spawnp", "kill", "killpg", "remove", "unlink", "rmdir",
              "removedirs", "rename", "renames", "truncate", "chmod", "chown", "putenv", "setuid", "_exit"):
    if hasattr(os, _name):
        setattr(os, _name, _refuse)
    if hasattr(posix, _name):
        setattr(posix, _name, _refuse)
import subprocess, shutil
subprocess.Popen = subprocess.run = subprocess.call = subprocess.check_output = subprocess.check_call = _refuse
shutil.rmtree = shutil.move = _refuse
'''

# Reads {"program", "steps", "limits", "plain"} as JSON on stdin. Values are encoded as one-key objects (see
# code_verdict.decode): exact builtin types only, unless "plain" (the test compares with ==, as HumanEval's do),
# where subclasses and numpy scalars are sent as the builtin value they compare as.
HARNESS = r'''
import json, os, sys, resource, posix, builtins
_control = os.fdopen(os.dup(0), "rb")  # the job, then the judge's later lines (relay mode)
_job = json.loads(_control.readline())
_exit = os._exit
_write = os.write
_report = os.dup(1)
_null = os.open(os.devnull, os.O_RDWR)
for _fd in (0, 1, 2):
    os.dup2(_null, _fd)
os.close(_null)
for _res, _v in _job["limits"].items():
    try:  # RLIMIT_NPROC is ignored for root: the sandbox's seccomp filter is the process limit that holds
        resource.setrlimit(getattr(resource, _res), (_v, _v + 1 if _res == "RLIMIT_CPU" else _v))
    except (ValueError, OSError):
        pass
import signal as _signal
# the CPU limit's warning, handled: as the sandbox's PID 1 a signal left at its default would be ignored
_signal.signal(_signal.SIGXCPU, lambda *a: _exit(124))
_plain = bool(_job.get("plain"))

def _out(rec):
    data = (json.dumps(rec) + "\n").encode("ascii")
    while data:
        data = data[_write(_report, data):]

class _Unsendable(Exception):
    pass

_MAX_DEPTH = 150
_SEQ = ((list, "l"), (tuple, "t"), (set, "set"), (frozenset, "fs"))

def _enc(v, depth=0):
    if depth > _MAX_DEPTH:
        raise _Unsendable("too deep")
    t = type(v)
    if v is None or t is bool:
        return v
    if t is int:
        return {"i": hex(v)}
    if t is float:
        return {"f": v.hex()}
    if t is complex:
        return {"c": [v.real.hex(), v.imag.hex()]}
    if t is str:
        return {"s": v}
    if t is bytes:
        return {"b": v.hex()}
    if t is dict:
        return {"d": [[_enc(k, depth + 1), _enc(x, depth + 1)] for k, x in v.items()]}
    for base, tag in _SEQ:
        if t is base:
            return {tag: [_enc(x, depth + 1) for x in v]}
    if _plain:
        if isinstance(v, int):
            return {"i": hex(int(v))}
        if isinstance(v, float):
            return {"f": float(v).hex()}
        if isinstance(v, str):
            return {"s": str.__str__(v)}
        if isinstance(v, bytes):
            return {"b": bytes(v).hex()}
        if isinstance(v, dict):
            return {"d": [[_enc(k, depth + 1), _enc(x, depth + 1)] for k, x in dict.items(v)]}
        for base, tag in _SEQ:
            if isinstance(v, base):
                return {tag: [_enc(x, depth + 1) for x in base.__iter__(v)]}
        if t.__module__ == "numpy" and getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
            return _enc(v.item(), depth + 1)
    raise _Unsendable(t.__name__)

def _send(v):
    try:
        enc = _enc(v)
    except Exception:  # not a plain value, or its conversion raised: equal to no expected value
        enc = {"o": str(type(v).__name__)[:100]}
    _out({"v": enc})

# the sandbox's copy of code_verdict.type_aware_equal (this script imports nothing of promptweave's); a test holds
# the two to the same answers
def _typed_equal(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_typed_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        left = list(b.items())
        for k, v in a.items():
            for i, (k2, v2) in enumerate(left):
                if _typed_equal(k, k2) and _typed_equal(v, v2):
                    del left[i]
                    break
            else:
                return False
        return True
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return False
        left = list(b)
        for x in a:
            for i, y in enumerate(left):
                if _typed_equal(x, y):
                    del left[i]
                    break
            else:
                return False
        return True
    try:
        r = a == b
    except Exception:
        return False
    return type(r) is bool and r

class _Opaque:
    def __eq__(self, other):
        return False
    __hash__ = object.__hash__

def _dec(o):
    if o is None or o is True or o is False:
        return o
    (t, x), = o.items()
    if t == "i":
        return int(x, 16)
    if t == "f":
        return float.fromhex(x)
    if t == "c":
        return complex(float.fromhex(x[0]), float.fromhex(x[1]))
    if t == "s":
        return x
    if t == "b":
        return bytes.fromhex(x)
    if t == "l":
        return [_dec(i) for i in x]
    if t == "t":
        return tuple(_dec(i) for i in x)
    if t == "set":
        return set(_dec(i) for i in x)
    if t == "fs":
        return frozenset(_dec(i) for i in x)
    if t == "d":
        return {_dec(k): _dec(v) for k, v in x}
    return _Opaque()

class _Null:
    def write(self, s):
        return len(s)
    def flush(self):
        pass
    def isatty(self):
        return False
''' + DISARM + r'''
def _run():
    g = {"__name__": "__main__"}
    scope = None
    exec(compile(_job["program"], "<program>", "exec"), g)
    for step in _job["steps"]:
        kind = step["k"]
        if kind == "exec":
            exec(compile(step["src"], "<test>", "exec"), g)
        elif kind == "bind":
            scope = {step["as"]: eval(compile(step["src"], "<test>", "eval"), g)}
        elif kind == "probe":
            value = eval(compile(step["src"], "<test>", "eval"), g, scope)
            _send(bool(value) if step.get("truth") else value)
        elif kind == "eq":
            left = eval(compile(step["src"], "<test>", "eval"), g)
            right = eval(compile(step["right"], "<test>", "eval"), g)
            if not _typed_equal(left, right):
                raise AssertionError
def _serve():
    # relay mode, the program's side: answer each call the judge forwards with the entry point's value
    g = {"__name__": "__main__"}
    exec(compile(_job["program"], "<program>", "exec"), g)
    fn = eval(compile(_job["entry"], "<test>", "eval"), g)
    _out({"ready": 1})
    for line in _control:
        req = json.loads(line)
        try:
            value = fn(*_dec(req["a"]), **_dec(req["k"]))
        except BaseException as exc:
            _out({"r": str(type(exc).__name__)[:100]})
            continue
        _send(value)
    _exit(0)

def _judge():
    # relay mode, the test's side (no model code here): the test calls a stand-in that asks the judge for each
    # value of the program's entry point
    if not json.loads(_control.readline() or b"{}").get("ready"):  # the program is loaded, or the run is over
        raise RuntimeError("the program did not load")
    g = {"__name__": "__main__"}
    exec(compile(_job["program"], "<prompt>", "exec"), g)
    exec(compile(_job["test"], "<test>", "exec"), g)
    calls = [0]
    def candidate(*args, **kwargs):
        calls[0] += 1
        n = calls[0]
        _out({"call": {"n": n, "a": _enc(list(args)), "k": _enc(dict(kwargs))}})
        while True:  # answers to calls given up on (a time limit) come late: skipped
            line = _control.readline()
            if not line:
                raise RuntimeError("the program's call did not return")
            reply = json.loads(line)
            if reply.get("n") == n:
                break
        if "v" in reply:
            return _dec(reply["v"])
        if "r" in reply:
            cls = getattr(builtins, reply["r"], None)
            if isinstance(cls, type) and issubclass(cls, Exception):
                raise cls()
        raise RuntimeError("the program's call did not return")
    g[_job["check"]](candidate)

sys.stdout = sys.stderr = _Null()
try:
    {"serve": _serve, "judge": _judge}.get(_job.get("mode"), _run)()
    _outcome = {"done": 1}
except AssertionError:
    _outcome = {"x": "assert"}
except BaseException:
    _outcome = {"x": "error"}
try:
    _out(_outcome)
except BaseException:
    pass
_exit(0)
'''

__all__ = ["DISARM", "HARNESS"]
