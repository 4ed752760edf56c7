"""Attack probes against safe mode: no secret or outside file reaches a loaded config, bombs are refused."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from promptweave.config import load_config
from promptweave.errors import BudgetError, ConfigError, PromptweaveError, SandboxError
from promptweave.lve.safe_lambda import SafeLambda

SECRET = "hunter2-do-not-leak"


@pytest.fixture(autouse=True)
def _secret(monkeypatch):
    monkeypatch.setenv("PW_PROBE_SECRET", SECRET)
    monkeypatch.setenv("PW_PROBE_TOKEN", SECRET)


def _load(tmp_path: Path, source: str, name: str = "probe.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(source))
    return load_config(p)


EXFILTRATION = {
    "str.format walks to os.environ": "import os\nx = '{0.__init__.__globals__[sys].modules[os].environ}'.format(os)",
    "format via len": "x = '{0.__self__}'.format(len)",
    "format via imported class": "from opencompass.x import A\nx = '{0.__class__.__init__.__globals__}'.format(A)",
    "format_map": "x = '{a.__class__}'.format_map(dict(a=1))",
    "format spec field": "x = '{0:{1.__class__}}'.format(1, 2)",
    "f-string attribute": "x = f'{len.__self__}'",
    "f-string format spec": "x = f'{1:{len.__name__}}'",
    "getattr": "x = getattr(len, '__self__')",
    "len.__self__": "x = len.__self__",
    "class ref attribute": "from opencompass.x import A\nx = A.__init__",
    "module attribute": "import os\nx = os.system",
    "os.environ by computed name": "import os\nx = os.environ.get('PW_PROBE_' + 'SECRET')",
    "os.getenv by computed name": "import os\nn = 'PW_PROBE_SECRET'\nx = os.getenv(n)",
    "credential-looking env var": "import os\nx = os.environ.get('PW_PROBE_TOKEN')",
    "os.environ item": "import os\nx = os.environ['PW_PROBE_TOKEN']",
    "environ keys": "from os import environ\nx = environ.keys()",
    "dunder builtins": "x = __builtins__",
    "subclasses walk": "x = ().__class__.__bases__[0].__subclasses__()",
    "function globals": "def f():\n    pass\nx = f.__globals__",
    "generator frame": "g = (i for i in [1])\nx = g.gi_frame",
    "exception traceback": "try:\n    {}['a']\nexcept KeyError as e:\n    x = e.__traceback__",
    "eval of code": "x = eval('__import__(\"os\").environ')",
    "import sys": "import sys\nx = sys.modules",
    "from os import system": "from os import system",
    "open outside the root": "x = open('/etc/hostname').read()",
    "exists outside the root": "import os\nx = os.path.exists('/etc/hostname')",
    "dot-folder inside the root": "import os\nx = open(os.path.join(os.path.dirname(__file__), '.env')).read()",
    "proc via the root": "x = open('/proc/self/environ').read()",
    "class definition": "class A:\n    pass",
    "percent with an object": "import os\nx = '%s' % os.environ",
}


@pytest.mark.parametrize("source", EXFILTRATION.values(), ids=EXFILTRATION.keys())
def test_exfiltration_is_refused_with_a_typed_error(tmp_path, source):
    with pytest.raises(PromptweaveError) as e:
        _load(tmp_path, source + "\ndatasets = [dict(abbr=str(x))]\n")
    assert isinstance(e.value, (SandboxError, ConfigError))
    assert "probe.py:" in str(e.value)
    assert SECRET not in str(e.value)


def test_refusals_say_whether_trust_config_would_run_it(tmp_path):
    with pytest.raises(SandboxError, match=r"probe.py:1: .*--trust-config would run it as Python"):
        _load(tmp_path, "x = getattr(len, 'y')\n")


def test_plain_env_var_read_is_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("PW_PROBE_MODEL", "tiny")
    cfg = _load(tmp_path, """
        import os
        m = os.environ.get('PW_PROBE_MODEL', 'x')
        n = os.getenv('PW_PROBE_UNSET_VAR', 'fallback')
        models = [dict(abbr=m + '-' + n)]
    """)
    assert cfg.models[0]["abbr"] == "tiny-fallback"
    assert cfg.env_reads == {"PW_PROBE_MODEL": True, "PW_PROBE_UNSET_VAR": False}


def test_format_on_plain_data_still_works(tmp_path):
    cfg = _load(tmp_path, """
        x = '{0}-{k[a]}-{1:>3}'.format('p', 7, k={'a': 'b'}) + '%s/%d' % ('q', 2) + f'{3.14159:.2f}'
        datasets = [dict(abbr=x)]
    """)
    assert cfg.datasets[0]["abbr"] == "p-b-  7q/23.14"


# --- paths --------------------------------------------------------------------------------------


def test_relative_import_cannot_climb_out_of_the_root(tmp_path):
    (tmp_path / "outside.py").write_text(f"leak = [dict(abbr='{SECRET}')]\n")
    (tmp_path / "cfg").mkdir()
    with pytest.raises(SandboxError, match="climbs above the config's root"):
        _load(tmp_path / "cfg", """
            from mmengine.config import read_base
            with read_base():
                from ....outside import leak
            datasets = leak
        """)


def test_symlink_escaping_the_root_is_refused(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "base.py").write_text(f"leak = [dict(abbr='{SECRET}')]\n")
    cfg_dir = tmp_path / "cfg"
    cfg_dir.mkdir()
    (cfg_dir / "base.py").symlink_to(tmp_path / "secret" / "base.py")
    with pytest.raises(SandboxError, match="outside the config's root"):
        _load(cfg_dir, """
            from mmengine.config import read_base
            with read_base():
                from .base import leak
            datasets = leak
        """)
    # the top-level config itself may not be a symlink out of its folder either
    (cfg_dir / "top.py").symlink_to(tmp_path / "secret" / "base.py")
    with pytest.raises(SandboxError, match="outside the config's root"):
        load_config(cfg_dir / "top.py")


def test_absolute_imports_never_find_modules_in_the_working_directory(tmp_path):
    fake = tmp_path / "opencompass" / "configs" / "datasets"
    fake.mkdir(parents=True)
    for d in (tmp_path / "opencompass", tmp_path / "opencompass" / "configs", fake):
        (d / "__init__.py").write_text("")
    (fake / "pw_probe_fake.py").write_text(f"pw_probe_datasets = [dict(abbr='{SECRET}')]\n")
    cfg = tmp_path / "eval_probe.py"
    cfg.write_text(textwrap.dedent("""
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.datasets.pw_probe_fake import pw_probe_datasets
        datasets = pw_probe_datasets
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-m", "promptweave", "lint", str(cfg)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert SECRET not in out.stdout + out.stderr
    assert out.returncode != 0
    assert "Traceback" not in out.stderr


