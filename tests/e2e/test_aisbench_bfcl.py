"""AISBench's BFCL simple category end to end as function calling: the shipped dataset config, stand-in data in
the BFCL layout (questions + ``possible_answer/``), a loopback server that answers with ``tool_calls``."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e.harness import AISBENCH, predictions, result, run_config

FUNCS = [
    {"name": "math.area", "description": "Area of a shape.",
     "parameters": {"type": "dict", "required": ["base", "height"],
                    "properties": {"base": {"type": "integer", "description": "base"},
                                   "height": {"type": "float", "description": "height"},
                                   "unit": {"type": "string", "description": "unit"}}}},
]
# (question marker, ground truth values) and what the stub model calls for each row
GOLD = [{"base": [10], "height": [5.0], "unit": ["cm", ""]},
        {"base": [3], "height": [4.0], "unit": ["m", ""]},
        {"base": [7], "height": [2.5], "unit": [""]},
        {"base": [1], "height": [1.0], "unit": ["km"]}]
CALLS = [("math_area", {"base": 10, "height": 5, "unit": "CM"}),   # int for float and case-folded string: ok
         ("math_area", {"base": 4, "height": 4.0}),                 # wrong base
         ("math_area", {"base": 7, "height": 2.5}),                 # unit optional: ok
         ("area", {"base": 1, "height": 1.0, "unit": "km"})]        # wrong name


def _write(root):
    root.mkdir(parents=True)
    (root / "possible_answer").mkdir()
    q = [{"id": f"simple_{i}", "question": [[{"role": "user", "content": f"[q{i}] What is the area?"}]],
          "function": FUNCS} for i in range(len(GOLD))]
    a = [{"id": f"simple_{i}", "ground_truth": [{"math.area": g}]} for i, g in enumerate(GOLD)]
    (root / "BFCL_v3_simple.json").write_text("\n".join(json.dumps(x) for x in q) + "\n", encoding="utf-8")
    (root / "possible_answer" / "BFCL_v3_simple.json").write_text("\n".join(json.dumps(x) for x in a) + "\n",
                                                                  encoding="utf-8")


def _independent_score() -> float:
    ok = 0
    for (name, args), gold in zip(CALLS, GOLD, strict=True):
        good = name == "math_area" and all(k in args or "" in v for k, v in gold.items())
        for k, v in args.items():
            want = gold[k]
            good = good and (str(v).lower() in [str(w).lower() for w in want] if isinstance(v, str)
                             else float(v) in [float(w) for w in want if w != ""])
        ok += good
    return ok / len(CALLS)


def test_bfcl_simple_function_calling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "bfcl_data"
    _write(data)

    def tool_calls(body):
        text = json.dumps(body["messages"])
        i = int(text.split("[q", 1)[1].split("]", 1)[0])
        return [CALLS[i]]

    with StubServer(tool_calls=tool_calls) as server:
        res, work = run_config(tmp_path, server.url, "BFCL.BFCL_gen_simple", "bfcl_datasets",
                               select=f"[dict(d, path={str(data)!r}) for d in bfcl_datasets]", package=AISBENCH)
        bodies = [e["body"] for e in server.log]
    assert res.exit_code == 0, res.output
    # the request carries the row's function as an OpenAI tool, BFCL types mapped to JSON-schema ones
    assert len(bodies) == len(GOLD) and all("tools" in b for b in bodies)
    fn = bodies[0]["tools"][0]["function"]
    assert fn["name"] == "math_area" and fn["parameters"]["type"] == "object"
    assert fn["parameters"]["properties"]["height"]["type"] == "number"
    assert fn["description"].endswith("Note that the provided function is in Python 3 syntax.")
    assert bodies[0]["messages"][-1]["content"].startswith("[q")
    # the prediction holds the calls the model returned, arguments as JSON text
    preds = sorted(predictions(work, "BFCL-v3-simple"), key=lambda r: r["index"])
    assert [next(iter(p["prediction"][0])) for p in preds] == [c[0] for c in CALLS]
    assert json.loads(preds[1]["prediction"][0]["math_area"]) == CALLS[1][1]
    metrics = result(work, "BFCL-v3-simple")["metrics"]
    assert metrics["accuracy"] == pytest.approx(_independent_score())
    assert _independent_score() == pytest.approx(0.5)
