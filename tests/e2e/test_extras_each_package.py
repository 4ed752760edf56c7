"""Each optional package a planned task needs is refused at plan time with nothing sent: the evaluators',
postprocessors', retrievers' and model backends' packages, one by one (``tests/evaluate/test_extras_table.py``
checks that every optional import is declared; this checks the declarations reach the plan).

Each case hides its package in a child process (the same ``sys.meta_path`` refusal as
``test_extras_at_plan_time.py``) and runs a small config whose first model is an API model on the stand-in server:
the run stops with one typed PW640 line naming the task and ``pip install 'promptweave[extra]'``, and the server
received no request (before, a task whose scoring lacked its package sent all its requests first, and a local model
whose backend was missing failed alone while the API model's task ran)."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.codebox import CODE_EXEC
from tests.e2e.test_extras_at_plan_time import _promptweave

ROWS = [{"question": f"[q{i}] {i}+{i}?", "answer": str(2 * i)} for i in range(6)]

CONFIG = '''
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever
from opencompass.openicl.icl_inferencer import GenInferencer

ds = dict(
    abbr="sums",
    path="rows.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer", train_range="[0:3]", test_range="[3:]"),
    infer_cfg=dict(
        prompt_template=dict(type=PromptTemplate, template="{{question}}"),
        retriever={retriever},
        inferencer=dict(type=GenInferencer, max_out_len=16),
    ),
    eval_cfg=dict({eval_cfg}),
)
datasets = [ds]
models = [
    dict(abbr="stub", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
         batch_size=4, max_out_len=16, backoff_base=0),
    {second_model}
]
'''

ZERO = "dict(type=ZeroRetriever)"
ACC = 'evaluator=dict(type="AccEvaluator")'

# id: (hidden packages, eval_cfg, retriever, a second model, the package named, the extra named)
CASES = {
    "rouge_score": ("rouge_score", 'evaluator=dict(type="RougeEvaluator")', ZERO, "", "rouge_score", "metrics"),
    "sacrebleu": ("sacrebleu", 'evaluator=dict(type="BleuEvaluator")', ZERO, "", "sacrebleu", "metrics"),
    "rouge": ("rouge", 'evaluator=dict(type="JiebaRougeEvaluator")', ZERO, "", "rouge", "metrics"),
    "jieba": ("jieba", ACC + ', pred_postprocessor=dict(type="general_cn_postprocess")', ZERO, "", "jieba",
              "metrics-zh"),
    "cn2an": ("cn2an", 'evaluator=dict(type="LawBenchEvaluator_3_4")', ZERO, "", "cn2an", "lawbench"),
    "rouge_chinese": ("rouge_chinese", 'evaluator=dict(type="LawBenchEvaluator_3_8")', ZERO, "", "rouge_chinese",
                      "lawbench"),
    "nltk": ("nltk", ACC, 'dict(type="BM25Retriever", tokenizer="nltk", ice_num=1)', "", "nltk", "nltk"),
    "sentence_transformers": ("sentence_transformers", ACC, 'dict(type="TopkRetriever", ice_num=1)', "",
                              "sentence_transformers", "embed"),
    "transformers": ("torch,transformers", ACC, ZERO,
                     'dict(abbr="local", type="HuggingFaceCausalLM", path="no/such/model", max_out_len=16),',
                     "transformers", "hf"),
    "vllm": ("vllm", ACC, ZERO, 'dict(abbr="engine", type="VLLM", path="no/such/model", max_out_len=16),', "vllm",
             "vllm"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_missing_package_is_refused_at_plan_time_with_nothing_sent(case, tmp_path):
    hidden, eval_cfg, retriever, second, package, extra = CASES[case]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with StubServer(answer=lambda body: "4") as server:
        cfg = tmp_path / "eval.py"
        cfg.write_text(CONFIG.format(retriever=retriever, eval_cfg=eval_cfg, url=server.url, second_model=second),
                       encoding="utf-8")
        out = _promptweave(hidden, "run", "-w", str(tmp_path / "work"), "--no-progress", str(cfg), cwd=tmp_path)
        assert server.total_received == 0, case
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "[PW640]" in text and "Traceback" not in text, text
    assert repr(package) in text and f"pip install 'promptweave[{extra}]'" in text, text
    assert "task sums × " in text, text  # the task is named


def _figure_notebook(folder, with_figure: bool) -> None:
    """A CIBench experiment whose second gold cell draws a figure (a ``vis`` step), or prints."""
    png = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]},
           "metadata": {}}
    printed = {"output_type": "stream", "name": "stdout", "text": ["6\n"]}
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["Sum one to three."]},
             {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["print(1 + 2 + 3)"],
              "outputs": [printed]},
             {"cell_type": "markdown", "metadata": {}, "source": ["Plot them."]},
             {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": ["plt.plot([1, 2, 3])"],
              "outputs": [png if with_figure else printed]}]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "experiment_0.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                           "nbformat_minor": 5}))


def test_cibench_figures_need_scikit_image_at_plan_time(tmp_path):
    """CIBench scores a figure step by SSIM (scikit-image): where the notebooks have one, the run is refused at plan
    time naming the ``cibench`` extra (the reference scores every figure 0 without it); without figures the same
    config needs nothing more."""
    from tests.run.test_run_agent import CONFIG as CIBENCH

    folder = tmp_path / "data" / "cibench_dataset" / "cibench_generation" / "pandas"
    with StubServer(answer=lambda body: "Thought: done\nFinal Answer: 6") as server:
        cfg = tmp_path / "eval_cibench.py"
        cfg.write_text(CIBENCH.format(url=server.url, mode="every"), encoding="utf-8")
        _figure_notebook(folder, with_figure=True)
        refused = _promptweave("skimage", "run", "-w", str(tmp_path / "work"), "--no-progress", str(cfg),
                               cwd=tmp_path)
        _figure_notebook(folder, with_figure=False)
        # lint makes run's checks: the agent runs the model's code, so it lints with the flag run needs
        plain = _promptweave("skimage", "lint", *CODE_EXEC, str(cfg), cwd=tmp_path)
        assert server.total_received == 0
    text = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "[PW640]" in text and "Traceback" not in text, text
    assert "'skimage'" in text and "pip install 'promptweave[cibench]'" in text and "CIBenchEvaluator" in text, text
    assert "[PW640]" not in plain.stdout + plain.stderr and plain.returncode == 0, plain.stdout + plain.stderr
