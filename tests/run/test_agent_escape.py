"""The CIBench agent's Python session under real bubblewrap: the model's cells cannot start processes (a fork bomb
starts none; threads still work), stop the run, reach outside files, the network or the run's environment. And the
run puts agent tasks in that sandbox (``--allow-code-exec``), as it does code evaluators."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from openai_stub import StubServer, scripted_agent
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.evaluate.python_session import PythonSession, SessionLimits
from tests.codebox import CODE_SANDBOX, needs_bwrap

LIMITS = SessionLimits(cell_timeout_s=30)


def text(cell) -> str:
    return "".join(t for _, t in cell.outputs)


@needs_bwrap
def test_a_fork_bomb_starts_no_process_and_threads_still_work() -> None:
    with PythonSession(LIMITS, sandbox="bwrap") as s:
        bomb = s.run("import ctypes\nlibc = ctypes.CDLL(None)\nok = 0\nfor _ in range(500):\n"
                     "    pid = libc.fork()\n    if pid == 0:\n        libc._exit(0)\n    ok += pid > 0\nprint('forked', ok)")
        spawn = s.run("import importlib, subprocess\nimportlib.reload(subprocess)\nsubprocess.run(['/bin/true'])")
        threads = s.run("import threading\nout = []\nts = [threading.Thread(target=out.append, args=(i,)) "
                        "for i in range(8)]\nfor t in ts: t.start()\nfor t in ts: t.join()\nprint(sorted(out))")
    assert bomb.ok and text(bomb) == "forked 0\n"
    assert not spawn.ok and "Operation not permitted" in text(spawn)
    assert threads.ok and text(threads) == "[0, 1, 2, 3, 4, 5, 6, 7]\n"


@needs_bwrap
def test_the_code_is_alone_in_its_pid_namespace_and_cannot_undo_dying_with_the_run() -> None:
    with PythonSession(LIMITS, sandbox="bwrap") as s:
        alone = s.run("import os\nprint(sorted(p for p in os.listdir('/proc') if p.isdigit()), os.getpid())")
        # PR_SET_PDEATHSIG (1) to 0 would let it outlive a run that is killed
        deathsig = s.run("import ctypes\nprint(ctypes.CDLL(None).prctl(1, 0, 0, 0, 0))")
        userns = s.run("import ctypes\nprint(ctypes.CDLL(None).unshare(0x10000000))")  # CLONE_NEWUSER
    assert alone.ok and text(alone) == "['1'] 1\n"  # no unguarded bubblewrap init beside it (/proc/1/mem)
    assert deathsig.ok and text(deathsig) == "-1\n"
    assert userns.ok and text(userns) == "-1\n"


@needs_bwrap
def test_nothing_but_the_work_dir_and_tmp_is_writable() -> None:
    # as root the sandbox user maps to root: root-owned files like /proc/sys/* must still not be writable (the value
    # written back is the current one, so a hole would change nothing here)
    with PythonSession(LIMITS, sandbox="bwrap") as s:
        cells = {p: s.run(f"v = open({p!r}).read() if {p!r}.startswith('/proc') else 'x'\n"
                          f"with open({p!r}, 'w') as fh:\n    fh.write(v)")
                 for p in ("/proc/sys/kernel/randomize_va_space", "/proc/sys/vm/overcommit_memory",
                           "/proc/pressure/io", "/x", "/dev/shm/x", "/etc/pw-probe", "/sandbox/x", "/tmp/x")}
    assert {p: c.ok for p, c in cells.items()} == {
        "/proc/sys/kernel/randomize_va_space": False, "/proc/sys/vm/overcommit_memory": False,
        "/proc/pressure/io": False, "/x": False, "/dev/shm/x": False, "/etc/pw-probe": False,
        "/sandbox/x": True, "/tmp/x": True}


@needs_bwrap
def test_killing_the_parent_leaves_the_run_and_the_session_alive() -> None:
    with PythonSession(LIMITS, sandbox="bwrap") as s:
        s.run("kept = 41")
        s.run("import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(os.getppid()), 9)")
        s.run("import ctypes, os\nctypes.CDLL(None).kill(os.getppid(), 9)\nctypes.CDLL(None).kill(-1, 9)")
        after = s.run("kept + 1")
    assert after.ok and not after.restarted and after.outputs == (("execute_result", "42"),)


@needs_bwrap
def test_outside_files_cannot_be_read_or_changed(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("pw-session-secret")
    p = str(secret)
    with PythonSession(LIMITS, sandbox="bwrap") as s:
        cells = [s.run(f"print(open({p!r}).read())"), s.run(f"import os\nos.replace({p!r}, {p!r} + '.x')"),
                 s.run(f"import ctypes\nprint(ctypes.CDLL(None).unlink({p!r}.encode()))"),
                 s.run(f"open({p!r}, 'w').write('gone')"), s.run("open('/usr/pw-probe', 'w')"),
                 s.run("open('mine.txt', 'w').write('ok')\nprint(open('mine.txt').read())")]
    assert [c.ok for c in cells] == [False, False, True, False, False, True]
    assert text(cells[2]) == "-1\n" and text(cells[5]) == "ok\n"
    assert secret.read_text() == "pw-session-secret" and not Path(p + ".x").exists()
    assert not any("pw-session-secret" in text(c) for c in cells)


@needs_bwrap
def test_no_connection_and_none_of_the_runs_environment() -> None:
    own = set(Path("/proc/self/environ").read_bytes().decode("latin-1").split("\0")) - {""}
    with socket.socket() as srv, PythonSession(LIMITS, sandbox="bwrap") as s:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        net = s.run(f"import socket\nsocket.create_connection(('127.0.0.1', {srv.getsockname()[1]}), timeout=3)")
        env = s.run("import glob, os\nprint(dict(os.environ))\nfor p in glob.glob('/proc/*/environ') + "
                    "[f'/proc/{os.getppid()}/environ']:\n    try:\n        print(open(p, 'rb').read())\n"
                    "    except OSError as e:\n        print(p, e)")
        srv.setblocking(False)
        with pytest.raises(BlockingIOError):
            srv.accept()
    assert not net.ok
    # the session's own few variables aside, nothing of this process's environment is visible
    session_env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/sandbox", "PWD=/sandbox"}
    leaked = [e for e in own - session_env if len(e) > 6 and e in text(env)]
    assert env.ok and leaked == []


def test_figures_come_back_as_png_files_in_the_image_folder(tmp_path) -> None:
    # a stand-in for matplotlib.pyplot (not installed here), named as such: two open figures, one not a PNG
    fake = ("import sys, types, io\nplt = types.ModuleType('matplotlib.pyplot')\n"
            "class Fig:\n    def __init__(self, data): self.data = data\n"
            "    def savefig(self, buf, format): buf.write(self.data)\n"
            "figs = {1: Fig(b'\\x89PNG\\r\\n\\x1a\\n' + b'x' * 10), 2: Fig(b'not a png')}\n"
            "plt.get_fignums = lambda: list(figs)\nplt.figure = lambda n: figs[n]\nplt.close = lambda *a: figs.clear()\n"
            "sys.modules['matplotlib.pyplot'] = plt")
    with PythonSession(LIMITS, image_dir=tmp_path / "img", sandbox=CODE_SANDBOX) as s:
        got = s.run(fake)
        again = s.run("figs[3] = Fig(b'\\x89PNG\\r\\n\\x1a\\n2')")
    assert got.ok and got.images == (str(tmp_path / "img" / "fig-0001.png"),)
    assert Path(got.images[0]).read_bytes() == b"\x89PNG\r\n\x1a\n" + b"x" * 10
    assert again.images == (str(tmp_path / "img" / "fig-0002.png"),)
    assert sorted(os.listdir(tmp_path / "img")) == ["fig-0001.png", "fig-0002.png"]


CONFIG = '''
_meta = dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
             reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")])
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=4, backoff_base=0, max_retries=1, meta_template=_meta)]
cibench = dict(
    abbr="cibench_generation/pandas", type="CIBenchDataset", internet_check=False,
    path="data/cibench_dataset/cibench_generation/pandas",
    reader_cfg=dict(input_columns=["questions"], output_column="references", train_split="test",
                    test_split="test"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="""{{questions}}"""),
                   retriever=dict(type="ZeroRetriever"),
                   inferencer=dict(type="AgentInferencer", infer_mode="every")),
    eval_cfg=dict(evaluator=dict(type="CIBenchEvaluator"), pred_role="BOT"),
)
datasets = [cibench]
'''


@needs_bwrap
def test_the_run_puts_the_agents_session_in_the_sandbox(tmp_path) -> None:
    folder = tmp_path / "data" / "cibench_dataset" / "cibench_generation" / "pandas"
    folder.mkdir(parents=True)
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["Read the file.\n\nThought: gold"]},
             {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["print(1)"],
              "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}]
    (folder / "experiment_0.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                           "nbformat_minor": 5}))
    secret = tmp_path / "secret.txt"
    secret.write_text("pw-agent-secret")
    reply = f"Thought: read\nAction: IPythonInterpreter\nAction Input:```python\nprint(open({str(secret)!r}).read())\n```"
    cfg = tmp_path / "c.py"
    with StubServer(answer=scripted_agent({"Read the file.\n": [reply, "Final Answer: done"]})) as srv:
        cfg.write_text(CONFIG.format(url=srv.url))
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report",
                                       "--allow-code-exec"])
    assert res.exit_code == 0, res.output
    preds = "".join(f.read_text() for f in (tmp_path / "w").rglob("*.json*") if "predictions" in str(f))
    assert "FileNotFoundError" in preds and "pw-agent-secret" not in preds
