"""Spread on the other template forms: perplexity label dicts on a text model, and in-context examples from an
ice_template (dialogue with ``</E>``); and its command line's error paths."""
import json
import shutil
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))

from openai_stub import StubServer  # noqa: E402

from promptweave.cli.app import app  # noqa: E402

EXAMPLE = ROOT / "examples" / "run_openai_server.py"
EXTRA = '''
science_ppl = dict(
    abbr="science_ppl", path="data/science_mc.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template={
            lab: dict(round=[dict(role="HUMAN", prompt="Question: {question}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\nAnswer:"),
                             dict(role="BOT", prompt=lab)]) for lab in "ABCD"}),
        retriever=dict(type="ZeroRetriever"), inferencer=dict(type="PPLInferencer")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [science, arithmetic, science_ppl]
models = [dict(abbr="served-text", type="OpenAICompatModel", kind="lm", base_url="URL", model="served",
               key="EMPTY", batch_size=4, max_out_len=32,
               meta_template=dict(round=[dict(role="HUMAN", begin="<|user|>\\n", end="\\n"),
                                         dict(role="BOT", begin="<|assistant|>\\n", end="\\n", generate=True)]))]
'''


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_ppl_and_in_context_examples(tmp_path):
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url) + EXTRA.replace("URL", srv.url))
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "arithmetic", "-d",
                                       "science_ppl", "-n", "4", "--limit", "3", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "w" / "spread.json").read_text())
    assert [(f["dataset"], f["scored"]) for f in data["figures"]] == [("arithmetic", 4), ("science_ppl", 4)]
    rows = [json.loads(x) for x in (ROOT / "examples" / "data" / "science_mc.jsonl").read_text().splitlines()]
    for k in range(4):
        ppl = lines(tmp_path / "w" / "variants" / str(k) / "predictions" / "served-text" / "science_ppl.jsonl")
        for p in ppl:
            assert sorted(p["prompt"]) == list("ABCD")  # one prompt per label, the label keys kept
            for lab, text in p["prompt"].items():
                assert text.rstrip("\n").endswith(f"<|assistant|>\n{lab}")  # the answer turn still names the label
                for col in ("question", "A", "B", "C", "D"):
                    assert rows[p["index"]][col] in text
        ari = lines(tmp_path / "w" / "variants" / str(k) / "predictions" / "served-text" / "arithmetic.jsonl")
        examples = [json.loads(x) for x in (ROOT / "examples" / "data" / "arithmetic.jsonl").read_text().splitlines()]
        for p in ari:
            assert p["shot_ids"] == [0, 1, 2]
            for ex in examples[:3]:  # the in-context examples are there, with their values as written
                assert ex["question"] in p["prompt"] and ex["answer"] in p["prompt"]
            if k:  # the examples and the question share the variant's format: one descriptor form throughout
                desc = p["prompt"].split(examples[0]["question"])[0].rsplit("\n", 1)[-1]
                assert p["prompt"].count(desc) >= 4, (k, desc, p["prompt"])


def test_view_variant_out_of_range_is_one_error_line(tmp_path):
    res = CliRunner().invoke(app, ["view", str(ROOT / "examples" / "quickstart.py"), "--variant", "100000"])
    assert res.exit_code == 2 and "[PW" in res.output and "--variant" in res.output, res.output


@settings(max_examples=25, deadline=None)
@given(n=st.integers(-3, 5000), seed=st.integers(-10**6, 10**6),
       search=st.sampled_from([None, "extremes", "best"]), budget=st.one_of(st.none(), st.integers(-2, 50)),
       executor=st.sampled_from(["local", "dask"]))
def test_spread_cli_errors_are_one_line_never_internal(tmp_path_factory, n, seed, search, budget, executor):
    wd = tmp_path_factory.mktemp("w")
    args = ["spread", str(ROOT / "examples" / "run_openai_server.py"), "-w", str(wd), "-n", str(n), "--seed",
            str(seed), "--executor", executor, "--no-progress", "--no-report", "-m", "no-such-model"]
    if search:
        args += ["--search", search]
    if budget is not None:
        args += ["--budget", str(budget)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output  # every combination here is refused before anything is sent
    assert "PW001" not in res.output and "Traceback" not in res.output


def test_dry_run_lists_the_variants_and_sends_nothing(tmp_path):
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(tmp_path / "w"), "-n", "5", "--dry-run"])
        assert srv.total_received == 0
    assert res.exit_code == 0, res.output
    assert "10 task(s)" in res.output and "nothing sent" in res.output
    assert res.output.count("the config's template as written") == 2
    assert not (tmp_path / "w").exists()


def test_search_budget_below_one_row_per_variant_is_refused(tmp_path):
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "science_mc", "-n", "8",
                                       "--search", "extremes", "--budget", "7"])
        assert srv.total_received == 0
    assert res.exit_code == 2 and "--budget" in res.output and "at least 8 calls" in res.output, res.output


def test_search_takes_any_integer_seed(tmp_path):
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "science_mc", "-n", "3",
                                       "--limit", "4", "--seed", "-3", "--search", "extremes", "--budget", "12"])
        assert srv.total_received <= 12
    assert res.exit_code == 0, res.output
    found = json.loads((tmp_path / "w" / "spread.json").read_text())["search"][0]
    assert found["calls_used"] <= 12 and found["best"] in range(3) and found["worst"] in range(3)