# --- bombs --------------------------------------------------------------------------------------

BOMBS = {
    "power tower": "x = 9**9**9",
    "string repetition": "x = 'a' * 10**10",
    "list repetition": "x = [0] * 10**10",
    "sum of a huge range": "x = sum(range(10**13))",
    "shift": "x = 1 << 10**9",
    "comprehension filling memory": "x = ['a' * 10**7 for i in range(10**5)]",
    "nested comprehension": "x = [i for i in range(10**5) for j in range(10**5)]",
    "endless loop": "i = 0\nwhile True:\n    i += 1",
    "unbounded recursion": "def f(n):\n    return f(n + 1)\nx = f(0)",
    "100k-term expression": "x = " + "+".join(["1"] * 100_000),
    "str.replace": "x = ('x' * 1000).replace('', 'y' * 100000)",
    "str.join": "x = ('a' * 10**6).join(['b'] * 10**5)",
    "format width": "x = '{:>10000000000}'.format(1)",
    "f-string width": "x = f'{1:>10000000000}'",
    "percent width": "x = '%10000000000s' % 'a'",
    "itertools.product": "import itertools\nx = list(itertools.product(range(1000), range(1000), range(1000)))",
    "doubling": "x = 'a'\nfor i in range(60):\n    x = x + x",
    "deepcopy of a shared structure": "import copy\na = [[1] * 1000] * 100\nx = copy.deepcopy([a] * 100)",
}


@pytest.mark.parametrize("source", BOMBS.values(), ids=BOMBS.keys())
def test_bombs_are_refused_with_a_budget_error(tmp_path, source):
    with pytest.raises(BudgetError) as e:
        _load(tmp_path, source + "\ndatasets = []\n")
    assert e.value.code == "PW150"
    assert "probe.py" in str(e.value) and "budget" in str(e.value)


def test_deep_json_and_yaml_give_a_budget_error(tmp_path):
    j = tmp_path / "deep.json"
    j.write_text('{"datasets": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(BudgetError):
        load_config(j)
    y = tmp_path / "deep.yaml"
    y.write_text("datasets: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(BudgetError):
        load_config(y)


def test_yaml_alias_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines.append("datasets: [{abbr: x, rows: *a11}]")
    y = tmp_path / "bomb.yaml"
    y.write_text("\n".join(lines) + "\n")
    with pytest.raises(BudgetError):
        load_config(y)


# --- checker lambdas share the rules and budgets ------------------------------------------------


@pytest.mark.parametrize("source", [
    "lambda r: [j for i in range(10**5) for j in range(10**5)]",
    "lambda r: sum(range(10**13))",
    "lambda r: 9**9**9",
    "lambda r: 'a' * 10**10",
])
def test_checker_lambda_bombs_are_budget_errors(source):
    with pytest.raises(BudgetError):
        SafeLambda.compile(source)("r")


def test_checker_regex_catastrophic_backtracking_is_a_budget_error():
    # (a|aa)+$ backtracks exponentially on a failing input: the timeout turns it into a typed error
    fn = SafeLambda.compile(r"lambda r: re.search(r'(a|aa)+$', r) is not None")
    with pytest.raises(BudgetError, match="regex_seconds"):
        fn("a" * 40 + "!")


def test_regex_checker_runs_with_a_timeout():
    from promptweave.lve.checkers import RegexChecker
    from promptweave.lve.model import Message, Role

    checker = RegexChecker(r"(a|aa)+$", match_safe=False)
    with pytest.raises(BudgetError, match="regex_seconds"):
        checker.is_safe([Message(content="a" * 40 + "!", role=Role.assistant)], {})


@pytest.mark.parametrize("source", [
    "lambda r: '{0.__class__}'.format(r)",
    "lambda r: '{0.upper}'.format(r)",
    "lambda r: '%s' % re",
    "lambda r: len.__self__",
])
def test_checker_lambda_exfiltration_is_refused(source):
    with pytest.raises(SandboxError):
        SafeLambda.compile(source)("x")
