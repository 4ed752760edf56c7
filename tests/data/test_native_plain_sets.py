"""Native loaders of the plain-reading families (data/loaders/plain_sets.py) give the reference's rows.

Each case writes stand-in files in the layout OpenCompass 0.5.4's loader reads; :data:`EXPECTED` holds the rows
that loader's own class returned on the same files, dumped once with the interpreter of ``$PROMPTWEAVE_OC_FULL_VENV`` running
:data:`REFERENCE`. Where ``$PROMPTWEAVE_OC_FULL_VENV`` names that environment the dump runs again and must agree.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from promptweave.data.loaders import load
from promptweave.data.sources import Split


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _xiezhi(root: Path) -> dict:
    _jsonl(root / "xiezhi" / "xiezhi_train_chn" / "xiezhi.v1.json", [
        {"question": "训练", "options": "甲\n乙\n丙\n丁", "answer": "丙", "labels": ["学", "工学", "计算机科学"]},
        {"question": "three options only: skipped", "options": "a\nb\nc", "answer": "a", "labels": ["x"]}])
    _jsonl(root / "xiezhi" / "xiezhi_spec_chn" / "xiezhi.v1.json", [
        {"question": "q", "options": "一\n二\n三\n四\"\n", "answer": "四", "labels": ["ab", "abcd", "abc"]},
        {"question": "q2", "options": "w\nx\ny\nz", "answer": "w", "labels": [], "extra": "not kept"}])
    return {"type": "XiezhiDataset", "path": str(root / "xiezhi") + "/", "name": "xiezhi_spec_chn"}


def _xiezhi_eng(root: Path) -> dict:
    _jsonl(root / "x" / "xiezhi_train_eng" / "xiezhi.v1.json", [
        {"question": "t", "options": "a\nb\nc\nd", "answer": "b", "label": ["bio", "science"]}])
    _jsonl(root / "x" / "xiezhi_inter_eng" / "xiezhi.v1.json", [
        {"question": "u", "options": "a\nb\nc\nd", "answer": "d", "label": ["zz", "y", "longest"]}])
    return {"type": "XiezhiDataset", "path": str(root / "x"), "name": "xiezhi_inter_eng"}


def _csl_v2(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"id": 1, "abst": "摘要", "keyword": ["水", "火"], "label": "1"},
                               {"id": 2, "abst": "b", "keyword": [], "label": 0}])
    return {"type": "CslDatasetV2", "path": str(root / "dev.json")}


def _crowspairs(root: Path) -> dict:
    _jsonl(root / "cp.jsonl", [{"sent_more": "m", "sent_less": "l", "stereo_antistereo": "stereo",
                                "bias_type": "race-color"}])
    return {"type": "CrowspairsDataset", "path": "json", "data_files": str(root / "cp.jsonl"), "split": "train"}


def _jigsaw(root: Path) -> dict:
    (root / "test.csv").write_text(
        'id,content,lang\n0,"hola, amigo",es\n1,bonjour,fr\n2,"dos\r\nlíneas",es\n', encoding="utf-8")
    (root / "labels.csv").write_text("id,toxic\n0,0\n1,1\n2,1\n", encoding="utf-8")
    return {"type": "JigsawMultilingualDataset", "path": str(root / "test.csv"), "label": str(root / "labels.csv"),
            "lang": "es"}


def _flores(root: Path) -> dict:
    for split in ("dev", "devtest"):
        (root / split).mkdir(parents=True)
        (root / split / f"eng_Latn.{split}").write_text(f" Hello {split}.\nSecond line\n", encoding="utf-8")
        (root / split / f"zho_Hans.{split}").write_text("你好。 \r\n第二行\n", encoding="utf-8")
    return {"type": "FloresFirst100Dataset", "path": str(root), "name": "eng_Latn-zho_Hans"}


def _humanevalx(root: Path) -> dict:
    lines = [json.dumps({"task_id": "CPP/0", "prompt": "int f() {", "declaration": "int f();", "test": "t",
                         "canonical_solution": "return 1;}"}),
             "   ",
             json.dumps({"task_id": "CPP/1", "prompt": "p\u2028q", "test": "u", "extra": 1})]
    (root / "humanevalx_cpp.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return {"type": "HumanevalXDataset", "path": str(root), "language": "cpp"}


def _cb_v2(root: Path) -> dict:
    _jsonl(root / "val.jsonl", [{"premise": "p", "hypothesis": "h", "label": "neutral", "idx": 0},
                                {"premise": "p2", "hypothesis": "h2", "label": "contradiction", "idx": 1}])
    return {"type": "CBDatasetV2", "path": str(root / "val.jsonl")}


def _copa_v2(root: Path) -> dict:
    _jsonl(root / "val.jsonl", [{"premise": "p", "choice1": "a", "choice2": "b", "question": "cause", "label": 1,
                                 "idx": 0}, {"premise": "q", "choice1": "c", "choice2": "d", "question": "effect",
                                             "label": 0, "idx": 1, "later": "dropped"}])
    return {"type": "COPADatasetV2", "path": str(root / "val.jsonl")}


def _eprstmt_v2(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"id": 1, "sentence": "好", "label": "Positive"},
                               {"id": 2, "sentence": "差", "label": "Negative"}])
    return {"type": "EprstmtDatasetV2", "path": str(root / "dev.json")}


def _wic_v2(root: Path) -> dict:
    _jsonl(root / "val.jsonl", [{"word": "bank", "sentence1": "a", "sentence2": "b", "label": "false", "idx": 0}])
    return {"type": "WiCDatasetV2", "path": str(root / "val.jsonl")}


def _cluewsc_v2(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"target": {"span1_text": "他", "span2_text": "小明", "span1_index": 0,
                                           "span2_index": 3}, "idx": 0, "label": "true", "text": "小明说他来"}])
    return {"type": "CluewscDatasetV2", "path": str(root / "dev.json")}


def _chid_v2(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"content": "他#idiom#地走了", "candidates": ["甲", "乙", "丙"], "answer": 2},
                               {"content": "b#idiom#", "candidates": ["x", "y", "z", "w"], "answer": 0}])
    return {"type": "CHIDDatasetV2", "path": str(root / "dev.json")}


CASES = {"xiezhi": _xiezhi, "xiezhi_eng": _xiezhi_eng, "csl_v2": _csl_v2, "crowspairs": _crowspairs,
         "jigsaw": _jigsaw, "flores": _flores, "humanevalx": _humanevalx, "cb_v2": _cb_v2, "copa_v2": _copa_v2,
         "eprstmt_v2": _eprstmt_v2, "wic_v2": _wic_v2, "cluewsc_v2": _cluewsc_v2, "chid_v2": _chid_v2}

# dumped once from OpenCompass 0.5.4's classes ($PROMPTWEAVE_OC_FULL_VENV, REFERENCE below) on the files above
EXPECTED: dict[str, dict[str, list[dict[str, Any]]]] = {'cb_v2': {'': [{'premise': 'p', 'hypothesis': 'h', 'label': 'C', 'idx': 0},
                {'premise': 'p2', 'hypothesis': 'h2', 'label': 'A', 'idx': 1}]},
 'chid_v2': {'': [{'content': '他______地走了', 'A': '甲', 'B': '乙', 'C': '丙', 'answer': 'C'},
                  {'content': 'b______', 'A': 'x', 'B': 'y', 'C': 'z', 'answer': 'A'}]},
 'cluewsc_v2': {'': [{'span1': '他', 'span2': '小明', 'text': '小明说他来', 'label': 'A'}]},
 'copa_v2': {'': [{'premise': 'p', 'choice1': 'a', 'choice2': 'b', 'question': 'cause', 'label': 'B', 'idx': 0},
                  {'premise': 'q', 'choice1': 'c', 'choice2': 'd', 'question': 'effect', 'label': 'A', 'idx': 1}]},
 'crowspairs': {'': [{'sent_more': 'm',
                      'sent_less': 'l',
                      'stereo_antistereo': 'stereo',
                      'bias_type': 'race-color',
                      'label': 0}]},
 'csl_v2': {'': [{'abst': '摘要', 'keywords': '水，火', 'label': 'B'}, {'abst': 'b', 'keywords': '', 'label': 'A'}]},
 'eprstmt_v2': {'': [{'sentence': '好', 'label': 'A'}, {'sentence': '差', 'label': 'B'}]},
 'flores': {'dev': [{'sentence_eng_Latn': 'Hello dev.', 'sentence_zho_Hans': '你好。'},
                    {'sentence_eng_Latn': 'Second line', 'sentence_zho_Hans': '第二行'}],
            'devtest': [{'sentence_eng_Latn': 'Hello devtest.', 'sentence_zho_Hans': '你好。'},
                        {'sentence_eng_Latn': 'Second line', 'sentence_zho_Hans': '第二行'}]},
 'humanevalx': {'': [{'task_id': 'CPP/0',
                      'prompt': 'int f() {',
                      'declaration': 'int f();',
                      'test': 't',
                      'canonical_solution': 'return 1;}'},
                     {'task_id': 'CPP/1',
                      'prompt': 'p\u2028q',
                      'declaration': None,
                      'test': 'u',
                      'canonical_solution': None}]},
 'jigsaw': {'test': [{'idx': 0, 'text': 'hola, amigo', 'label': 0, 'choices': ['no', 'yes']},
                     {'idx': 1, 'text': 'dos\nlíneas', 'label': 1, 'choices': ['no', 'yes']}]},
 'wic_v2': {'': [{'word': 'bank', 'sentence1': 'a', 'sentence2': 'b', 'label': 'B', 'idx': 0}]},
 'xiezhi': {'train': [{'question': '训练',
                       'A': '甲',
                       'B': '乙',
                       'C': '丙',
                       'D': '丁',
                       'labels': ['计算机科学', '工学', '学'],
                       'answer': 'C'}],
            'test': [{'question': 'q',
                      'A': '一',
                      'B': '二',
                      'C': '三',
                      'D': '四',
                      'labels': ['abcd', 'abc', 'ab'],
                      'answer': 'D'},
                     {'question': 'q2', 'A': 'w', 'B': 'x', 'C': 'y', 'D': 'z', 'labels': [], 'answer': 'A'}]},
 'xiezhi_eng': {'train': [{'question': 't',
                           'A': 'a',
                           'B': 'b',
                           'C': 'c',
                           'D': 'd',
                           'labels': ['science', 'bio'],
                           'answer': 'B'}],
                'test': [{'question': 'u',
                          'A': 'a',
                          'B': 'b',
                          'C': 'c',
                          'D': 'd',
                          'labels': ['longest', 'zz', 'y'],
                          'answer': 'D'}]}}

REFERENCE = """
    import opencompass.datasets as D
    from datasets import DatasetDict
    cfg = dict(PAYLOAD["cfg"])
    got = getattr(D, cfg.pop("type")).load(**cfg)
    def rows(ds):
        return [dict(r) for r in ds]
    RESULT = {k: rows(v) for k, v in got.items()} if isinstance(got, (dict, DatasetDict)) else {"": rows(got)}
