"""OpenCompass's shipped Game of 24 config (``ToTInferencer``) run end to end against the loopback stand-in server.

The stand-in model plays Game of 24 by rule (propose: the product and the sum of the first two numbers; value:
``sure`` when the numbers can still make 24, found by brute force here; the final step: the puzzle's known
solution). The test walks the reference's breadth-first search on its own (``expected_search`` below, written
from the reference's rules) to know every prompt the search must send, in order, and every row's answer, then
checks promptweave's requests, predictions and ``acc score`` against it.
"""
from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import PromptweaveWarning

pytestmark = pytest.mark.skipif(importlib.util.find_spec("opencompass") is None,
                                reason="needs the reference's config tree and prompt texts: "
                                       "pip install --no-deps opencompass==0.5.4 (.ci/run does)")

PUZZLES = ["1 2 3 4", "2 3 4 1", "1 1 1 1", "3 3 8 8", "4 6 1 1"]
SOLUTIONS = {"1 2 3 4": "1 * 2 * 3 * 4", "2 3 4 1": "(2 * 3) * 4 * 1", "3 3 8 8": "8 / (3 - 8 / 3)",
             "4 6 1 1": "4 * 6 * 1 * 1"}
CONFIG = '''from mmengine.config import read_base

with read_base():
    from opencompass.configs.datasets.game24.game24_gen import game24_datasets

datasets = [dict(game24_datasets[0], path="./24.csv")]
models = [dict(abbr="stub", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=1, max_out_len=64, backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
'''


def _texts() -> dict[str, str]:
    """The reference's prompt constants, read here with a literal evaluation of its module."""
    src = Path(importlib.util.find_spec("opencompass").submodule_search_locations[0]) / "datasets" / "game24.py"
    out = {}
    for node in ast.parse(src.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str):
            out[node.targets[0].id] = node.value.value
    return out


def _value(expr: str) -> Fraction:
    """Our own arithmetic strings only (digits, spaces, + - * / and parentheses)."""
    assert re.fullmatch(r"[\d\s+\-*/().]+", expr), expr
    return eval(re.sub(r"(\d+)", r"Fraction(\1)", expr), {"Fraction": Fraction})  # noqa: S307 - test's own text


def _solvable(nums: list[Fraction]) -> bool:
    if len(nums) == 1:
        return nums[0] == 24
    for i, j in itertools.permutations(range(len(nums)), 2):
        rest = [n for k, n in enumerate(nums) if k not in (i, j)]
        a, b = nums[i], nums[j]
        for c in {a + b, a - b, a * b} | ({a / b} if b else set()):
            if _solvable(rest + [c]):
                return True
    return False


def _fmt(n: int) -> str:
    return str(n)


def model(body: dict) -> str:
    """The stand-in model's reply to one ToT prompt."""
    text = body["messages"][-1]["content"]
    if text.endswith("Judge:"):
        x = re.findall(r"Input: (.*)\n", text)[-1]
        answer = re.findall(r"Answer: (.*)\n", text)[-1]
        expr = answer.split("=")[0]
        ok = sorted(re.findall(r"\d+", expr)) == sorted(re.findall(r"\d+", x)) and _value(expr) == 24
        return "sure" if ok else "impossible"
    if text.endswith("Possible next steps:\n"):
        nums = [int(n) for n in re.findall(r"Input: (.*)\n", text)[-1].split()]
        if len(nums) < 2:
            return ""
        a, b, rest = nums[0], nums[1], nums[2:]
        return "\n".join(f"{a} {op} {b} = {v} (left: {' '.join(_fmt(n) for n in sorted(rest + [v]))})"
                         for op, v in (("*", a * b), ("+", a + b)))
    if "Steps:" in text and re.search(r"left: 24\)\n$", text):  # all numbers used: the final answer
        x = re.findall(r"Input: (.*)\n", text)[-1]
        return f"Answer: {SOLUTIONS.get(x, x.replace(' ', ' + '))} = 24"
    nums = [Fraction(n) for n in text.strip().split("\n")[-1].split()]  # the value prompt's last line
    return "sure" if _solvable(nums) else "impossible"


