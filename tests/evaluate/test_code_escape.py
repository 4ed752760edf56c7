"""Model answers that try to get out of the code sandbox, run as answers through the real evaluator path and real
bubblewrap: each is scored wrong (every probe's test passes only if its escape worked), and what it aimed at
outside is untouched. Plus the plan-time refusal without bubblewrap and the loudly-named rlimits mode."""
from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.evaluate import EvalContext, os_sandbox
from promptweave.suites.code.mbpp import MBPPEvaluator
from tests.codebox import needs_bwrap

SECRET = "pw-probe-7c1f0e-secret-value"


def score(*programs: str, test: str = "assert f() == 1"):
    """Each program as a model answer (a fenced block), scored by MBPPEvaluator in the bwrap sandbox."""
    preds = [f"```python\n{p}\n```" for p in programs]
    return MBPPEvaluator().score(preds, [test] * len(preds), EvalContext(allow_code_exec=True, code_sandbox="bwrap"))


def host_processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd:
                found.append(int(pid))
    return found


@needs_bwrap
def test_a_plain_answer_still_passes() -> None:
    assert score("def f():\n    return 1").correct == [True]


@needs_bwrap
def test_reloaded_subprocess_and_ctypes_system_run_nothing() -> None:
    s = score("import importlib, subprocess\nimportlib.reload(subprocess)\n"
              "r = subprocess.run(['/bin/sh', '-c', 'exit 0'])\ndef f():\n    return 1 if r.returncode == 0 else 0",
              "import ctypes\nrc = ctypes.CDLL(None).system(b'exit 0')\ndef f():\n    return 1 if rc == 0 else 0",
              "import os\npid = os.posix_spawn('/bin/true', ['true'], {})\ndef f():\n    return 1")
    assert s.correct == [False, False, False]


@needs_bwrap
def test_no_process_outlives_its_row() -> None:
    marker = f"pw-probe-survivor-{os.getpid()}"
    s = score("import importlib, subprocess, sys\nimportlib.reload(subprocess)\n"
              f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{marker}'], "
              "start_new_session=True)\ndef f():\n    return 1",
              "import ctypes\nlibc = ctypes.CDLL(None)\npid = libc.fork()\nif pid == 0:\n    libc.setsid()\n"
              f"    libc.execv(b'/bin/sleep', (ctypes.c_char_p * 3)(b'300', b'{marker}', None))\n"
              "def f():\n    return 1 if pid > 0 else 0")
    assert s.correct == [False, False]
    assert host_processes_with(marker) == []


@needs_bwrap
def test_the_sandbox_and_everything_it_started_die_with_it() -> None:
    # processes allowed here on purpose (the guard is off): what ends them is the PID namespace going away
    marker = f"pw-probe-teardown-{os.getpid()}"
    code = ("import subprocess, sys\n"
            f"p = subprocess.Popen(['/bin/sleep', '300', '{marker}'], start_new_session=True)\n"
            "print(p.pid, flush=True)\nimport time\ntime.sleep(300)\n")
    box = os_sandbox.Sandboxed.start([sys.executable, "-I", "-S", "-c", code], "bwrap",
                                     os_sandbox.Jail(processes=True), {"PATH": "/usr/bin:/bin"})
    assert box.proc.stdout is not None
    assert box.proc.stdout.readline().strip().isdigit()  # the child runs (inside, under the sandbox's own pids)
    assert host_processes_with(marker) != []
    box.kill()
    assert host_processes_with(marker) == []


