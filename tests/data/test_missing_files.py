"""A dataset's missing files are named all at once: a loader declares the files it reads (``LoadContext.files``),
so a folder lacking several of them, or not found at all, is one error naming every one, not one per rerun."""
from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.cli.app import run_cli
from promptweave.cli.common import ExitCode
from promptweave.data.loaders import LoadContext, load
from promptweave.errors import DataNotFoundError, LoaderError
from tests.data import layouts

GSM8K = {"type": "GSM8KDataset", "path": "opencompass/gsm8k", "abbr": "gsm8k"}
CONFIG = '''datasets = [dict(abbr="gsm8k", type="GSM8KDataset", path="opencompass/gsm8k",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {question}"),
                   retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=8)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")))]
models = [dict(abbr="m", type="OpenAISDK", path="served", openai_api_base="http://127.0.0.1:9/v1", key="EMPTY"),
          dict(abbr="n", type="OpenAISDK", path="served", openai_api_base="http://127.0.0.1:9/v1", key="EMPTY")]
'''


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _load(cfg: dict, tmp: Path):
    return load(cfg, base_dir=tmp, file=str(tmp / "eval.py")).splits


def test_an_empty_folder_names_both_split_files(cache: Path) -> None:
    (cache / "data" / "gsm8k").mkdir(parents=True)
    with pytest.raises(LoaderError) as info:
        _load(GSM8K, cache)
    assert "missing: train.jsonl and test.jsonl" in info.value.message, info.value.message
    assert info.value.file == str(cache / "data" / "gsm8k")


def test_one_missing_file_is_named_with_what_the_loader_reads(cache: Path) -> None:
    layouts.gsm8k(cache, [("q", "a #### 3")])
    (cache / "data" / "gsm8k" / "train.jsonl").unlink()
    with pytest.raises(LoaderError) as info:
        _load(GSM8K, cache)
    msg = info.value.message
    assert "expects train.jsonl and test.jsonl" in msg and "missing: train.jsonl" in msg and "test.jsonl (" not in msg
    assert info.value.file == str(cache / "data" / "gsm8k" / "train.jsonl")


def test_a_folder_not_found_names_the_files_it_must_hold(cache: Path) -> None:
    with pytest.raises(DataNotFoundError) as info:
        _load(GSM8K, cache)
    msg = info.value.message
    assert "tried" in msg and "GSM8KDataset reads train.jsonl and test.jsonl inside that folder" in msg
    assert "COMPASS_DATA_CACHE" in (info.value.expected or "")  # how to fix it, as before


def test_subfolder_layouts_name_every_missing_file(cache: Path) -> None:
    layouts.mmlu(cache, "anatomy", [["q", "a", "b", "c", "d", "A"]])
    (cache / "data" / "mmlu" / "dev" / "anatomy_dev.csv").unlink()
    with pytest.raises(LoaderError, match="missing: dev/anatomy_dev.csv"):
        _load({"type": "MMLUDataset", "path": "opencompass/mmlu", "name": "anatomy"}, cache)
    (cache / "data" / "ceval" / "formal").mkdir(parents=True)
    with pytest.raises(LoaderError, match="missing: dev/law_dev.csv, val/law_val.csv and test/law_test.csv"):
        _load({"type": "CEvalDataset", "path": str(cache / "data" / "ceval" / "formal"), "name": "law"}, cache)


def test_lint_says_it_once_for_every_model(capsys, cache: Path) -> None:
    (cache / "data" / "gsm8k").mkdir(parents=True)
    cfg = cache / "eval_gsm8k.py"
    cfg.write_text(CONFIG)
    code = run_cli(["lint", str(cfg)])
    out = " ".join(capsys.readouterr().out.split())
    assert code == ExitCode.BAD_INPUT
    assert out.count("[PW220]") == 1 and "missing: train.jsonl and test.jsonl" in out, out


NAMES = st.lists(st.text(string.ascii_lowercase + "_-", min_size=1, max_size=8).map(lambda s: s + ".jsonl"),
                 min_size=1, max_size=5, unique=True)


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=NAMES, present=st.data())
def test_members_names_exactly_the_missing_files(tmp_path: Path, names: list[str], present) -> None:
    root = tmp_path / "ds"
    root.mkdir(exist_ok=True)
    for f in root.iterdir():
        f.unlink()
    there = present.draw(st.sets(st.sampled_from(names)))
    for n in there:
        (root / n).write_text("{}\n")
    ctx = LoadContext("SomeDataset", "some")
    missing = [n for n in names if n not in there]
    if not missing:
        assert ctx.members(root, *names) == [root / n for n in names]
        return
    with pytest.raises(LoaderError) as info:
        ctx.members(root, *names)
    msg = info.value.message
    gone = msg.split("missing: ", 1)[1] if len(names) > 1 else ""
    for n in names:
        assert n in msg  # every declared file, as the layout
        if len(names) > 1:
            assert (n in gone.split(" (config")[0].replace(" and ", ", ").split(", ")) == (n in missing)


def test_labelled_sets_name_all_four_files(cache: Path) -> None:
    folder = cache / "siqa"
    folder.mkdir()
    (folder / "dev.jsonl").write_text('{"context": "c"}\n')
    with pytest.raises(LoaderError) as info:
        _load({"type": "siqaDataset", "path": str(folder)}, cache)
    assert "missing: train.jsonl, train-labels.lst and dev-labels.lst" in info.value.message, info.value.message