"""


def _native(cfg: dict) -> dict[str, list[dict[str, Any]]]:
    got = load(cfg, base_dir=None, file=None).splits
    return {"": got.rows} if isinstance(got, Split) else {k: v.rows for k, v in got.items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_native_rows_equal_the_reference_rows(case, tmp_path, monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    monkeypatch.chdir(tmp_path)
    cfg = CASES[case](tmp_path)
    got = _native(cfg)
    assert json.loads(json.dumps(got, ensure_ascii=False)) == EXPECTED[case]

    from tests.e2e import oc_full

    ref = oc_full.run_reference(REFERENCE, {"cfg": cfg}, cwd=tmp_path)
    assert ref == EXPECTED[case]


def _fails(cfg: dict, monkeypatch) -> str:
    from promptweave.errors import PromptweaveError

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    with pytest.raises(PromptweaveError) as exc:
        load(cfg, base_dir=None, file="cfg.py")
    return str(exc.value)


def test_xiezhi_answer_outside_its_options_names_the_line(tmp_path, monkeypatch):
    cfg = _xiezhi(tmp_path)
    _jsonl(tmp_path / "xiezhi" / "xiezhi_spec_chn" / "xiezhi.v1.json",
           [{"question": "q", "options": "a\nb\nc\nd", "answer": "e", "labels": []}])
    msg = _fails(cfg, monkeypatch)
    assert "line 1" in msg and "answer" in msg and "'e'" in msg


def test_jigsaw_label_file_out_of_step_is_refused(tmp_path, monkeypatch):
    cfg = _jigsaw(tmp_path)
    (tmp_path / "labels.csv").write_text("id,toxic\n9,0\n", encoding="utf-8")
    msg = _fails(cfg, monkeypatch)
    assert "labels.csv" in msg and "'0'" in msg


def test_humanevalx_unknown_language_and_corrupt_gzip_are_typed(tmp_path, monkeypatch):
    cfg = _humanevalx(tmp_path)
    assert "language must be one of" in _fails({**cfg, "language": "cobol"}, monkeypatch)
    (tmp_path / "humanevalx_cpp.jsonl.gz").write_bytes(b"not gzip")
    assert "gzip" in _fails(cfg, monkeypatch)


# flores_postprocess / flores_postprocess_chinese of OpenCompass 0.5.4 ($PROMPTWEAVE_OC_FULL_VENV) on these replies
_FLORES_IN = ["  Hello world.\nsecond line", "\n\n你好，世界。  今天\t天气 很好。\n第二行", "", "北京 欢迎你"]
_FLORES_OUT = ["Hello world.", "你好，世界。  今天\t天气 很好。", "", "北京 欢迎你"]
_FLORES_ZH_OUT = ["Hello   world .", "你好 ， 世界 。   今天   天气   很 好 。", "", "北京   欢迎 你"]


def test_flores_postprocessors_match_the_reference():
    from promptweave.compat.postprocessors import POSTPROCESSORS

    assert [POSTPROCESSORS["flores"](x) for x in _FLORES_IN] == _FLORES_OUT
    assert [POSTPROCESSORS["flores-chinese"](x) for x in _FLORES_IN] == _FLORES_ZH_OUT


@pytest.mark.parametrize("config", ["xiezhi/xiezhi_gen.py", "xiezhi/xiezhi_ppl.py", "FewCLUE_csl/FewCLUE_csl_gen.py",
                                    "crowspairs/crowspairs_ppl.py", "flores/flores_gen_aad4fd.py",
                                    "SuperGLUE_CB/SuperGLUE_CB_gen.py", "SuperGLUE_COPA/SuperGLUE_COPA_gen.py",
                                    "FewCLUE_eprstmt/FewCLUE_eprstmt_gen.py", "SuperGLUE_WiC/SuperGLUE_WiC_gen.py",
                                    "FewCLUE_cluewsc/FewCLUE_cluewsc_gen.py", "FewCLUE_chid/FewCLUE_chid_gen.py"])
def test_configs_lint_with_the_references_hidden(config, monkeypatch):
    import importlib.util

    from typer.testing import CliRunner

    from promptweave.cli.app import app

    spec = importlib.util.find_spec("opencompass")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the opencompass config tree (a --no-deps install) is not here")
    path = Path(next(iter(spec.submodule_search_locations))) / "configs" / "datasets" / config
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    res = CliRunner().invoke(app, ["lint", "--no-data", str(path)])
    assert res.exit_code == 0, res.output
