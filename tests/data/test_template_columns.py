"""The reader keeps the columns templates read (AISBench multimodal ``content``), as the references fill
templates from whole rows."""
import json

from promptweave import PromptBuilder, load_config, open_dataset, open_model
from promptweave.data import load_dataset
from promptweave.data.columns import template_columns
from promptweave.prompt.multimodal import build_content

AIS_MM_CONFIG = '''
from ais_bench.benchmark.openicl.icl_prompt_template.icl_prompt_template_mm import MMPromptTemplate
from ais_bench.benchmark.openicl.icl_retriever import ZeroRetriever
from ais_bench.benchmark.openicl.icl_inferencer import GenInferencer

textvqa_reader_cfg = dict(input_columns=['question', 'image'], output_column='answer')
textvqa_infer_cfg = dict(
    prompt_template=dict(
        type=MMPromptTemplate,
        template=dict(round=[dict(role="HUMAN", prompt_mm={
            "text": {"type": "text", "text": "{question} Answer the question using a single word or phrase."},
            "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
        })]),
    ),
    retriever=dict(type=ZeroRetriever),
    inferencer=dict(type=GenInferencer),
)
datasets = [dict(abbr='textvqa', path='rows.jsonl', reader_cfg=textvqa_reader_cfg, infer_cfg=textvqa_infer_cfg)]
models = [dict(abbr='api', type='OpenAICompatModel', kind='api', base_url='http://127.0.0.1:9/v1', model='m',
               meta_template=dict(round=[dict(role='HUMAN', api_role='HUMAN'),
                                         dict(role='BOT', api_role='BOT', generate=True)]))]
'''


def test_template_columns_found_in_infer_cfg():
    cols = template_columns({"prompt_template": {"template": {"round": [{"prompt": "{a} and {b_2} {0} {{x}}"}]}},
                             "ice_template": {"template": "{c}"}})
    assert set(cols.names) == {"a", "b_2", "c", "x"} and not cols.multimodal
    assert "content" in template_columns({"prompt_template": {"template": {"round": [{"prompt_mm": {}}]}}}).names


def test_a_column_the_template_reads_is_kept_beyond_reader_cfg(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"q": "x", "hint": "h", "a": "1", "junk": 0}) + "\n",
                                      encoding="utf-8")
    cfg = {"path": "d.jsonl", "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
           "infer_cfg": {"prompt_template": {"template": "{hint}: {q}"}}}
    assert load_dataset(cfg, base_dir=tmp_path).test == [{"q": "x", "a": "1", "hint": "h"}]


def test_aisbench_multimodal_config_as_shipped_builds_prompts(tmp_path):
    content = build_content([("image", "/imgs/1.jpg"), ("text", "What is written?")])
    (tmp_path / "rows.jsonl").write_text(json.dumps({"content": content, "answer": ["stop"],
                                                     "question_id": 1}) + "\n", encoding="utf-8")
    (tmp_path / "eval.py").write_text(AIS_MM_CONFIG, encoding="utf-8")
    cfg = load_config(tmp_path / "eval.py")
    spec = open_dataset(cfg, 0)
    assert spec.test[0]["content"] == content  # kept although reader_cfg does not list it
    prompt = PromptBuilder(spec, open_model(cfg, 0)).build(0)
    text = json.dumps(prompt.rendered, default=str)
    assert "file:///imgs/1.jpg" in text and "What is written? Answer the question" in text


def test_shipped_aisbench_textvqa_config_with_native_loader(tmp_path, monkeypatch):
    """textvqa_gen.py as shipped: TEXTVQADataset reads ais_bench/datasets/... from the working directory."""
    import importlib.util

    spec = importlib.util.find_spec("ais_bench")
    if spec is None:
        import pytest

        pytest.skip("ais_bench's config tree is not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIS_BENCH_DATASETS_CACHE", raising=False)
    d = tmp_path / "ais_bench" / "datasets" / "textvqa" / "textvqa_json"
    d.mkdir(parents=True)
    (d / "textvqa_val.jsonl").write_text(json.dumps({"question_id": 7, "question": "What brand?",
                                                     "image": "/imgs/7.jpg"}) + "\n", encoding="utf-8")
    (d / "textvqa_val_annotations.json").write_text(json.dumps({"annotations": [
        {"question_id": 7, "answers": [{"answer": "nokia"}]}]}), encoding="utf-8")
    (tmp_path / "eval.py").write_text(
        "from mmengine.config import read_base\n"
        "with read_base():\n"
        "    from ais_bench.benchmark.configs.datasets.textvqa.textvqa_gen import textvqa_datasets\n"
        "datasets = textvqa_datasets\n"
        + AIS_MM_CONFIG.split("models = ")[1].join(["models = ", ""]), encoding="utf-8")
    cfg = load_config(tmp_path / "eval.py")
    spec_ = open_dataset(cfg, 0)
    assert spec_.test[0]["answer"] == [{"answer": "nokia"}]
    prompt = PromptBuilder(spec_, open_model(cfg, 0)).build(0)
    text = json.dumps(prompt.rendered, default=str)
    assert "file:///imgs/7.jpg" in text and "What brand? Answer the question using a single word" in text
