"""The multi-turn and image examples build the prompts their comments promise."""
from __future__ import annotations

import ast
import base64
import json
import warnings
from pathlib import Path

import pytest

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.errors import PromptweaveWarning
from promptweave.forms.turn_loop import MultiTurnGenInferencer, scripted, turn_prompts
from promptweave.prompt.multimodal import part_label
from promptweave.render.chat import to_openai_messages

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> dict:
    """Evaluate one of our own example configs; imported class names stand for themselves."""
    tree = ast.parse((EXAMPLES / name).read_text())
    env: dict = {}
    body = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            env.update({a.asname or a.name: a.name for a in node.names})
        else:
            body.append(node)
    exec(compile(ast.Module(body, []), name, "exec"), env)  # our own file, data only
    return env


def rows_of(ds: dict) -> list[dict]:
    return [json.loads(line) for line in (EXAMPLES / ds["path"]).read_text().splitlines() if line.strip()]


def specs(name: str):
    env = load_example(name)
    (ds_cfg,) = env["datasets"]
    rows = rows_of(ds_cfg)
    ds = DatasetSpec.from_config(ds_cfg, train=rows, test=rows, file=name)
    return ds, {m["abbr"]: ModelSpec.from_config(m, file=name) for m in env["models"]}


def test_multiturn_example_gives_each_turn_its_prompt_for_both_models():
    ds, models = specs("multiturn_chat.py")
    views = turn_prompts(ds, models["local-chatml"], 1)
    assert len(views) == 3
    assert views[0].rendered == ("<|im_start|>system\nAnswer briefly and exactly.<|im_end|>\n"
                                 "<|im_start|>user\nName a primary colour.<|im_end|>\n<|im_start|>assistant\n")
    assert "<model reply to turn 0>" in views[1].rendered
    received: list = []
    (res,) = MultiTurnGenInferencer(ds, models["api-chat"], scripted(["Red", "Blue", "Purple"], received)).run([1])
    assert [t.prediction for t in res.turns] == [t.gold for t in res.turns] == ["Red", "Blue", "Purple"]
    assert to_openai_messages(received[2])[:4] == [
        {"role": "system", "content": "Answer briefly and exactly."},
        {"role": "user", "content": "Name a primary colour."},
        {"role": "assistant", "content": "Red"},
        {"role": "user", "content": "Name another one, different from your first answer."}]


def test_image_example_sends_the_bundled_png_and_labels_it():
    ds, models = specs("image_qa.py")
    msgs = PromptBuilder(ds, models["vision-api"]).build(0).rendered
    (msg,) = msgs
    image, text = msg["prompt"]
    assert text == {"type": "text", "text": "What colour is the square? Answer in a few words."}
    url = image["image_url"]["url"]
    png = (EXAMPLES / "data/images/red_square.png").read_bytes()
    assert base64.b64decode(url.split(",", 1)[1]) == png
    assert part_label(image) == f"[image: image/png (base64, {len(png)} B)]"
    # the second row puts its text first: part order follows the content column
    second = PromptBuilder(ds, models["vision-api"]).build(1).rendered[0]["prompt"]
    assert [p["type"] for p in second] == ["text", "image_url"]


def test_image_example_for_a_text_only_model_uses_the_placeholder():
    ds, models = specs("image_qa.py")
    with pytest.warns(PromptweaveWarning, match="placeholder"):
        text = PromptBuilder(ds, models["text-only-lm"]).build(0).rendered
    assert text == ("<|im_start|>user\n<image>\nWhat colour is the square? Answer in a few words.<|im_end|>\n"
                    "<|im_start|>assistant\n")


def test_examples_load_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = [specs("multiturn_chat.py")]
        loaded.append(specs("image_qa.py"))
    assert all(ds is not None and models for ds, models in loaded)
