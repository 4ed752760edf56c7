"""Issue 22, item 5: inputs that used to end in ``[PW001]`` now end in a typed error (or work), within seconds.

Commands run through ``run_cli`` (the real entry point). The report reads predictions only inside its work dir;
long model names are shortened with a hash in file names; corpora are streamed with a line cap.
"""
from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.cli.app import run_cli
from promptweave.filenames import MAX_NAME_CHARS, file_name
from promptweave.report.workdir import load_workdir

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "servers"))
import fuzz  # noqa: E402
from openai_stub import StubServer  # noqa: E402


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = run_cli([str(a) for a in argv])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "[PW001]" not in text and "Traceback" not in text, text
    return code, text


def _page_text(html: str) -> str:
    """The report's text with its embedded (gzip + base64) row blobs opened."""
    parts = [html]
    for blob in re.findall(r'type="application/octet-stream"[^>]*>([A-Za-z0-9+/=]+)<', html):
        parts.append(gzip.decompress(base64.b64decode(blob)).decode("utf-8"))
    return "\n".join(parts)


def _workdir(base: Path, result_text: str, pred_text: str | None = None) -> Path:
    work = base / "w"
    (work / "results" / "m").mkdir(parents=True)
    (work / "predictions" / "m").mkdir(parents=True)
    (work / "results" / "m" / "d.json").write_text(result_text)
    if pred_text is not None:
        (work / "predictions" / "m" / "d.jsonl").write_text(pred_text)
    return work


ROW = json.dumps({"index": 0, "prompt": "inside-row", "prediction": "A", "gold": "A", "correct": True})


def test_report_with_a_400_digit_metric(tmp_path, capsys):
    work = _workdir(tmp_path, '{"model": "m", "dataset": "d", "metrics": {"accuracy": ' + "9" * 400
                    + ', "f1": 12.5}}', ROW)
    code, _ = _cli(capsys, "report", work)
    assert code == 0
    [task] = load_workdir(work).tasks
    assert task.metrics == {"f1": 12.5}  # the number past float range is left out, the rest kept


def test_report_with_200k_deep_json(tmp_path, capsys):
    deep = "[" * 200_000 + "]" * 200_000
    work = _workdir(tmp_path, deep, deep + "\n" + ROW + "\n")
    code, _ = _cli(capsys, "report", work)
    assert code == 0
    wd = load_workdir(work)
    assert any("nested too deeply" in p for p in wd.problems)
    assert "inside-row" in _page_text((work / "report.html").read_text())  # the good line is still shown


def test_report_with_a_predictions_link_loop(tmp_path, capsys):
    work = _workdir(tmp_path, json.dumps({"model": "m", "dataset": "d", "metrics": {"accuracy": 1.0}}))
    pred = work / "predictions" / "m" / "d.jsonl"
    pred.symlink_to(pred)
    code, _ = _cli(capsys, "report", work)
    assert code == 0 and load_workdir(work).tasks[0].predictions is None


@pytest.mark.parametrize("how", ["results_path", "summary_path", "symlink", "relative"])
def test_report_reads_predictions_only_inside_the_work_dir(tmp_path, capsys, how):
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"index": 0, "prompt": "OUTSIDE-SECRET-ROW", "prediction": "x"}) + "\n")
    result = {"model": "m", "dataset": "d", "metrics": {"accuracy": 1.0}}
    if how == "results_path":
        result["predictions"] = str(outside)
    if how == "relative":
        result["predictions"] = "w/../outside.jsonl"
    work = _workdir(tmp_path, json.dumps(result))
    if how == "summary_path":
        (work / "summary.json").write_text(json.dumps([{"model": "m", "dataset": "d",
                                                        "predictions_path": str(outside)}]))
    if how == "symlink":
        (work / "predictions" / "m" / "d.jsonl").symlink_to(outside)
    code, _ = _cli(capsys, "report", work)
    assert code == 0
    assert "OUTSIDE-SECRET-ROW" not in _page_text((work / "report.html").read_text())
    assert load_workdir(work).tasks[0].predictions is None


def test_report_line_longer_than_the_cap_is_reported_not_read(tmp_path, monkeypatch, capsys):
    import promptweave.report.workdir as wd

    monkeypatch.setattr(wd, "MAX_LINE_CHARS", 1000)
    work = _workdir(tmp_path, json.dumps({"model": "m", "dataset": "d", "metrics": {"accuracy": 1.0}}),
                    '{"index": 0, "prompt": "' + "x" * 5000 + '"}\n' + ROW + "\n")
    rows = list(wd.iter_predictions(work / "predictions" / "m" / "d.jsonl"))
    assert "longer than 1000" in rows[0]["error"] and rows[1]["prompt"] == "inside-row"


def test_long_names_are_shortened_with_a_hash():
    a, b = "M" * 300, "M" * 299 + "N"
    assert len(file_name(a)) <= MAX_NAME_CHARS and file_name(a) != file_name(b)
    assert file_name("qwen2.5-7b-instruct") == "qwen2.5-7b-instruct"  # ordinary names unchanged


