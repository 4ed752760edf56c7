import gzip
import json

from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.conformance.runner import run_files

runner = CliRunner()


def _case(expected):
    return {"id": "mine-1", "suite": "opencompass", "kind": "icl", "mode": "gen", "test_index": 0,
            "dataset": {"reader_cfg": {"input_columns": ["q"], "output_column": "a"},
                        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "Q: {q}"},
                                      "retriever": {"type": "ZeroRetriever"},
                                      "inferencer": {"type": "GenInferencer"}}},
            "train": None, "test": [{"q": "hi", "a": "x"}],
            "model": {"kind": "lm", "name": "lm:none", "meta_template": None}, "expected": expected}


def _write(tmp_path, cases):
    p = tmp_path / "mine.jsonl.gz"
    with gzip.open(p, "wt") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    return p


def test_pass_fail_and_unsupported_are_counted(tmp_path):
    other = {"id": "x", "suite": "nosuch", "kind": "icl", "expected": None}
    p = _write(tmp_path, [_case("Q: hi"), _case("Q: bye"), other])
    report = run_files([p])
    assert (report.passed, report.failed, report.unsupported) == (1, 1, 1)
    res = runner.invoke(app, ["conformance", str(p)])
    assert res.exit_code == 1
    assert res.output.rstrip().endswith("1 passed, 1 failed")
    assert "-Q: bye" in res.output and "+Q: hi" in res.output


def test_shared_corpus_passes_every_icl_case(shared_corpus):
    files = sorted(shared_corpus.glob("opencompass-*.jsonl.gz")) + sorted(shared_corpus.glob("aisbench-*.jsonl.gz"))
    report = run_files(files)
    icl = {k: v for k, v in report.counts.items() if k[1] == "icl"}
    assert icl[("opencompass", "icl", "passed")] == 10477
    assert not any(status == "failed" for (_, _, status) in icl)
    assert report.adversarial_same + report.adversarial_differ >= 500
