"""Every key of every shipped OpenCompass / AISBench dataset, eval and model config is in promptweave's table of
keys (``compat/config_keys.py``), and the plan-time check acts on the table: an unknown key is a warning naming
it, a known key that would change what is sent or scored and is not implemented is refused (PW195), by ``lint``,
``run --dry-run`` and ``run`` alike."""
from __future__ import annotations

import ast
import collections
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.compat.config_keys import ACTIONS, REFUSED, TABLES
from promptweave.compat.key_check import check_dataset_keys, check_keys
from promptweave.compat.reference_tables import package_root
from promptweave.errors import UnimplementedKeyError, UnknownConfigKeyWarning

TREES = (("opencompass", "configs"), ("ais_bench", "benchmark/configs"))


def _pairs(node: ast.AST) -> list[tuple[str, ast.AST]] | None:
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
        return [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
    if isinstance(node, ast.Dict):
        return [(k.value, v) for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return None


def shipped_keys() -> dict[str, dict[str, set[str]]]:
    """scope -> key -> the files using it, over the installed reference config trees (read with ``ast``)."""
    found: dict[str, dict[str, set[str]]] = {s: collections.defaultdict(set) for s in TABLES}
    for package, sub in TREES:
        root = package_root(package)
        if root is None or not (root / sub).is_dir():
            continue
        for path in sorted((root / sub).rglob("*.py")):
            try:
                with warnings.catch_warnings():  # the configs' own invalid escapes are not this test's business
                    warnings.simplefilter("ignore")
                    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except SyntaxError:
                continue
            rel = f"{package}:{path.relative_to(root / sub)}"
            in_models = path.relative_to(root / sub).parts[0] == "models"
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name, value = node.targets[0].id, _pairs(node.value)
                    if value is not None and name.endswith("eval_cfg"):
                        for k, _ in value:
                            found["eval"][k].add(rel)
                    if value is not None and name.endswith("judge_infer_cfg"):
                        for k, v in value:
                            if k == "judge_model":
                                for kk, _ in _pairs(v) or []:
                                    found["model"][kk].add(rel)
                pairs = _pairs(node)
                if pairs is None:
                    continue
                keys = {k for k, _ in pairs}
                if keys & {"reader_cfg", "infer_cfg"} and keys & {"abbr", "type", "path"}:
                    for k, v in pairs:
                        found["dataset"][k].add(rel)
                        if k == "eval_cfg":
                            for kk, _ in _pairs(v) or []:
                                found["eval"][kk].add(rel)
                elif in_models and {"abbr", "type"} <= keys:
                    for k, _ in pairs:
                        found["model"][k].add(rel)
    return found


def test_every_entry_has_a_known_action_and_refusals_say_what_to_do():
    for scope, table in TABLES.items():
        for key, entry in table.items():
            assert entry.action in ACTIONS, (scope, key)
            if entry.action == REFUSED:
                assert entry.what, (scope, key)


def test_every_shipped_key_is_in_the_table():
    found = shipped_keys()
    if not any(found.values()):
        pytest.skip("neither opencompass nor ais_bench config trees are installed here")
    # the walk reaches the trees' bulk (a walk that found nothing would prove nothing)
    assert len(found["dataset"]["abbr"]) > 500 and len(found["model"]["abbr"]) > 200
    missing = {f"{scope}.{k}": sorted(files)[:2] for scope, keys in found.items() for k, files in keys.items()
               if k not in TABLES[scope]}
    assert not missing, f"keys outside compat/config_keys.py: {missing}"


def test_an_unknown_key_is_a_warning_naming_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_keys({"abbr": "m", "type": "OpenAISDK", "max_out_lenn": 8}, "model", file="c.py", where="models[0]")
    msgs = [str(w.message) for w in caught if issubclass(w.category, UnknownConfigKeyWarning)]
    assert len(msgs) == 1 and "models[0].max_out_lenn" in msgs[0]


@pytest.mark.parametrize(("raw", "field"), [
    ({"abbr": "d", "k": 16, "n": 48}, "datasets[0].k"),
    ({"abbr": "d", "eval_cfg": {"analyze_contamination": True}}, "datasets[0].eval_cfg.analyze_contamination"),
    ({"abbr": "d", "eval_cfg": {"model_postprocessor": {"type": "navie_model_postprocess"}}},
     "datasets[0].eval_cfg.model_postprocessor"),
])
def test_an_unimplemented_key_that_changes_scoring_is_refused(raw, field):
    with pytest.raises(UnimplementedKeyError) as err:
        check_dataset_keys(raw, file="c.py", where="datasets[0]")
    assert err.value.field == field and err.value.code == "PW195" and err.value.expected


def test_the_value_that_changes_nothing_is_accepted():
    check_dataset_keys({"abbr": "d", "k": 1, "n": 1, "eval_cfg": {"analyze_contamination": False}}, file="c.py",
                       where="datasets[0]")


CONFIG = '''
datasets = [dict(abbr="d", path="rows.jsonl", k=4, n=4,
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {question}\\nA:"),
                   retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=8)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")))]
models = [dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1", batch_size=2,
               max_out_lenn=8)]
'''


def test_lint_dry_run_and_run_refuse_alike(tmp_path: Path):
    (tmp_path / "rows.jsonl").write_text('{"question": "q", "answer": "a"}\n')
    cfg = tmp_path / "cfg.py"
    cfg.write_text(CONFIG)
    runner = CliRunner()
    outs = {"lint": runner.invoke(app, ["lint", str(cfg)]),
            "dry": runner.invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w1"), "--dry-run"]),
            "run": runner.invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w2"), "--no-progress"])}
    for name, res in outs.items():
        out = " ".join(res.output.split())
        assert res.exit_code != 0, (name, res.output)
        assert "[PW195]" in out and "datasets[0].k" in out, (name, res.output)
    assert "models[0].max_out_lenn: not a key promptweave knows" in " ".join(outs["lint"].output.split())
    # without the refused key, the plan goes on and the unknown key is said
    cfg.write_text(CONFIG.replace(" k=4, n=4,", ""))
    res = runner.invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w3"), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "models[0].max_out_lenn: not a key promptweave knows" in " ".join(res.output.split())