def test_run_with_a_300_character_model_name(tmp_path, capsys):
    name = "m" * 300
    with StubServer() as server:
        cfg = tmp_path / "c.py"
        cfg.write_text(textwrap.dedent(f"""
            datasets = [dict(abbr='d' * 280, rows=[dict(q='1+1', a='2')],
                             reader_cfg=dict(input_columns=['q'], output_column='a'),
                             infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                            retriever=dict(type='ZeroRetriever'),
                                            inferencer=dict(type='GenInferencer')),
                             eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
            models = [dict(abbr={name!r}, type='OpenAISDK', path='gpt', openai_api_base='{server.url}')]
        """))
        work = tmp_path / "w"
        code, _ = _cli(capsys, "run", cfg, "-w", work, "--no-progress")
    assert code == 0
    [result] = list((work / "results").glob("*/*.json"))
    assert len(result.parent.name) <= MAX_NAME_CHARS and len(result.name) <= MAX_NAME_CHARS + 5
    data = json.loads(result.read_text())
    assert data["model"] == name and data["dataset"] == "d" * 280  # the full names inside the file
    assert load_workdir(work).tasks[0].predictions is not None  # the report finds the shortened file
    code, _ = _cli(capsys, "report", work)
    assert code == 0


def _gz_huge_line(path: Path, mb: int) -> None:
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b'{"id": "')
        chunk = b"a" * 1_000_000
        for _ in range(mb):
            fh.write(chunk)


def test_conformance_on_a_huge_single_line_gzip(tmp_path, monkeypatch, capsys):
    import promptweave.conformance.runner as runner

    monkeypatch.setattr(runner, "MAX_CASE_BYTES", 4_000_000)  # the real cap is 64 MB; the stream is the same
    path = tmp_path / "huge.jsonl.gz"
    _gz_huge_line(path, 20)
    code, text = _cli(capsys, "conformance", path)
    assert code == 2 and "[PW230]" in text and "longer than 4000000 bytes" in text


@pytest.mark.parametrize("damage", ["truncated", "flipped", "not_gzip", "deep", "not_object", "bad_utf8"])
def test_conformance_on_a_damaged_corpus(tmp_path, capsys, damage):
    lines = [json.dumps({"suite": "nobody", "kind": "nothing", "id": f"c{i}"}) for i in range(50)]
    data = gzip.compress("\n".join(lines).encode(), mtime=0)
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped":
        data = data[:30] + bytes(b ^ 0xFF for b in data[30:40]) + data[40:]
    elif damage == "not_gzip":
        data = b"hello, not gzip"
    elif damage == "deep":
        data = gzip.compress(b"[" * 200_000 + b"]" * 200_000)
    elif damage == "not_object":
        data = gzip.compress(b"[1, 2]\n")
    else:
        data = gzip.compress(b'{"id": "\xff\xfe"}\n')
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(data)
    code, text = _cli(capsys, "conformance", path)
    assert code == 2 and "[PW230]" in text and str(path) in text


# ---------------------------------------------------------------------- Hypothesis over the fuzz cases of issue 22
class _Chooser(fuzz.Chooser):
    def __init__(self, data) -> None:
        self.data = data

    def choice(self, seq):
        return seq[self.data.draw(st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def text(self) -> str:
        return self.data.draw(st.one_of(st.sampled_from(fuzz.NASTY_TEXT), st.text(max_size=12)))


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kind=st.sampled_from(["report", "tokenizer", "conformance"]), data=st.data())
def test_hostile_work_dirs_tokenizer_folders_and_corpora(kind, data):
    folder = Path(tempfile.mkdtemp(prefix="pwfuzz-"))
    try:
        argv = fuzz.command_args(fuzz.KINDS[kind](_Chooser(data), folder), folder)
        outcome, _code, last = fuzz.run_case(argv, limit_s=120.0)  # a hang, not a slow machine: cases take seconds
        for page in (folder / "w").glob("*.html") if kind == "report" else ():
            assert "OUTSIDE-ROW" not in _page_text(page.read_text())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert outcome in ("ok", "typed error"), (outcome, argv, last)
    assert "[PW001]" not in last, last


def test_report_with_nan_and_infinite_numbers_stays_valid_json(tmp_path, capsys):
    work = _workdir(tmp_path, '{"model": "m", "dataset": "d", "metrics": {"accuracy": NaN, "f1": Infinity}}',
                    '{"index": 0, "prompt": "p", "score": -Infinity}\n')
    code, _ = _cli(capsys, "report", work)
    assert code == 0
    html = (work / "report.html").read_text()
    index = re.search(r'id="pw-index"[^>]*>(.*?)</script>', html, re.S).group(1)
    json.loads(index, parse_constant=lambda c: pytest.fail(f"{c} in the page's JSON"))
    for blob in re.findall(r'type="application/octet-stream"[^>]*>([A-Za-z0-9+/=]+)<', html):
        json.loads(gzip.decompress(base64.b64decode(blob)), parse_constant=lambda c: pytest.fail(f"{c} in a blob"))
