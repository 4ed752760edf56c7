"""The backend contract is declared, not probed: ``infer/`` and ``forms/`` never ask a model what it has with
``getattr`` / ``hasattr``; every method and attribute they use on a model is part of ``models.base.Backend``; the
real backends declare their capabilities; the reference backend (``models/scripted.py``) runs every kind of call."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import ModelError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller, is_remote, model_identity
from promptweave.models.base import Backend, Capabilities, GenerationParams, capabilities_of
from promptweave.models.scripted import ScriptedModel, char_logprob

SRC = Path(__file__).resolve().parents[2] / "src" / "promptweave"
MODEL_NAMES = {"model", "self.model", "lm", "backend"}  # how infer/ and forms/ name the backend they call
# what the agent form reads from its *prompt-side* model (engine.spec.ModelSpec), not from a backend
PROMPT_SIDE = {"kind", "meta"}


def _runner_files() -> list[Path]:
    return sorted([*(SRC / "infer").glob("*.py"), *(SRC / "forms").glob("*.py")])


def test_no_getattr_or_hasattr_probes_of_the_model() -> None:
    probes = []
    for path in _runner_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and node.args):
                target = ast.unparse(node.args[0])
                if "model" in target or target in MODEL_NAMES:
                    probes.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []


def test_every_model_attribute_the_runner_uses_is_declared() -> None:
    used: dict[str, str] = {}
    for path in _runner_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and ast.unparse(node.value) in MODEL_NAMES:
                used.setdefault(node.attr, f"{path.relative_to(SRC)}:{node.lineno}")
    assert {"generate", "chat", "token_logprobs", "run_batch", "plan_calls"} <= set(used)  # the test sees them
    undeclared = {a: where for a, where in used.items() if not hasattr(Backend, a) and a not in PROMPT_SIDE}
    assert undeclared == {}


def test_the_real_backends_declare_their_capabilities() -> None:
    from promptweave.models.hf import HFModel
    from promptweave.models.openai_compat import OpenAICompatModel
    from promptweave.models.vllm_backend import VLLMModel

    assert capabilities_of(HFModel).planned_batches and capabilities_of(HFModel).local_lm
    assert capabilities_of(VLLMModel).planned_batches and not capabilities_of(VLLMModel).remote
    chat = OpenAICompatModel("http://127.0.0.1:9/v1", "m", endpoint="chat")
    text = OpenAICompatModel("http://127.0.0.1:9/v1", "m", endpoint="completions")
    assert is_remote(chat) and capabilities_of(chat).chat_endpoint and not capabilities_of(text).chat_endpoint
    for cls in (HFModel, VLLMModel, OpenAICompatModel):
        for name, value in vars(Capabilities()).items():
            if getattr(capabilities_of(cls if cls is not OpenAICompatModel else chat), name) is not value:
                assert hasattr(cls, {"remote": "run_batch", "result_bursts": "run_batch", "chat_endpoint": "run_batch",
                                     "tool_calls": "run_batch", "planned_batches": "plan_calls",
                                     "grouped_scores": "token_logprobs_groups", "token_counts": "count_tokens",
                                     "next_token": "next_token_logprobs", "local_lm": "forward",
                                     "identity_memo": "identity_fingerprint"}[name]), (cls.__name__, name)


def test_an_undeclared_test_double_has_no_optional_capability() -> None:
    class Echo:
        name = "echo"

        def chat(self, conversations, params):
            return [c[-1]["content"] for c in conversations]

    assert capabilities_of(Echo()) == Capabilities() and not is_remote(Echo())
    assert model_identity(Echo()) == {"name": "echo", "class": "Echo"}


def test_a_base_backend_refuses_what_it_does_not_do_with_a_typed_error() -> None:
    with pytest.raises(ModelError, match=r"\[PW400\] model: this backend has no chat"):
        Backend().chat([[{"role": "user", "content": "x"}]], GenerationParams())


def test_the_reference_backend_answers_every_kind_through_the_cache(tmp_path) -> None:
    model = ScriptedModel(answer=lambda text: text.upper(), batch_size=2)
    params = GenerationParams(max_out_len=5)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        caller = CachedCaller(model, cache)
        assert caller.call("generate", ["abc", "hello world", "abc"], params) == ["ABC", "HELLO", "ABC"]
        assert caller.call("chat", [[{"role": "user", "content": "hi"}]], params) == ["HI"]
        assert caller.call("score", ["xyz"]) == [[char_logprob("y"), char_logprob("z")]]
        sent = len(model.sent)
        again = CachedCaller(model, cache)
        assert again.call("generate", ["abc", "hello world"], params) == ["ABC", "HELLO"]
    assert len(model.sent) == sent == 4  # the repeat and the rerun came from the cache
    assert model.count_tokens("abcd") == 4 and model_identity(model)["backend"] == "scripted"


def test_a_script_that_runs_out_is_a_typed_error() -> None:
    model = ScriptedModel(["A"])
    assert model.generate(["q"], GenerationParams()) == ["A"]
    with pytest.raises(ModelError, match="the script has 1 replies"):
        model.generate(["q"], GenerationParams())


@settings(deadline=None, max_examples=50)
@given(st.lists(st.text(max_size=20), max_size=6))
def test_scripted_scores_are_one_per_token_after_the_first(texts) -> None:
    model = ScriptedModel()
    got = model.token_logprobs(texts)
    assert [len(v) for v in got] == [max(0, model.count_tokens(t) - 1) for t in texts]
    assert all(v < 0 for scores in got for v in scores)
