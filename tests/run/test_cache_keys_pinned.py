"""Cache keys pinned per inference form: a work dir made before a refactor of the forms is rerun without a request.

Each form runs a small config end to end (``promptweave run``) against the loopback stand-in server (API and
``/completions`` echo scoring) or a real tiny transformers model (the corpus-loss forms), and the keys of the
response cache it leaves are hashed. The expected hashes were computed on the code before the forms moved behind
their registry (issue 23); a change to a request, its kind or its parameters for any form changes its hash, and so
would make every earlier work dir send its requests again. The models' identities are fixed here (the stand-in's
port and the tiny model's folder change from run to run); everything else is the real key.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app

_META = ('meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"), '
         'dict(role="BOT", api_role="BOT", generate=True)])')
API = ('models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", '
       'key="EMPTY", batch_size=2, backoff_base=0, max_retries=1, ' + _META + ')]\n')
LM = ('models = [dict(abbr="lm", type="OpenAICompatModel", kind="lm", base_url="{url}", model="served", '
      'key="EMPTY", batch_size=2, backoff_base=0, max_retries=1)]\n')
TINY = ('models = [dict(abbr="tiny", type="HuggingFaceBaseModel", path="{tiny}", batch_size=2, '
        'model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]\n')

QA = [{"question": f"What is {i} plus {i}?", "answer": "ABCD"[i % 4], "cont": " A"} for i in range(4)]


def _dataset(inferencer: str, template: str, *, evaluator: str = "AccEvaluator", output: str = '"answer"',
             columns: str = '["question", "cont"]', path: str = "rows.jsonl", extra: str = "",
             retriever: str = 'dict(type="ZeroRetriever")') -> str:
    return f'''
datasets = [dict(
    abbr="d", path="{path}", {extra}
    reader_cfg=dict(input_columns={columns}, output_column={output}),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template={template}),
                   retriever={retriever}, inferencer={inferencer}),
    eval_cfg=dict(evaluator=dict(type="{evaluator}")),
)]
'''


_DIALOGUE = 'dict(round=[dict(role="HUMAN", prompt="Q: {question}"), dict(role="BOT", prompt="{answer}")])'
_LABELS = '{"A": "Q: {question} A", "B": "Q: {question} B"}'
_FEW = ('dict(type="PromptTemplate", template=dict(begin="</E>", round=[dict(role="HUMAN", prompt="Q: {question}"),'
        ' dict(role="BOT", prompt="")]), ice_token="</E>")')
_ICE = 'dict(round=[dict(role="HUMAN", prompt="Q: {question}"), dict(role="BOT", prompt="{answer}")])'

CHAT_ROWS = [{"dialogue": [{"role": "user", "content": f"Say {w}."}, {"role": "assistant", "content": w},
                           {"role": "user", "content": "Again."}, {"role": "assistant", "content": w}],
              "ref": w} for w in ("yes", "no")]
TURN_ROWS = [{"question": ["3 plus 2?", "Minus 1?"], "answer": ["5", "4"]},
             {"question": ["Name a colour.", "Another?"], "answer": ["Red", "Blue"]}]
FN = {"name": "geo.find", "description": "Find a place.",
      "parameters": {"type": "dict", "required": ["q"], "properties": {"q": {"type": "string", "description": "q"}}}}
FC_ROWS = [{"id": f"simple_{i}", "question": json.dumps([[{"role": "user", "content": f"find {i}"}]]),
            "function": json.dumps([FN]), "answer": "x"} for i in range(2)]
CORPUS = [{"text": "Paris is the capital of France.", "label": [[0, 5]]},
          {"text": "The quick brown fox jumps over the lazy dog.", "label": [[4, 9, 1]]}]
COMPRESSION = [{"content": "def f(x):\n    return x + 1\n" * 3}]

# form -> (model, rows file name, rows, datasets text, extra run args)
CASES: dict[str, tuple[str, str, list, str, tuple[str, ...]]] = {
    "gen": (API, "rows.jsonl", QA, _dataset('dict(type="GenInferencer", max_out_len=16)', _DIALOGUE), ()),
    "gen-fewshot": (API, "rows.jsonl", QA, _dataset(
        'dict(type="GenInferencer", max_out_len=16)', _DIALOGUE,
        retriever='dict(type="FixKRetriever", fix_id_list=[0, 1])').replace(
        f"prompt_template=dict(type=\"PromptTemplate\", template={_DIALOGUE})",
        f"ice_template=dict(type=\"PromptTemplate\", template={_ICE}), prompt_template={_FEW}"), ()),
    "ppl": (LM, "rows.jsonl", QA, _dataset('dict(type="PPLInferencer")', _LABELS), ()),
    "clp": (TINY, "rows.jsonl", QA, _dataset('dict(type="CLPInferencer")', '"Q: {question} Answer:"')
            .replace('type="CLPInferencer"', 'type="CLPInferencer", choices=["A", "B"]'), ()),
    "ll": (TINY, "rows.jsonl", QA, _dataset('dict(type="LLInferencer")', '{"A": "Q: {question} A.{cont}", "B": "Q: {question} B.{cont}"}'), ()),
    "ppl_only": (LM, "rows.jsonl", QA, _dataset('dict(type="PPLOnlyInferencer")', '"Q: {question}"',
                                                output="None"), ()),
    "sc": (API, "rows.jsonl", QA, _dataset('dict(type="SCInferencer", sc_size=3, max_out_len=16, '
                                           'generation_kwargs=dict(temperature=0.7))', _DIALOGUE), ()),
    "multiturn": (API, "rows.jsonl", TURN_ROWS, _dataset(
        'dict(type="MultiTurnGenInferencer", infer_mode="every", max_out_len=8)',
        'dict(round=[dict(role="HUMAN", prompt="{question}"), dict(role="BOT", prompt="{answer}")])',
        columns='["question", "answer"]').replace('type="PromptTemplate", template=dict(round',
                                                  'type="MultiTurnPromptTemplate", template=dict(round'), ()),
    "chat": (API, "rows.jsonl", CHAT_ROWS, _dataset(
        'dict(type="ChatInferencer", infer_mode="every", max_out_len=16)', '"""{dialogue}"""',
        columns='["dialogue"]', output='"ref"'), ()),
    "attack": (API, "rows.jsonl", QA, _dataset(
        'dict(type="AttackInferencer", original_prompt_list=["Answer.", "Reply."], adv_key="adv", max_out_len=8)',
        'dict(round=[dict(role="HUMAN", prompt="{adv} {question}")])'), ()),
    "function_call": (API, "rows.jsonl", FC_ROWS, _dataset(
        'dict(type="BFCLV3FunctionCallInferencer", max_out_len=16)', '"{question}"',
        columns='["question", "function", "id"]'), ()),
    "inference_ppl": (TINY, "data/inference_ppl/cn-reasoning-val.jsonl", CORPUS, _dataset(
        'dict(type="InferencePPLOnlyInferencer")', '"{text}"', evaluator="AverageInferencePPLEvaluator",
        output="None", columns='["text"]', path="./data/inference_ppl",
        extra='type="InferencePPLDataset", name="cn-reasoning-val", samples=None,'), ()),
    "sw_ce_loss": (TINY, "data/llm-compression/python.jsonl", COMPRESSION, _dataset(
        'dict(type="SWCELossInferencer", block_size=12, stride=6)', '"{content}"', evaluator="BPCEvaluator",
        output="None", columns='["content"]', path="./data/llm-compression",
        extra='type="LLMCompressionDataset", name="python", samples=None,'), ()),
}

GAME24 = ("from mmengine.config import read_base\n\nwith read_base():\n"
          "    from opencompass.configs.datasets.game24.game24_gen import game24_datasets\n\n"
          "datasets = [dict(game24_datasets[0], path='./24.csv')]\n")
PUZZLES = "Rank,Puzzles,AMT (s),Solved rate\n" + "".join(f"{i},9 9 9 9,1,1\n" for i in range(900)) + \
    "900,1 2 3 4,1,1\n901,4 6 1 1,1,1\n"
CIBENCH = '''
cibench = dict(
    abbr="cibench_generation/pandas", type="CIBenchDataset", internet_check=False,
    path="data/cibench_dataset/cibench_generation/pandas",
    reader_cfg=dict(input_columns=["questions"], output_column="references", train_split="test", test_split="test"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="""{questions}"""),
                   retriever=dict(type="ZeroRetriever"), inferencer=dict(type="AgentInferencer", infer_mode="every")),
    eval_cfg=dict(evaluator=dict(type="CIBenchEvaluator"), pred_role="BOT"),
)
datasets = [cibench]
'''
NOTEBOOK = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["Print six times seven.\n\nThought: easy"]},
                      {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["print(6 * 7)"],
                       "outputs": [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
# forms whose data is a file of another shape: (model, file, its text, datasets text, extra run args, needs)
FILE_CASES = {
    "tot": (API, "24.csv", PUZZLES, GAME24, (), "opencompass"),
    "agent": (API, "data/cibench_dataset/cibench_generation/pandas/experiment_0.ipynb", json.dumps(NOTEBOOK),
              CIBENCH, ("--allow-code-exec",), None),
}

# sha256 of the sorted cache keys each form's run leaves, computed before the refactor (issue 23)
PINNED = {
    "attack": "f22857417a91564f38812e312a032629ba87cd90e6a0337662469a3101cc66e3",
    "chat": "0c3dee108cc9b4534070647f645b480e0cb8afc70b609f5bed82c7424de8732c",
    "clp": "e18625d94168cd836339efa8c8d3ae26a593af344296f840ead19c3690b3f755",
    "function_call": "65c1043d1107ac9157d779d703210f17c49a94b6e872ec22a5c65feda8fdccf6",
    "gen": "de76323879a2703c58b18af4dd81247426703686387187a760527f7f2acccc9a",
    "gen-fewshot": "0d91c861d2d0b8b06f7a80bc9ed30dbca925b63684f7331e54266e5a0acf17e3",
    "inference_ppl": "6b1109ce80127a0f45fb859808f1192aa19d8b444a5cd815dc33c4624c474579",
    "ll": "e6747223c4111cf542c2cf4056eb5c59fc56f70030c929d21655a1c30aa2e6d7",
    "multiturn": "c691a237a2fa92021d5a83d322dc26ee936628e12c595dc0289b5193f6f38271",
    "ppl": "00d4a11817feb347c3578a94aa425eeaa5179631400415052ee5118c03a63ae5",
    "ppl_only": "5b5cd784191d9591be47082dfe3d7dfadd35d1503cba2836d74dd74da877c173",
    "sc": "007b9b32eea955269fac2e4db4821b87a1efe1ab61766fda6aa0cd80bbf05d5c",
    "sw_ce_loss": "9b3d7f12c5bc81f85cee0e028e803a62f08727ad6730780d40fbbeef20308b4e",
    "tot": "5b468470c86948ae38a3336d0f7bcbfa2ddab6e02933f21d5798fdd343e743ef",
    "agent": "b10fd0cf8c30f5d1b5d07c5447a325dab1a3111820d9fe9e3c3a17f45f1ab8be",
}


@pytest.fixture
def fixed_identities(monkeypatch):
    from promptweave.models.hf import HFModel
    from promptweave.models.openai_compat import OpenAICompatModel

    def api_identity(self):
        return {"backend": "openai", "url": "http://stand-in/v1", "model": self.model, "revision": self.revision,
                "endpoint": self.endpoint, "extra_body": self.extra_body}

    monkeypatch.setattr(OpenAICompatModel, "identity", api_identity)
    monkeypatch.setattr(HFModel, "identity", lambda self: {"backend": "hf", "path": "tiny", "dtype": self.dtype_name})


def _keys(work: Path) -> list[str]:
    with sqlite3.connect(work / "cache.sqlite") as db:
        return sorted(k for (k,) in db.execute("SELECT key FROM responses"))


@pytest.mark.parametrize("form", sorted(CASES) + sorted(FILE_CASES))
def test_cache_keys_are_those_of_earlier_runs(form, tmp_path, fixed_identities, request) -> None:
    if form in FILE_CASES:
        model, rows_file, text, datasets, args, needs = FILE_CASES[form]
        if needs is not None and importlib.util.find_spec(needs) is None:
            pytest.skip(f"needs the reference's config tree: pip install --no-deps {needs}")
    else:
        model, rows_file, rows, datasets, args = CASES[form]
        text = "".join(json.dumps(r) + "\n" for r in rows)
    target = tmp_path / rows_file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    tiny = request.getfixturevalue("tiny_model_dir") if "{tiny}" in model else ""
    with StubServer() as srv:
        (tmp_path / "eval_pin.py").write_text(model.format(url=srv.url, tiny=tiny) + datasets)
        work = tmp_path / "work"
        res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_pin.py"), "-w", str(work), "--no-progress",
                                       "--no-report", *args])
        assert res.exit_code == 0, res.output
        keys = _keys(work)
        assert keys, "the run stored no answer"
        sent = srv.total_received
        # the rerun of the same work dir sends nothing
        res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_pin.py"), "-w", str(work), "--no-progress",
                                       "--no-report", *args])
        assert res.exit_code == 0, res.output
        assert srv.total_received == sent
    digest = hashlib.sha256("\n".join(keys).encode()).hexdigest()
    assert digest == PINNED.get(form), f"{form}: {len(keys)} keys, sha256 {digest}"
    shutil.rmtree(work)
