import json
import textwrap

import pytest

from promptweave.config import load_config
from promptweave.config.loader import normalise
from promptweave.errors import ConfigError, SandboxError

PY = '''
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever
names = ["a", "b"]
_rows = [dict(question=f"q-{n}", answer=n.upper()) for n in names]
datasets = []
for n in names:
    datasets.append(dict(abbr=f"ds_{n}", rows=_rows,
                         reader_cfg=dict(input_columns=["question"], output_column="answer"),
                         infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template="{question}"),
                                        retriever=dict(type=ZeroRetriever),
                                        inferencer=dict(type="GenInferencer"))))
models = [dict(abbr="m", kind="lm", meta_template=None)]
'''


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    return p


def test_py_config_is_evaluated_safely_with_loops_and_fstrings(tmp_path):
    cfg = load_config(write(tmp_path, "c.py", PY))
    assert [d["abbr"] for d in cfg.datasets] == ["ds_a", "ds_b"]
    assert cfg.datasets[0]["infer_cfg"]["prompt_template"]["type"] == "PromptTemplate"
    assert cfg.datasets[1]["rows"][1] == {"question": "q-b", "answer": "B"}


def test_read_base_imports_sibling_configs(tmp_path):
    write(tmp_path, "datasets/mine.py", "mine_datasets = [dict(abbr='x', rows=[], infer_cfg={})]\n")
    p = write(tmp_path, "main.py", """
        from mmengine.config import read_base
        with read_base():
            from .datasets.mine import mine_datasets
        datasets = [*[]] if False else mine_datasets
        models = []
    """)
    cfg = load_config(p)
    assert cfg.datasets[0]["abbr"] == "x"


@pytest.mark.parametrize("code, what", [
    ("import os\nos.system('echo hi')\ndatasets=[]", "os"),
    ("datasets = [getattr((), 'x')]", "getattr"),
    ("x = ().__class__\ndatasets=[]", "attribute"),
    ("class A:\n    pass\ndatasets=[]", "ClassDef"),
])
def test_code_in_py_configs_does_not_run(tmp_path, code, what):
    marker = tmp_path / "ran"
    code = code.replace("echo hi", f"touch {marker}")
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "bad.py", code))
    assert "bad.py:" in str(e.value)
    assert not marker.exists()


def test_trusted_mode_runs_python_with_reference_imports_shimmed(tmp_path):
    p = write(tmp_path, "t.py", """
        from opencompass.openicl.icl_prompt_template import PromptTemplate
        def make(n):
            return dict(abbr=n, rows=[], infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template='x')))
        datasets = [make('z')]
    """)
    cfg = load_config(p, trust=True)
    assert cfg.datasets[0]["infer_cfg"]["prompt_template"]["type"] == "PromptTemplate"
    assert load_config(p).datasets == cfg.datasets  # safe mode interprets the function the same way


def test_yaml_and_json_configs(tmp_path):
    y = write(tmp_path, "c.yaml", """
        datasets:
          - abbr: y
            rows: [{question: q, answer: a}]
            infer_cfg: {prompt_template: {template: "{question}"}}
        models: [{abbr: m}]
    """)
    assert load_config(y).datasets[0]["abbr"] == "y"
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"datasets": [{"abbr": "j"}], "models": []}))
    assert load_config(j).dataset_abbrs() == ["j"]


def test_syntax_errors_name_file_and_line(tmp_path):
    with pytest.raises(ConfigError, match=r"c.yaml:\d"):
        load_config(write(tmp_path, "c.yaml", "datasets:\n  - [unclosed\n"))
    with pytest.raises(ConfigError, match=r"c.py:1"):
        load_config(write(tmp_path, "c.py", "datasets = [\n"))


def test_non_list_datasets_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="datasets"):
        load_config(write(tmp_path, "c.json", '{"datasets": 3}'))


def test_normalise_turns_class_refs_into_names():
    class PromptTemplate:
        pass

    assert normalise({"type": PromptTemplate, "x": (1, 2)}) == {"type": "PromptTemplate", "x": [1, 2]}


def test_common_opencompass_idioms(tmp_path):
    write(tmp_path, "datasets/a.py", "a_datasets = [dict(abbr='a')]\n")
    write(tmp_path, "datasets/b.py", "b_datasets = [dict(abbr='b'), dict(abbr='c')]\n")
    p = write(tmp_path, "main.py", """
        import copy
        from mmengine.config import read_base
        with read_base():
            from .datasets.a import a_datasets
            from .datasets.b import b_datasets
        datasets = sum([v for k, v in locals().items() if k.endswith('_datasets')], [])
        extra = [*a_datasets, *copy.deepcopy(b_datasets)]
        models = []
    """)
    cfg = load_config(p)
    assert [d["abbr"] for d in cfg.datasets] == ["a", "b", "c"]
    assert [d["abbr"] for d in cfg.variables["extra"]] == ["a", "b", "c"]


def test_read_base_absolute_import_of_unknown_package_is_refused(tmp_path):
    p = write(tmp_path, "main.py", """
        from mmengine.config import read_base
        with read_base():
            from notapackage_pw.configs.datasets.x import x_datasets
        datasets = [*x_datasets]
    """)
    with pytest.raises(SandboxError, match="read_base\\(\\) imports 'notapackage_pw.configs.datasets.x'") as e:
        load_config(p)
    assert "main.py:4" in str(e.value) and "--trust-config" in str(e.value)


def test_read_base_never_reads_packages_from_sys_path_or_cwd(tmp_path, monkeypatch):
    # A package on sys.path (or in the working directory) is not an installed reference tree.
    write(tmp_path, "site/fakepkg_pw/__init__.py", "raise RuntimeError('package code must not run')\n")
    write(tmp_path, "site/fakepkg_pw/configs/datasets/x.py", "x_datasets = [dict(abbr='from-package')]\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(tmp_path / "site")
    p = write(tmp_path, "cfg/main.py", """
        from mmengine.config import read_base
        with read_base():
            from fakepkg_pw.configs.datasets.x import x_datasets
        datasets = [*x_datasets]
    """)
    with pytest.raises(SandboxError):
        load_config(p)
