"""Model code cannot change its own verdict: the judge compares the values it is sent with expected values that
never enter the sandbox, and no helper of the judge is reachable from the program's namespace."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.evaluate import EvalContext, code_exec, os_sandbox
from promptweave.evaluate.code_exec import Job, Limits, run_job
from promptweave.evaluate.code_plan import check_function_steps, module_steps
from promptweave.evaluate.code_verdict import BadRecord, Expect, Verdict, decode
from promptweave.suites.code.humaneval import HumanEvalEvaluator
from promptweave.suites.code.lcbench import LCEvaluator
from promptweave.suites.code.mbpp import MBPPEvaluator
from tests.codebox import CODE_SANDBOX
from tests.outcome import value_or_error

FAST = Limits(timeout_s=10.0, cpu_s=5, memory_mb=256)
CTX = EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX)
WRONG_ADD = "def add(a, b):\n    return a - b\n"
TESTS = "assert add(1, 2) == 3\nassert add(2, 2) == 4"

# every way a program may try to report a pass itself and leave before the tests run
FORGERIES = {
    "done record on every fd, reloaded posix._exit": (
        "import importlib, posix\nimportlib.reload(posix)\nfor fd in range(64):\n    try:\n"
        "        posix.write(fd, b'{\"done\": 1}\\n')\n    except OSError:\n        pass\nposix._exit(0)\n"),
    "ctypes _exit after the record": (
        "import ctypes, os\nfor fd in range(64):\n    try:\n        os.write(fd, b'{\"done\": 1}\\n')\n"
        "    except OSError:\n        pass\nctypes.CDLL(None)._exit(0)\n"),
    "the old token forgery, read from the harness's frames and objects": (
        "import gc, sys, importlib, posix\nimportlib.reload(posix)\n"
        "toks = [o for o in gc.get_objects() if isinstance(o, str) and len(o) == 32]\n"
        "f = sys._getframe()\nwhile f is not None:\n"
        "    toks += [v for v in f.f_globals.values() if isinstance(v, str) and len(v) == 32]\n    f = f.f_back\n"
        "for fd in range(64):\n    for t in toks:\n        try:\n            posix.write(fd, (t + ':0\\n').encode())\n"
        "        except OSError:\n            pass\nposix._exit(0)\n"),
    "sys.exit(0) and SystemExit": "raise SystemExit(0)\n",
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_report_and_early_exit_never_pass(name: str) -> None:
    program = WRONG_ADD + FORGERIES[name]
    mbpp = MBPPEvaluator().score([program], [TESTS], CTX)
    lc = LCEvaluator().score([f"```python\n{program}```"], [{"test_list_2": TESTS, "task_id": 1}], CTX)
    rows = [{"prompt": "", "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n", "entry_point": "add"}]
    he = HumanEvalEvaluator(k=[1]).score([program], ["HumanEval/0"], EvalContext(
        rows=rows, allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert mbpp.correct == [False] and lc.correct == [False] and he.correct == [False]
    # the same forgery in a right answer does not make it fail for any other reason than its exit
    assert MBPPEvaluator().score([WRONG_ADD.replace("a - b", "a + b")], [TESTS], CTX).correct == [True]


NAMESPACE_ATTACKS = {
    "the old helper name": "__pw_type_aware_equal = lambda a, b: True\n",
    "the harness's globals patched to claim a constant": (
        "import sys\nm = sys.modules['__main__']\nfor n in ('_enc', '_send', '_typed_equal', '_out'):\n"
        "    if hasattr(m, n):\n        setattr(m, n, getattr(m, n))\n"
        "m._enc = lambda v, depth=0: {'i': hex(3)}\n"),
    "builtins patched": "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: int\n",
}


@pytest.mark.parametrize("name", sorted(NAMESPACE_ATTACKS))
def test_rebinding_helpers_does_not_pass_a_wrong_answer(name: str) -> None:
    program = WRONG_ADD + NAMESPACE_ATTACKS[name]
    s = MBPPEvaluator().score([program], [TESTS], CTX)
    assert s.correct == [False]


def test_no_helper_name_is_in_the_programs_namespace() -> None:
    # the program sees only what it defined and the test's own names (module globals of a fresh __main__)
    probe = "sorted(k for k in globals() if not k.startswith('__') or k.startswith('__pw'))"
    job = Job("def add(a, b):\n    return a + b\n", tuple(module_steps(f"assert {probe} == ['add']", typed=True)))
    assert run_job(job, FAST, CODE_SANDBOX) == "pass"


def test_a_forged_eq_fails_humaneval_too() -> None:
    rows = [{"prompt": "", "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n", "entry_point": "add"}]
    forged = "class Any:\n    def __eq__(self, o):\n        return True\ndef add(a, b):\n    return Any()\n"
    s = HumanEvalEvaluator(k=[1]).score([forged, "def add(a, b):\n    return a + b\n"], ["HumanEval/0"] * 2,
                                        EvalContext(rows=rows * 2, allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert s.correct == [False, True]


def test_the_expected_values_never_enter_the_sandbox() -> None:
    secret = "expected-value-7f3a"
    steps = module_steps(f"assert f() == {secret!r}", typed=True)
    wire = json.dumps([s.wire() for s in steps])
    assert secret not in wire
    # a program that looks for it everywhere it can reach finds nothing
    hunt = ("import gc, sys\ndef f():\n    found = any(isinstance(o, str) and 'expected-value' in o "
            "for o in gc.get_objects())\n    return 'expected-value-7f3a' if found else 'not found'\n")
    assert run_job(Job(hunt, tuple(steps)), FAST, CODE_SANDBOX) == "wrong_answer"


def test_values_cross_the_boundary_exactly() -> None:
    cases = {"10 ** 5000": 10 ** 5000, "-0.0": -0.0, "(1, [2.5, {3: frozenset({4})}], b'x', 1j)": (1, [2.5, {3: frozenset({4})}], b"x", 1j),
             "'\\ud800é'": "\ud800é", "{1: 'a', (2, 3): None}": {1: "a", (2, 3): None}, "set()": set(), "float('inf')": float("inf")}
    for src, value in cases.items():
        steps = (module_steps(f"assert ({src}) == {value!r}", typed=True) if src not in ("float('inf')", "10 ** 5000")
                 else module_steps(f"assert ({src}) == x", typed=True))
        prelude = "x = float('inf')\n" if src == "float('inf')" else "x = 10 ** 5000\n"
        assert run_job(Job(prelude, tuple(steps)), FAST, CODE_SANDBOX) == "pass", src
    # types matter under the type-aware comparison, not under HumanEval's ==
    assert run_job(Job("", tuple(module_steps("assert 1.0 + 0 == 1", typed=True))), FAST, CODE_SANDBOX) == "wrong_answer"
    plain = check_function_steps("def check(c):\n    assert c() == 1\n", "f")
    assert plain is not None
    assert run_job(Job("def f():\n    return 1.0\n", tuple(plain), plain=True), FAST, CODE_SANDBOX) == "pass"


def test_order_and_categories_match_the_reference() -> None:
    # the first failing assertion decides, whatever follows it
    tests = "assert f(1) == 1\nassert f(2) == 3\nassert f(3) == 3"
    hang = "def f(x):\n    if x == 3:\n        while True: pass\n    return x\n"
    assert run_job(Job(hang, tuple(module_steps(tests, typed=True))), FAST, CODE_SANDBOX) == "wrong_answer"
    boom = "def f(x):\n    if x == 2:\n        raise ValueError\n    return x\n"
    assert run_job(Job(boom, tuple(module_steps(tests, typed=True))), FAST, CODE_SANDBOX) == "failed"
    asserting = "def f(x):\n    assert x != 2\n    return x\n"
    assert run_job(Job(asserting, tuple(module_steps(tests, typed=True))), FAST, CODE_SANDBOX) == "wrong_answer"


# -- the judge's reading of what the sandbox sends -----------------------------------------------------------------
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
                           lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=4),
                           max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(obj=json_values)
def test_any_json_decodes_or_is_a_bad_record(obj) -> None:
    value, exc = value_or_error(decode, obj, expected=BadRecord)
    assert (value is None) != (exc is None) or (value is None and obj is None)


records = st.one_of(
    st.binary(max_size=40),
    json_values.map(lambda v: json.dumps(v).encode()),
    json_values.map(lambda v: json.dumps({"v": v}).encode()),
    st.sampled_from([b'{"done": 1}', b'{"x": "assert"}', b'{"x": "error"}', b'{"v": {"i": "0x3"}}',
                     b'{"v": {"i": "0x4"}}', b'{"v": {"o": "Any"}}', b'{"v": {"l": [' * 300 + b"]}" * 300 + b"}",
                     b'{"v": {"d": [[{"l": []}, 1]]}}', b'{"v": {"f": "nan"}}', b'{"v": {"i": "zz"}}']))


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(records, max_size=12))
def test_hostile_reports_pass_only_with_every_expected_value(lines) -> None:
    expects = [Expect(3, "eq", True), Expect(4, "eq", True)]
    v = Verdict(expects)
    seen = []
    for line in lines:
        before = v.matched
        result = v.feed(line)
        if v.matched > before:
            seen.append(decode(json.loads(line)["v"]))
        if result is not None:
            break
    assert v.result in (None, "pass", "wrong_answer", "failed")
    if v.result == "pass":
        assert seen == [3, 4] and all(type(x) is int for x in seen)


# -- the split: benchmark scoring lives in suites/, the names configs use still resolve -----------------------------
def test_reference_names_resolve_to_the_code_suites() -> None:
    from promptweave.suites.code import lcbench, mbpp

    assert EVALUATORS["HumanEvalEvaluator"] is HumanEvalEvaluator
    assert EVALUATORS["LCEvaluator"] is LCEvaluator and EVALUATORS["LCPassKEvaluator"] is lcbench.LCPassKEvaluator
    assert EVALUATORS["MBPPPassKEvaluator"] is mbpp.MBPPPassKEvaluator
    assert issubclass(EVALUATORS["MBPPEvaluator"], MBPPEvaluator)
    assert not any(n in vars(code_exec) for n in ("HumanEvalEvaluator", "MBPPEvaluator", "mbpp_answer", "PythonSession"))


# -- rlimits run as root: a throwaway user ----------------------------------------------------------------------------
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop happens only when promptweave runs as root; as "
                             "another user the rlimits mode signals that user's processes, as its warning says")


@as_root
def test_rlimits_as_root_runs_as_a_throwaway_user() -> None:
    ids = ("import os\nassert os.getuid() >= 2_000_000_000 and os.geteuid() == os.getuid()\n"
           "assert os.getgid() >= 2_000_000_000 and os.getgroups() == []\n")
    assert code_exec.run_program(ids, "", FAST, os_sandbox.RLIMITS) == "pass"
    # neither PID 1 nor the run that started it can be signalled (libc's kill: os.kill is only disarmed as a
    # courtesy), and no other process's environment can be read
    poke = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "def kill(pid):\n    return libc.kill(pid, 0), ctypes.get_errno()\n"
            "def environ(pid):\n    try:\n        open(f'/proc/{pid}/environ', 'rb').read()\n    except OSError:\n"
            "        return 'denied'\n    return 'read'\n")
    tests = (f"assert kill(1) == (-1, 1)\nassert kill({os.getpid()}) == (-1, 1)\nassert environ(1) == 'denied'\n"
             f"assert environ({os.getpid()}) == 'denied'")
    assert run_job(Job(poke, tuple(module_steps(tests, typed=True))), FAST, os_sandbox.RLIMITS) == "pass"


@as_root
def test_rlimits_kill_minus_one_leaves_other_processes_alive() -> None:
    # established first: the code really runs as another user (else the payload below is never run)
    assert code_exec.run_program("import os\nassert os.getuid() != 0 and os.geteuid() != 0\n", "", FAST,
                                 os_sandbox.RLIMITS) == "pass"
    sentinel = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"], stdin=subprocess.PIPE)
    try:
        # libc's kill itself (os.kill is only disarmed as a courtesy); -1: every process it may signal
        payload = ("import ctypes, os, signal\nsent = None\nif os.getuid() != 0 and os.geteuid() != 0:\n"
                   "    sent = (ctypes.CDLL(None, use_errno=True).kill(-1, signal.SIGKILL), ctypes.get_errno())\n"
                   + WRONG_ADD)
        # the call was made (Linux answers 0 when other processes exist, signalled or not: the sentinel tells)
        assert run_job(Job(payload, tuple(module_steps("assert sent is not None", typed=True))), FAST,
                       os_sandbox.RLIMITS) == "pass"
        assert run_job(Job(payload, tuple(module_steps(TESTS, typed=True))), FAST, os_sandbox.RLIMITS) == "wrong_answer"
        assert sentinel.poll() is None
    finally:
        sentinel.stdin.close()
        sentinel.wait()
    assert sentinel.returncode == 0  # it ended when its input closed, not by a signal


# -- assertions evaluated on the judge's side over the values sent ---------------------------------------------------
def test_tolerance_and_library_checks_cannot_be_patched_from_inside() -> None:
    rows = [{"prompt": "", "entry_point": "truncate",
             "test": "def check(candidate):\n    assert candidate(3.5) == 0.5\n"
                     "    assert abs(candidate(1.33) - 0.33) < 1e-6\n"}]
    ctx = EvalContext(rows=rows * 3, allow_code_exec=True, code_sandbox=CODE_SANDBOX)
    right = "def truncate(x):\n    return x % 1.0\n"
    patched = ("import builtins\nbuiltins.abs = lambda x: 0\ndef truncate(x):\n"
               "    return 0.5 if x == 3.5 else 7.0\n")
    s = HumanEvalEvaluator(k=[1]).score([right, patched, "def truncate(x):\n    return 7.0\n"], ["HumanEval/2"] * 3, ctx)
    assert s.correct == [True, False, False]
    tests = "import math\nassert math.isclose(area(2), 12.566, rel_tol=0.001)"
    good = "import math\ndef area(r):\n    return math.pi * r * r\n"
    forged = "import math\nmath.isclose = lambda *a, **k: True\ndef area(r):\n    return 1.0\n"
    assert MBPPEvaluator().score([good, forged], [tests] * 2, CTX).correct == [True, False]


slot_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5) |
                           st.binary(max_size=5),
                           lambda kids: st.lists(kids, max_size=3) | st.tuples(kids, kids), max_leaves=8)
EXPRESSIONS = ["abs(__slot_0 - 0.33) < 1e-06", "set(__slot_0) == set([1, 2])", "__slot_0 == __slot_1",
               "math.isclose(__slot_0, 1.0, rel_tol=0.01)", "__slot_0[0] == 1", "sorted(__slot_0) == [1, 2]",
               "len(__slot_0) == 3 and __slot_1", "__slot_0 ** __slot_1 == 4", "__slot_0 * __slot_1 == 'aa'",
               "sum(__slot_0) / len(__slot_0) < 2", "round(__slot_0, 2) == 0.5", "__slot_0 in __slot_1"]


@settings(max_examples=300, deadline=None)
@given(expr=st.sampled_from(EXPRESSIONS), a=slot_values, b=slot_values, typed=st.booleans())
def test_judging_any_values_ends_in_a_value_or_a_judge_error(expr: str, a, b, typed: bool) -> None:
    import ast

    from promptweave.evaluate.code_verdict import JudgeError, judge_eval

    _, exc = value_or_error(judge_eval, ast.parse(expr, mode="eval"), [a, b], typed, expected=JudgeError)
    assert exc is None or isinstance(exc, JudgeError)  # anything else propagates and fails the test


def test_tests_that_cannot_be_split_still_run_as_the_reference_runs_them() -> None:
    loop = "def check(candidate):\n    for i in range(5):\n        assert candidate(i, 1) == i + 1\n"
    assert check_function_steps(loop, "add") is None
    rows = [{"prompt": "", "test": loop, "entry_point": "add"}] * 2
    s = HumanEvalEvaluator(k=[1]).score(["def add(a, b):\n    return a + b\n", WRONG_ADD], ["HumanEval/53"] * 2,
                                        EvalContext(rows=rows, allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert s.correct == [True, False]
    typed = "assert type(f(1)) == int\nassert f(1) == 1"
    assert [s.kind for s in module_steps(typed, typed=True)] == ["eq", "probe"]
    got = MBPPEvaluator().score(["def f(x):\n    return x\n", "def f(x):\n    return float(x)\n"], [typed] * 2, CTX)
    assert got.correct == [True, False] and got.metrics["wrong_answer"] == 1.0


# -- checks that cannot be split: the test runs where no model code does -------------------------------------------
RANDOM_ADD = ("def check(candidate):\n    import random\n    assert candidate(0, 1) == 1\n"
              "    for i in range(50):\n        x, y = random.randint(0, 1000), random.randint(0, 1000)\n"
              "        assert candidate(x, y) == x + y\n")
ADD_PROMPT = 'def add(x: int, y: int):\n    """Add two numbers x and y"""\n'


def _humaneval(completions: list[str], test: str = RANDOM_ADD, prompt: str = ADD_PROMPT, entry: str = "add") -> list:
    rows = [{"prompt": prompt, "test": test, "entry_point": entry}] * len(completions)
    return HumanEvalEvaluator(k=[1]).score(completions, ["HumanEval/53"] * len(completions), EvalContext(
        rows=rows, allow_code_exec=True, code_sandbox=CODE_SANDBOX)).correct


def test_a_check_with_random_inputs_is_judged_without_the_program_in_its_process() -> None:
    assert check_function_steps(RANDOM_ADD, "add") is None
    forged_exit = "    " + FORGERIES["done record on every fd, reloaded posix._exit"].replace("\n", "\n    ")
    forged_values = ("    import os\n    for fd in range(64):\n        try:\n"
                     "            os.write(fd, b'{\"v\": {\"i\": \"0x1\"}}\\n{\"done\": 1}\\n')\n"
                     "        except OSError:\n            pass\n    return x - y\n")
    patched = "    import builtins\n    builtins.AssertionError = KeyError\n    return 1\n"
    got = _humaneval(["    return x + y\n", "    return x - y\n", forged_exit, forged_values, patched,
                      "    return x + y if x < 500 else x\n"])
    assert got == [True, False, False, False, False, False]


def test_a_check_may_use_the_prompts_own_helpers() -> None:
    prompt = ("def shift(s: str):\n    return ''.join(chr(ord(c) + 1) for c in s)\n\n"
              "def unshift(s: str):\n    \"\"\"undo shift\"\"\"\n")
    test = ("def check(candidate):\n    for w in ['abc', 'xyz', 'hello']:\n        assert candidate(shift(w)) == w\n")
    assert _humaneval(["    return ''.join(chr(ord(c) - 1) for c in s)\n", "    return s\n"], test, prompt,
                      "unshift") == [True, False]


@as_root
def test_without_setpriv_root_is_dropped_by_a_wrapper_or_the_run_is_refused() -> None:
    from promptweave.errors import CodeSandboxRootError

    plan = os_sandbox.unprivileged_plan(None)  # as on a machine without util-linux's setpriv
    if plan[0] == "exec":  # every user may run this interpreter: a small wrapper drops root, then execs it
        argv = [*os_sandbox.as_throwaway_user(os_sandbox.throwaway_id(), plan), sys.executable, "-I", "-S", "-c",
                "import os; print(os.getuid(), os.getgid(), len(os.getgroups()))"]
        uid, gid, groups = subprocess.run(argv, capture_output=True, env={}, check=True).stdout.split()
        assert int(uid) >= 2_000_000_000 and int(gid) == int(uid) and groups in (b"0", b"1")
    else:  # this interpreter lies where only root may enter (a pyenv under /root): refused, saying what to do
        assert plan[0] == "refuse"
        with pytest.raises(CodeSandboxRootError) as ei:
            os_sandbox.as_throwaway_user(os_sandbox.throwaway_id(), plan)
        msg = str(ei.value)
        assert ei.value.code == "PW632" and "setpriv" in msg and "bubblewrap" in msg and "ordinary user" in msg


@pytest.mark.parametrize("mode", sorted({CODE_SANDBOX, os_sandbox.RLIMITS} if os.geteuid() == 0 else {CODE_SANDBOX}))
def test_the_program_inherits_no_descriptor_but_the_harness_pipes(mode: str) -> None:
    # 0-2 are /dev/null while the program runs; 3 and 4 the harness's copies of its pipes; 5 the listing itself
    prog = "import os\nfds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
    tests = ("assert fds == [0, 1, 2, 3, 4, 5]\n"
             "assert [os.readlink(f'/proc/self/fd/{i}') for i in (0, 1, 2)] == ['/dev/null'] * 3")
    assert run_job(Job(prog, tuple(module_steps(tests, typed=True))), FAST, mode) == "pass"


hostile_output = st.lists(st.one_of(
    st.binary(max_size=60),
    st.sampled_from([b'{"done": 1}', b'{"ready": 1}', b'{"x": "assert"}', b'{"v": {"i": "0x1"}}', b'{"v": true}',
                     b'{"r": "AssertionError"}', b'{"r": "../../x"}', b'{"n": 1, "v": {"i": "0x1"}}',
                     b'{"v": {"l": [' * 400 + b"]}" * 400 + b"}", b"\n" * 50])), max_size=6)


@settings(max_examples=15, deadline=None)
@given(junk=hostile_output)
def test_whatever_the_program_writes_a_wrong_answer_fails_the_relayed_check(junk: list[bytes]) -> None:
    blob = b"\n".join(junk) + b"\n"
    program = (f"import os\nJUNK = {blob!r}\ndef add(x, y):\n    for fd in range(64):\n        try:\n"
               "            os.write(fd, JUNK)\n        except OSError:\n            pass\n    return x - y\n")
    assert _humaneval([program]) == [False]


def _harness_typed_equal():
    """The harness's own copy of the type-aware equality, taken from the script text the sandbox runs."""
    import re

    from promptweave.evaluate.code_harness import HARNESS

    src = re.search(r"^def _typed_equal\(a, b\):\n(?:(?:    .*)?\n)+", HARNESS, re.M)
    assert src is not None
    scope: dict = {}
    exec(src.group(0), scope)  # noqa: S102 - our own harness text, not model code
    return scope["_typed_equal"]


_plain = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, width=16)
                      | st.text(max_size=2),
                      lambda kids: st.lists(kids, max_size=3) | st.tuples(kids, kids)
                      | st.dictionaries(st.text(max_size=2), kids, max_size=2) | st.frozensets(st.integers(0, 3)),
                      max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(a=_plain, b=_plain)
def test_the_sandbox_and_the_judge_compare_alike(a, b) -> None:
    from promptweave.evaluate.code_verdict import type_aware_equal

    harness_equal = _harness_typed_equal()
    assert harness_equal(a, b) == type_aware_equal(a, b)
    assert harness_equal(a, a) == type_aware_equal(a, a)
