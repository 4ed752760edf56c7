"""Configs as people write them: the forms found in the reference trees, evaluated in safe mode."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from promptweave.config import load_config
from promptweave.errors import BudgetError, ConfigError, SandboxError
from promptweave.sandbox.imports import reference_roots


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_functions_closures_defaults_and_recursion(tmp_path):
    cfg = load_config(_write(tmp_path / "c.py", """
        def make_counter(start=10):
            count = [start]
            def step(by=1):
                count[0] += by
                return count[0]
            return step

        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)

        def generate_linear_space(start, end, num):
            if num == 1:
                return [start]
            elif num < 1:
                raise ValueError('num must be at least 1.')
            step = (end - start) / (num - 1)
            return [start + step * i for i in range(num)]

        step = make_counter()
        datasets = [dict(abbr=f'd{step()}-{step(5)}', n=fact(6), depths=generate_linear_space(0, 100, 3))]
    """))
    assert cfg.datasets == [{"abbr": "d11-16", "n": 720, "depths": [0.0, 50.0, 100.0]}]


def test_statements_configs_use(tmp_path, monkeypatch):
    monkeypatch.setenv("PW_TEST_DATA_ROOT", "/data/x")
    (tmp_path / "lib_prompt").mkdir()
    (tmp_path / "lib_prompt" / "task.txt").write_text("Q: hint\n")
    cfg = load_config(_write(tmp_path / "c.py", """
        import os
        import itertools
        from os import environ
        from copy import deepcopy
        root = os.environ.get('PW_TEST_DATA_ROOT', 'data')
        backup = environ.get('PW_TEST_UNSET', 'none')
        here = os.path.basename(os.path.dirname(__file__))
        with open(os.path.join(os.path.dirname(__file__), 'lib_prompt', 'task.txt'), 'r') as f:
            hint = f.read()
        letters = [chr(ord('A') + i) for i in range(3)]
        pairs = [f'{a}{b}' for a, b in itertools.product(letters[:2], [1, 2])]
        assert len(pairs) == 4, 'product'
        tmp = dict(a=1)
        del tmp['a']
        i = 0
        while i < 3:
            i += 1
        try:
            missing = {}['k']
        except KeyError:
            missing = 'caught'
        base = dict(abbr='b', path=os.path.join(root, 'x.jsonl'))
        copy_ = deepcopy(base)
        copy_['abbr'] = 'c'
        datasets = [base, copy_, dict(abbr=hint.strip(), letters=letters, pairs=pairs, n=i, m=missing,
                                      here=here, name=__name__, backup=backup)]
    """))
    assert cfg.datasets[0] == {"abbr": "b", "path": "/data/x/x.jsonl"}
    assert cfg.datasets[1]["abbr"] == "c"
    third = cfg.datasets[2]
    assert third["abbr"] == "Q: hint" and third["letters"] == ["A", "B", "C"]
    assert third["pairs"] == ["A1", "A2", "B1", "B2"] and third["n"] == 3 and third["m"] == "caught"
    assert third["here"] == tmp_path.name and third["backup"] == "none"
    assert cfg.env_reads == {"PW_TEST_DATA_ROOT": True, "PW_TEST_UNSET": False}


def test_augmented_list_assignment_extends_in_place(tmp_path):
    cfg = load_config(_write(tmp_path / "c.py", """
        a = [dict(abbr='x')]
        b = a
        a += [dict(abbr='y')]
        datasets = b
    """))
    assert [d["abbr"] for d in cfg.datasets] == ["x", "y"]


def test_a_failed_assert_names_file_and_line(tmp_path):
    with pytest.raises(ConfigError, match=r"c.py:2: the config raised AssertionError: too few"):
        load_config(_write(tmp_path / "c.py", "x = 1\nassert x > 2, 'too few'\ndatasets = []\n"))


def test_eval_of_a_name_picks_an_imported_class(tmp_path):
    cfg = load_config(_write(tmp_path / "c.py", """
        from opencompass.datasets import MedBenchEvaluator_Cloze
        name = 'Cloze'
        datasets = [dict(abbr='m', eval_cfg=dict(evaluator=dict(type=eval('MedBenchEvaluator_' + name))))]
    """))
    assert cfg.datasets[0]["eval_cfg"]["evaluator"]["type"] == "MedBenchEvaluator_Cloze"


def test_configdict_style_attribute_and_deepcopy(tmp_path):
    _write(tmp_path / "base.py", "base_datasets = [dict(abbr='r', max_seq_length=4)]\n")
    cfg = load_config(_write(tmp_path / "c.py", """
        from mmengine.config import read_base
        with read_base():
            from .base import base_datasets
        datasets = []
        for dataset in base_datasets:
            tmp = dataset.deepcopy()
            tmp['abbr'] = tmp['abbr'] + '_' + str(dataset.max_seq_length)
            datasets.append(tmp)
    """))
    assert cfg.datasets == [{"abbr": "r_4", "max_seq_length": 4}]


def test_class_definitions_are_refused_with_the_trust_hint(tmp_path):
    with pytest.raises(SandboxError, match=r"c.py:1: class definitions .*--trust-config would run it"):
        load_config(_write(tmp_path / "c.py", "class S:\n    pass\ndatasets = []\n"))


def test_runaway_function_is_a_budget_error(tmp_path):
    with pytest.raises(BudgetError, match="c.py:2"):
        load_config(_write(tmp_path / "c.py", "def f(n):\n    return f(n + 1)\ndatasets = [f(0)]\n"))


OC = reference_roots().get("opencompass.configs")


@pytest.mark.skipif(OC is None, reason="opencompass's config tree is not installed")
@pytest.mark.parametrize("trust", [False, True], ids=["safe", "trusted"])
def test_read_base_star_import_of_opencompass_datasets(tmp_path, trust):
    p = _write(tmp_path / "eval_gsm8k.py", """
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.datasets.gsm8k.gsm8k_gen_1d7fe4 import *
        datasets = sum([v for k, v in locals().items() if k.endswith('_datasets')], [])
        models = [dict(abbr='m', type='OpenAI', path='x')]
    """)
    cfg = load_config(p, trust=trust)
    assert [d["abbr"] for d in cfg.datasets] == ["gsm8k"]
    assert cfg.datasets[0]["infer_cfg"]["inferencer"]["type"] == "GenInferencer"


@pytest.mark.parametrize("trust", [False, True], ids=["safe", "trusted"])
def test_relative_read_base_imports_load_in_both_modes(tmp_path, trust):
    _write(tmp_path / "datasets" / "mine" / "mine_gen.py", """
        from opencompass.openicl.icl_prompt_template import PromptTemplate
        mine_datasets = [dict(abbr='mine', infer_cfg=dict(prompt_template=dict(type=PromptTemplate)))]
    """)
    _write(tmp_path / "datasets" / "mine" / "mine_all.py", """
        from mmengine.config import read_base
        with read_base():
            from .mine_gen import mine_datasets
        all_datasets = [*mine_datasets]
    """)
    p = _write(tmp_path / "eval.py", """
        from mmengine.config import read_base
        with read_base():
            from .datasets.mine.mine_all import all_datasets
        datasets = all_datasets
    """)
    cfg = load_config(p, trust=trust)
    assert cfg.datasets[0]["infer_cfg"]["prompt_template"]["type"] == "PromptTemplate"


def test_trusted_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(ConfigError, match=r"t.py:3: running the config \(--trust-config\) raised TypeError"):
        load_config(_write(tmp_path / "t.py", """
            from opencompass.models import A, B
            x = A + B
            datasets = []
        """), trust=True)