@needs_bwrap
def test_files_outside_cannot_be_read_moved_removed_or_written(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    secrets = [tmp_path / "secret.txt", home / ".netrc", Path.cwd() / f"pw-probe-{os.getpid()}.txt"]
    try:
        for f in secrets:
            f.write_text(SECRET)
        paths = [str(f) for f in secrets]
        s = score(f"data = ''\nfor p in {paths!r}:\n    try:\n        data += open(p).read()\n"
                  "    except OSError:\n        pass\ndef f():\n    return 1 if 'secret-value' in data else 0",
                  f"import os\nos.replace({paths[0]!r}, {paths[0]!r} + '.moved')\ndef f():\n    return 1",
                  f"import ctypes\nrc = ctypes.CDLL(None).unlink({paths[1]!r}.encode())\n"
                  "def f():\n    return 1 if rc == 0 else 0",
                  f"with open({paths[2]!r}, 'w') as fh:\n    fh.write('overwritten')\ndef f():\n    return 1",
                  f"import os\nn = len(os.listdir({str(tmp_path)!r}))\ndef f():\n    return 1")
        # a checkout under /tmp: the sandbox's /tmp is its own tmpfs, so that write either lands there (and is
        # dropped: the interpreter's folder inside the checkout is bound again, so the checkout's folder exists) or
        # fails (the interpreter lives elsewhere); what must hold everywhere is the host file's content, below
        private = str(Path.cwd()).startswith("/tmp/")
        assert s.correct[:3] + s.correct[4:] == [False] * 4
        if not private:
            assert s.correct[3] is False
        assert [f.read_text() for f in secrets] == [SECRET] * 3
        assert not (tmp_path / "secret.txt.moved").exists()
        assert SECRET not in json.dumps(s.details)
    finally:
        secrets[2].unlink(missing_ok=True)


@needs_bwrap
def test_no_connection_reaches_a_loopback_listener() -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        s = score(f"import socket\nc = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                  "c.sendall(b'escaped')\ndef f():\n    return 1")
        assert s.correct == [False]
        srv.setblocking(False)  # any connection made would be waiting in the backlog by now
        with pytest.raises(BlockingIOError):
            srv.accept()


ENV_THIEF = ("import glob, os\nseen = repr(dict(os.environ))\n"
             "for p in glob.glob('/proc/*/environ') + [f'/proc/{os.getppid()}/environ']:\n"
             "    try:\n        seen += open(p, 'rb').read().decode('latin-1')\n    except OSError:\n        pass\n"
             "def add(a, b):\n    return a + b if 'PW_PROBE_TOKEN' in seen else None\n")


@needs_bwrap
def test_the_parents_environment_is_not_visible(stub_server, tmp_path) -> None:
    # a real `promptweave run` process started with a secret in its environment, as a user's API key would be
    import subprocess

    cfg = _mbpp_run(tmp_path, stub_server, {"thief": f"```python\n{ENV_THIEF}```"})
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PW_PROBE_TOKEN": SECRET, "PYTHONPATH": str(src)}
    proc = subprocess.run([sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(tmp_path / "w"),
                           "--no-progress", "--allow-code-exec"], env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads((tmp_path / "w" / "results" / "api" / "mbpp.json").read_text())
    assert result["metrics"]["wrong_answer"] == 1.0  # add() answers None: the name was seen nowhere
    assert SECRET.encode() not in proc.stdout + proc.stderr
    for f in (tmp_path / "w").rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


MBPP_CONFIG = '''
mbpp = dict(
    abbr="mbpp", path="mbpp.jsonl",
    reader_cfg=dict(input_columns=["text"], output_column="test_list"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{{text}}")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=64)),
    eval_cfg=dict(evaluator=dict(type="MBPPEvaluator")),
)
datasets = [mbpp]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=2, backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
'''

KILLERS = {
    "pidfd": "import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(os.getppid()), 9)\n",
    "ctypes": "import ctypes, os\nctypes.CDLL(None).kill(os.getppid(), 9)\n",
    "everyone": "import ctypes\nctypes.CDLL(None).kill(-1, 9)\n",
}


def _mbpp_run(tmp_path: Path, stub_server, answers: dict[str, str]) -> Path:
    rows = [{"text": k, "test_list": "assert add(1, 2) == 3"} for k in answers]
    (tmp_path / "mbpp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "c.py"
    cfg.write_text(MBPP_CONFIG.format(url=stub_server.url))
    stub_server.answer = lambda body: answers[body["messages"][-1]["content"]]
    return cfg


@needs_bwrap
def test_killing_the_parent_fails_the_row_and_the_run_and_rerun_finish(stub_server, tmp_path) -> None:
    # in rlimits mode these killed the run (here: this very test process); inside the sandbox the "parent" is the
    # sandbox's own PID 1, which ignores them. The killers carry no solution, so they score wrong
    answers = {"good": "```python\ndef add(a, b):\n    return a + b\n```",
               **{k: f"```python\n{v}```" for k, v in KILLERS.items()}}
    cfg = _mbpp_run(tmp_path, stub_server, answers)
    for _ in range(2):  # the rerun executes the same cached answers
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report",
                                       "--allow-code-exec"])
        assert res.exit_code == 0, res.output
        result = json.loads((tmp_path / "w" / "results" / "api" / "mbpp.json").read_text())
        assert result["metrics"]["pass"] == 1.0 and result["metrics"]["failed"] == 3.0


def test_without_bubblewrap_the_plan_is_refused_and_rlimits_is_loud(stub_server, tmp_path, monkeypatch) -> None:
    cfg = _mbpp_run(tmp_path, stub_server, {"add": "```python\ndef add(a, b):\n    return a + b\n```"})
    empty = tmp_path / "no-bwrap-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine where bwrap is not installed
    base = ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report", "--allow-code-exec"]
    for extra in ([], ["--dry-run"]):  # the dry run gives the run's verdict
        res = CliRunner().invoke(app, base + extra)
        out = " ".join(res.output.split())
        assert res.exit_code != 0 and "PW631" in out and "apt-get install bubblewrap" in out, res.output
        assert "--code-sandbox=rlimits" in out
    assert stub_server.total_received == 0
    res = CliRunner().invoke(app, base + ["--code-sandbox", "rlimits"])
    out = " ".join(res.output.split())
    assert res.exit_code == 0, res.output
    assert "WITHOUT OS isolation" in out and "network" in out and "environment" in out
    result = json.loads((tmp_path / "w" / "results" / "api" / "mbpp.json").read_text())
    assert result["metrics"]["pass"] == 1.0
    res = CliRunner().invoke(app, base + ["--code-sandbox", "docker"])
    assert res.exit_code != 0 and "--code-sandbox" in res.output