def expected_search(x: str, texts: dict[str, str], cache: dict[str, float], sent: list[str],
                    n_select: int = 5) -> list[str]:
    """The reference's search for one puzzle (propose / value / greedy, 4 steps); appends each prompt it sends."""

    def ask(prompt: str) -> str:
        sent.append(prompt)
        return model({"messages": [{"role": "user", "content": prompt}]})

    def numbers(y: str) -> str:
        return y.strip().split("\n")[-1].split("left: ")[-1].split(")")[0]

    ys = [""]
    for _ in range(4):
        new_ys = []
        for y in ys:
            if numbers(y or x) == "24":
                prompt = texts["cot_prompt"].format(input=x) + "Steps:" + y
            else:
                prompt = texts["propose_prompt"].format(input=numbers(y or x))
            new_ys += [y + line + "\n" for line in ask(prompt).split("\n")]
        values, seen = [], set()
        for y in new_ys:
            if y in seen:
                values.append(0)
                continue
            seen.add(y)
            last = y.strip().split("\n")[-1]
            if "left: " not in last:
                vp = texts["value_last_step_prompt"].format(input=x, answer=last.lower().replace("answer: ", ""))
            else:
                vp = texts["value_prompt"].format(input=numbers(y))
            if vp not in cache:
                reply = ask(vp)
                if len(y.strip().split("\n")) == 4 and "answer" not in y.lower():
                    cache[vp] = 0
                else:
                    names = [reply.split("\n")[-1]]
                    cache[vp] = sum(v * names.count(n) for n, v in (("impossible", 0.001), ("likely", 1),
                                                                   ("sure", 20)))
            values.append(cache[vp])
        order = sorted(range(len(new_ys)), key=lambda i: values[i], reverse=True)[:n_select]
        ys = [new_ys[i] for i in order]
    return ys


def _write_data(tmp_path: Path) -> None:
    lines = ["Rank,Puzzles,AMT (s),Solved rate"]
    lines += [f"{i},9 9 9 9,1,1" for i in range(900)]  # the reference keeps puzzles 900-904 only
    lines += [f"{900 + i},{p},1,1" for i, p in enumerate(PUZZLES)]
    (tmp_path / "24.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run(tmp_path: Path, url: str) -> tuple[object, Path]:
    (tmp_path / "eval_24.py").write_text(CONFIG.format(url=url), encoding="utf-8")
    work = tmp_path / "work"
    res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_24.py"), "-w", str(work), "--no-progress"])
    return res, work


def test_game24_search_sends_the_references_prompts_and_scores_the_best_answer(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write_data(tmp_path)
    texts = _texts()
    cache: dict[str, float] = {}
    sent: list[str] = []
    answers = [expected_search(x, texts, cache, sent) for x in PUZZLES]
    unique = list(dict.fromkeys(sent))  # a repeated request is answered from the response cache
    with StubServer(answer=model) as srv:
        res, work = _run(tmp_path, srv.url)
        assert res.exit_code == 0, res.output
        got = [e["body"]["messages"] for e in srv.log]
    assert all(len(m) == 1 and m[0]["role"] == "user" for m in got)  # a plain prompt, as the reference sends it
    assert [m[0]["content"] for m in got] == unique
    preds = [json.loads(line) for line in (work / "predictions" / "stub" / "game24.jsonl").read_text().splitlines()]
    assert [p["output"] for p in preds] == answers
    best = [a[0].strip().split("\n")[-1].lower().replace("answer: ", "").split("=")[0] for a in answers]
    assert [p["prediction"] for p in preds] == best
    right = [sorted(re.findall(r"\d+", b)) == sorted(x.split()) and _value(b) == 24 for b, x in zip(best, PUZZLES, strict=True)]
    assert right == [True, True, False, False, True]  # 1 1 1 1 has no answer; 3 3 8 8 needs a division
    result = json.loads((work / "results" / "stub" / "game24.json").read_text())
    assert result["metrics"] == {"acc score": sum(right) / len(right)}
    assert [p["correct"] for p in preds] == right


def test_a_rerun_sends_nothing_and_gives_the_same_answers(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write_data(tmp_path)
    with StubServer(answer=model) as srv:
        res, work = _run(tmp_path, srv.url)
        assert res.exit_code == 0, res.output
        first = (work / "predictions" / "stub" / "game24.jsonl").read_text()
        n = srv.total_received
        res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_24.py"), "-w", str(work), "--no-progress"])
        assert res.exit_code == 0, res.output
        assert srv.total_received == n
    assert (work / "predictions" / "stub" / "game24.jsonl").read_text() == first


def test_a_failed_request_fails_its_row_only(tmp_path, monkeypatch) -> None:
    from openai_stub import Fault

    monkeypatch.chdir(tmp_path)
    _write_data(tmp_path)

    def refuse(key: str, attempt: int, body: dict):
        return Fault("status", 400) if "Input: 1 1 1 1\n" in body["messages"][-1]["content"] else None

    with StubServer(answer=model, faults=refuse) as srv:
        with pytest.warns(PromptweaveWarning, match=r"game24: 1 row\(s\) failed and were scored as wrong"):
            res, work = _run(tmp_path, srv.url)
    assert res.exit_code == 3, res.output  # the CLI's "some rows failed" status
    preds = [json.loads(line) for line in (work / "predictions" / "stub" / "game24.jsonl").read_text().splitlines()]
    assert ["error" in p for p in preds] == [False, False, True, False, False]
    assert preds[2]["error"]["kind"].startswith("http_400") and preds[2]["output"] is None
    result = json.loads((work / "results" / "stub" / "game24.json").read_text())
    assert result["failed_rows"] == 1 and result["metrics"] == {"acc score": 3 / 5}
