"""Fuzz the command line: mutated configs, templates, data files and LVE checker records, run in-process.

Each case writes a mutated input into a fresh folder and runs a command on it through
``promptweave.cli.app.run_cli`` (the real entry point, in this process). A case ends
``ok`` (exit 0), ``typed error`` (any other exit with one ``error: [PWnnn]`` line or a
typed finding), ``raw traceback`` (exit 5, ``[PW001] internal error``: an exception that
no code turned into a typed error) or ``hang`` (past the per-case limit).

    python benchmarks/fuzz.py --cases 5000 [--seed 0] [--show 5]

The mutations are driven by a ``Chooser`` so the suite's Hypothesis test
(``tests/cli/test_errors_fuzz.py``) drives the same code with its own strategies.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import shutil
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LVE_EXAMPLE = ROOT / "examples" / "lve" / "arithmetic_carry"

# --------------------------------------------------------------------------- what mutations draw from
NASTY_TEXT = ["", "{", "}", "{}", "{question}", "{Question}", "{0}", "{0.__class__}", "{q!r}", "{q:>99999}",
              "%s", "%(q)s", "</E>", "<|im_end|>", "\ud800", "\x00", "\ufeff", "\r\n", "é", "🙂", "a" * 5000,
              "{{", "}}", "{q[0]}", "{q.x}", "\\", "'", '"', "\n", "None", "lambda r: r", "${HOME}",
              "../../etc/passwd", "/dev/zero", "HUMAN", "BOT", "SYSTEM", "round", "begin", "end"]
NASTY_VALUES: list[Any] = [None, True, False, 0, -1, 1, 2**63, -(2**70), 1.5, float("nan"), float("inf"), "", [],
                           {}, [None], {"": None}, "x", [1, [2, [3]]], {"type": "X"}, {"role": "HUMAN"},
                           {"round": []}, {"round": [{"role": "HUMAN"}]}, 10**30]


class Chooser:
    """Random choices for a mutation; ``random.Random``-backed here, Hypothesis-backed in the test."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def text(self) -> str:
        parts = [self.choice(NASTY_TEXT) for _ in range(self.integer(1, 3))]
        if self.integer(0, 3) == 0:
            parts.append("".join(chr(self.integer(0, 0x10FFFF)) for _ in range(self.integer(1, 8))))
        return "".join(parts)

    def value(self) -> Any:
        kind = self.integer(0, 3)
        if kind == 0:
            return self.text()
        if kind == 1:
            return copy.deepcopy(self.choice(NASTY_VALUES))
        if kind == 2:
            return [self.value() for _ in range(self.integer(0, 2))]
        return {self.text()[:8]: self.value() for _ in range(self.integer(0, 2))}


# --------------------------------------------------------------------------- the seeds
def base_config() -> dict[str, Any]:
    """A valid JSON config: a gen dataset with 2 fixed shots and a PPL dataset, inline rows, one API model."""
    rows = [{"question": f"q{i}", "A": "a", "B": "b", "answer": "AB"[i % 2]} for i in range(6)]
    q = "Question: {question}\nA. {A}\nB. {B}\nAnswer:"
    return {
        "datasets": [
            {"abbr": "gen", "rows": rows,
             "reader_cfg": {"input_columns": ["question", "A", "B"], "output_column": "answer",
                            "train_range": "[0:2]", "test_range": "[2:]"},
             "infer_cfg": {
                 "ice_template": {"type": "PromptTemplate", "ice_token": "</E>",
                                  "template": {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": q},
                                                                         {"role": "BOT", "prompt": "{answer}"}]}},
                 "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1]},
                 "inferencer": {"type": "GenInferencer", "max_out_len": 8}},
             "eval_cfg": {"evaluator": {"type": "AccEvaluator"},
                          "pred_postprocessor": {"type": "first_option_postprocess", "options": "AB"}}},
            {"abbr": "ppl", "path": "data.jsonl",
             "reader_cfg": {"input_columns": ["question", "A", "B"], "output_column": "answer"},
             "infer_cfg": {
                 "prompt_template": {"type": "PromptTemplate", "template": {
                     lab: {"round": [{"role": "HUMAN", "prompt": q}, {"role": "BOT", "prompt": lab}]}
                     for lab in "AB"}},
                 "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "PPLInferencer"}},
             "eval_cfg": {"evaluator": {"type": "AccEvaluator"}}},
        ],
        "models": [{"abbr": "api", "type": "OpenAICompatModel", "kind": "api", "path": "m",
                    "base_url": "http://127.0.0.1:9/v1", "key": "EMPTY",
                    "meta_template": {"begin": {"role": "SYSTEM", "api_role": "SYSTEM", "prompt": "Be brief."},
                                      "round": [{"role": "HUMAN", "api_role": "HUMAN"},
                                                {"role": "BOT", "api_role": "BOT", "generate": True}]}}],
    }


def base_rows() -> list[dict[str, Any]]:
    return [{"question": f"p{i}", "A": "x", "B": "y", "answer": "AB"[i % 2]} for i in range(4)]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj: Any, path: tuple, value: Any, *, delete: bool = False) -> Any:
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


def mutate_tree(tree: Any, ch: Chooser, *, strings_only: bool = False) -> Any:
    """Replace, delete or add at a random place (``strings_only``: edit a string, as in a template)."""
    paths = _paths(tree)
    if strings_only:
        paths = [p for p in paths if isinstance(_get(tree, p), str)] or paths
    path = ch.choice(paths)
    op = ch.integer(0, 3)
    current = _get(tree, path)
    if strings_only and isinstance(current, str):
        pos = ch.integer(0, len(current))
        return _set(tree, path, current[:pos] + ch.text() + current[pos + ch.integer(0, 3):])
    if op == 0 and path:
        return _set(tree, path, None, delete=True)
    if op == 1 and isinstance(current, dict):
        current[ch.text()[:12] or "k"] = ch.value()
        return tree
    if op == 2 and isinstance(current, list) and current:
        current.append(copy.deepcopy(ch.choice(current)))
        return tree
    return _set(tree, path, ch.value())


def _get(obj: Any, path: tuple) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def _data_bytes(ch: Chooser) -> bytes:
    """The PPL dataset's file: valid rows, then byte-level trouble."""
    lines = [json.dumps(r) for r in base_rows()]
    op = ch.integer(0, 9)
    if op == 0:
        return b"\xef\xbb\xbf" + "\n".join(lines).encode()  # BOM
    if op == 1:
        return "\r\n".join(lines).encode()  # CRLF
    if op == 2:
        return ("\n".join(lines) + "\n" + json.dumps({"question": ch.text(), "A": ch.value(), "B": "y",
                                                      "answer": ch.value()})).encode("utf-8", "surrogatepass")
    if op == 3:
        return bytes(ch.integer(0, 255) for _ in range(ch.integer(0, 64)))  # garbage bytes
    if op == 4:
        i = ch.integer(0, len(lines) - 1)
        lines[i] = lines[i][: ch.integer(0, len(lines[i]))]  # a truncated line
        return "\n".join(lines).encode()
    if op == 5:
        return "\n".join(lines + [json.dumps(ch.value())]).encode("utf-8", "surrogatepass")
    if op == 6:
        rows = base_rows()
        mutate_tree(rows, ch)
        return "\n".join(json.dumps(r) for r in rows).encode("utf-8", "surrogatepass")
    if op == 7:
        return b""
    if op == 8:
        return ("\n".join(lines) + "\n").encode() + b"\x00\xff\xfe"
    return json.dumps({"question": "x" * 300_000, "A": "\x00", "B": "\ud800", "answer": "A"}).encode(
        "utf-8", "surrogatepass")


# --------------------------------------------------------------------------- cases
def config_case(ch: Chooser, folder: Path) -> list[str]:
    cfg = base_config()
    for _ in range(ch.integer(1, 3)):
        cfg = mutate_tree(cfg, ch)
    (folder / "data.jsonl").write_text("\n".join(json.dumps(r) for r in base_rows()))
    path = folder / ch.choice(["c.json", "c.yaml"])
    if path.suffix == ".json":
        path.write_bytes(json.dumps(cfg, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    else:
        import yaml

        try:
            path.write_text(yaml.safe_dump(cfg, allow_unicode=False), encoding="utf-8")
        except Exception:  # noqa: BLE001 - a value YAML cannot write: fall back to JSON syntax (also YAML)
            path.write_bytes(json.dumps(cfg, default=str).encode())
    return [ch.choice(["view", "lint", "run"]), str(path)] + _extra(ch, folder)


def template_case(ch: Chooser, folder: Path) -> list[str]:
    cfg = base_config()
    for ds in cfg["datasets"]:
        for _ in range(ch.integer(1, 2)):
            mutate_tree(ds["infer_cfg"], ch, strings_only=True)
    for _ in range(ch.integer(0, 1)):
        mutate_tree(cfg["models"][0]["meta_template"], ch, strings_only=bool(ch.integer(0, 1)))
    (folder / "data.jsonl").write_text("\n".join(json.dumps(r) for r in base_rows()))
    path = folder / "c.json"
    path.write_bytes(json.dumps(cfg, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    return [ch.choice(["view", "lint", "run"]), str(path)] + _extra(ch, folder)


def data_case(ch: Chooser, folder: Path) -> list[str]:
    cfg = base_config()
    (folder / "data.jsonl").write_bytes(_data_bytes(ch))
    path = folder / "c.json"
    path.write_text(json.dumps(cfg))
    return [ch.choice(["view", "lint", "run"]), str(path), "-d", "ppl"] + _extra(ch, folder)


def python_config_case(ch: Chooser, folder: Path) -> list[str]:
    """A .py config (read safely, as data) with a mutated line."""
    src = ("x = dict(abbr='gen', rows=[dict(q='a', answer='A')],\n"
           "    reader_cfg=dict(input_columns=['q'], output_column='answer'),\n"
           "    infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='Q: {q}'),\n"
           "                   retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer')))\n"
           "datasets = [x]\n"
           "models = [dict(abbr='m', type='OpenAICompatModel', kind='api', path='m', base_url='http://127.0.0.1:9')]\n")
    lines = src.splitlines()
    i = ch.integer(0, len(lines) - 1)
    pos = ch.integer(0, len(lines[i]))
    snippet = ch.choice(["(", ")", "[", "]", "{", "}", ",", "'", "\"", "=", "**", "lambda: 0", "__import__('os')",
                         "9**9**9", "[0]*10**10", "'a'*10**10", ".__class__", "1/0", "\\", "#", "import os\n",
                         "x.__globals__", "f'{x}'", "'{0.__init__}'.format(x)", "'%s' % (x,)", ch.text()])
    lines[i] = lines[i][:pos] + snippet + lines[i][pos:]
    path = folder / "c.py"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    return [ch.choice(["view", "lint", "run"]), str(path), "--dry-run"][: 2 + ch.integer(0, 1)] \
        if False else [ch.choice(["view", "lint"]), str(path)]


def lve_case(ch: Chooser, folder: Path) -> list[str]:
    dst = folder / "t"
    shutil.copytree(LVE_EXAMPLE, dst)
    target = ch.integer(0, 2)
    if target == 0:
        test = json.loads((dst / "test.json").read_text())
        for _ in range(ch.integer(1, 2)):
            mutate_tree(test, ch, strings_only=bool(ch.integer(0, 1)))
        (dst / "test.json").write_bytes(json.dumps(test, ensure_ascii=False, default=str).encode(
            "utf-8", "surrogatepass"))
    elif target == 1:
        recs = [json.loads(x) for x in (dst / "instances" / "instances.jsonl").read_text().splitlines()]
        for _ in range(ch.integer(1, 2)):
            mutate_tree(recs, ch)
        (dst / "instances" / "instances.jsonl").write_bytes(
            "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in recs).encode("utf-8", "surrogatepass"))
    else:
        text = (dst / "test.prompt").read_text()
        pos = ch.integer(0, len(text))
        (dst / "test.prompt").write_bytes((text[:pos] + ch.text() + text[pos:]).encode("utf-8", "surrogatepass"))
    cmd = ch.choice(["replay", "show"])
    return ["lve", cmd, str(dst)] + (["--args", "a=1", "--args", "b=" + ch.text()[:6]] if cmd == "show"
                                      and ch.integer(0, 1) else [])


def _extra(ch: Chooser, folder: Path) -> list[str]:
    return ch.choice([[], ["-n", "2"], ["--json"]]) if False else []


KINDS: dict[str, Callable[[Chooser, Path], list[str]]] = {
    "config": config_case, "template": template_case, "data": data_case, "pyconfig": python_config_case,
    "lve": lve_case}


# --------------------------------------------------------------------------- issue 22: report, tokenizer folders, corpora
HOSTILE_JINJA = ["{{ 'a' * N }}", "{{ N ** N }}", "{% for i in range(N) %}X{% endfor %}", "{{ range(N)|list }}",
                 "{% for i in range(N) %}{% for j in range(N) %}{% endfor %}{% endfor %}", "{{ 'x'.center(N) }}",
                 "{{ ('ab' * N)|join('cd') }}", "{{ '%0Nd' % 3 }}", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(N) }}",
                 "{% include 'x' %}", "{% import 'x' as y %}", "{% extends 'x' %}", "{{ lipsum(N) }}",
                 "{{ messages[0].content * N }}", "{{ ''.__class__ }}", "{{ raise_exception('no') }}", "{% if %}",
                 "{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}", "{{ N // 0 }}",
                 "{% set ns = namespace(s='x') %}{% for i in range(N) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"]
HUGE_NUMBERS = ["9" * 400, "1e999", "-" + "9" * 5000, "NaN", "Infinity", "1" + "0" * 310]


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def report_case(ch: Chooser, folder: Path) -> list[str]:
    """A work dir as a run leaves it, then edited: odd metrics, deep or long lines, links out of the work dir."""
    work = folder / "w"
    (work / "results" / "m").mkdir(parents=True)
    (work / "predictions" / "m").mkdir(parents=True)
    outside = folder / "outside.jsonl"
    outside.write_text(json.dumps({"index": 0, "prompt": "OUTSIDE-ROW", "prediction": "x"}) + "\n")
    result: dict[str, Any] = {"model": "m", "dataset": "d", "mode": "gen", "status": "done", "rows": 2,
                              "metrics": {"accuracy": 50.0}}
    for _ in range(ch.integer(0, 2)):
        mutate_tree(result, ch)
    text = json.dumps(result, ensure_ascii=False, default=str)
    op = ch.integer(0, 5)
    if op == 0:
        text = text.replace("50.0", ch.choice(HUGE_NUMBERS))
    elif op == 1:
        text = _deep(ch.choice([10, 990, 5000, 200_000]))
    elif op == 2 and isinstance(result, dict):
        result["predictions"] = ch.choice([str(outside), "/etc/passwd", "../outside.jsonl", "/dev/zero", ""])
        text = json.dumps(result, default=str)
    (work / "results" / "m" / "d.json").write_bytes(text.encode("utf-8", "surrogatepass"))
    pred = work / "predictions" / "m" / "d.jsonl"
    rows = [json.dumps({"index": i, "prompt": f"p{i}", "prediction": "A", "gold": "A", "correct": True})
            for i in range(2)]
    op = ch.integer(0, 6)
    if op == 0:
        pred.symlink_to(pred)  # a link loop
    elif op == 1:
        pred.symlink_to(outside)
    elif op == 2:
        pred.write_text(_deep(ch.choice([990, 200_000])) + "\n" + rows[0])
    elif op == 3:
        pred.write_text(rows[0] + "\n" + '{"index": 1, "score": ' + ch.choice(HUGE_NUMBERS) + "}")
    elif op == 4:
        pred.write_bytes(_data_bytes(ch))
    else:
        pred.write_text("\n".join(rows))
    if ch.integer(0, 2) == 0:
        (work / "summary.json").write_bytes(json.dumps([{"model": "m", "dataset": "d", "metrics": ch.value(),
                                                         "predictions_path": ch.choice([str(outside), str(pred)])}],
                                                       default=str).encode("utf-8", "surrogatepass"))
    return ["report", str(work)] + ch.choice([[], ["--csv", "-"], ["--markdown", "-"], [str(work)]])


def tokenizer_case(ch: Chooser, folder: Path) -> list[str]:
    """``view`` of a chat-template model whose tokenizer folder is hostile (template, links, file contents)."""
    tok = folder / "tok"
    tok.mkdir()
    secret = folder / "outside.txt"
    secret.write_text("OUTSIDE-FILE {{ messages }}")
    template = "".join(ch.choice(HOSTILE_JINJA).replace("N", ch.choice(["0", "3", "100000", "10**12", "(9**9)"]))
                       for _ in range(ch.integer(1, 3)))
    config = {"chat_template": template, "eos_token": ch.value(), "bos_token": "<s>"}
    (tok / "tokenizer_config.json").write_bytes(json.dumps(config, default=str).encode("utf-8", "surrogatepass"))
    op = ch.integer(0, 5)
    name = ch.choice(["chat_template.jinja", "chat_template.json", "special_tokens_map.json", "tokenizer_config.json"])
    if op == 0:
        (tok / name).unlink(missing_ok=True)
        (tok / name).symlink_to(secret)
    elif op == 1:
        (tok / name).unlink(missing_ok=True)
        (tok / name).symlink_to(tok / name)
    elif op == 2:
        (tok / name).write_bytes(bytes(ch.integer(0, 255) for _ in range(ch.integer(0, 64))))
    elif op == 3:
        (tok / name).write_text(_deep(ch.choice([990, 200_000])))
    cfg = base_config()
    cfg["datasets"] = cfg["datasets"][:1]
    cfg["models"] = [{"abbr": "hf", "type": "HuggingFacewithChatTemplate", "path": str(tok)}]
    path = folder / "c.json"
    path.write_text(json.dumps(cfg))
    return ["view", str(path)]


def conformance_case(ch: Chooser, folder: Path) -> list[str]:
    """A corpus file: mutated cases, corrupt or cut gzip, deep JSON, garbage."""
    import gzip

    case: Any = {"suite": "opencompass", "kind": "icl", "id": "fuzz-1", "expected": {"prompts": ["x"]}}
    for _ in range(ch.integer(0, 2)):
        case = mutate_tree(case, ch)
    lines = [json.dumps(case, default=str).encode("utf-8", "surrogatepass")]
    op = ch.integer(0, 4)
    if op == 0:
        lines.append(_deep(ch.choice([990, 200_000])).encode())
    elif op == 1:
        lines.append(json.dumps(ch.value(), default=str).encode("utf-8", "surrogatepass"))
    elif op == 2:
        lines.append(bytes(ch.integer(0, 255) for _ in range(ch.integer(0, 64))))
    data = gzip.compress(b"\n".join(lines), mtime=0)
    cut = ch.integer(0, 3)
    if cut == 0:
        data = data[: ch.integer(0, len(data))]
    elif cut == 1:
        i = ch.integer(0, len(data) - 1)
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
    path = folder / "corpus.jsonl.gz"
    path.write_bytes(data)
    return ["conformance", str(path)]


KINDS.update({"report": report_case, "tokenizer": tokenizer_case, "conformance": conformance_case})


# --------------------------------------------------------------------------- hostile work dirs and caches
OUTSIDE_MARK = "OUTSIDE-UNTOUCHED"
SPREAD_MARKUP = ["<meta http-equiv=refresh content='0;url=https://example.invalid'>", "<a href='x'>fake</a>",
                 "<script>alert(1)</script>", "'><b>", '"><i>', "<svg onload=1>"]


def _spread_value(ch: Chooser) -> Any:
    return ch.choice([ch.choice(SPREAD_MARKUP), ch.value(), float("nan"), float("inf"), 10**400, -1, 2**70, None,
                      {"k": ch.choice(SPREAD_MARKUP)}, [ch.choice(SPREAD_MARKUP)], True])


def _spread_json(ch: Chooser) -> Any:
    point = {"variant": 0, "score": 50.0, "description": "the config's template as written", "status": "done"}
    fig = {"dataset": "d", "model": "m", "metric": "accuracy", "points": [point, dict(point, variant=1)],
           "min": 40.0, "max": 50.0, "spread": 10.0, "mean": 45.0, "std": 5.0, "ci95": [40.0, 50.0], "pss": 0.1,
           "best": 0, "worst": 1}
    data: dict[str, Any] = {"config": "c.py", "seed": 0, "n": 2, "figures": [fig],
                            "rankings": [{"dataset": "d", "top_changes": 0,
                                          "per_variant": [{"variant": 0, "ranking": ["m", "m2"]}]}],
                            "search": [{"dataset": "d", "model": "m", "best": 0, "worst": 1, "calls_used": 3,
                                        "budget": 9, "stopped": "budget", "best_interval": [1, 2]}]}
    for _ in range(ch.integer(1, 4)):  # values replaced by markup, odd types and numbers, keys removed
        paths = _paths(data)
        where = ch.choice(paths) if paths else ()
        if ch.integer(0, 3) == 0:
            _set(data, where, None, delete=True)
        else:
            _set(data, where, _spread_value(ch))
    shape = ch.integer(0, 7)
    if shape == 0:
        return [data]
    if shape == 1:
        return _deep(ch.choice([50, 990, 200_000]))
    if shape == 2:
        return {}
    return data


def workdir_case(ch: Chooser, folder: Path) -> list[str]:
    """``report`` on a work dir written by hand: spread.json of any shape, odd token counts, a cache of odd rows
    or no database at all, and links planted where the report writes (``report.html.tmp``, a variant folder)
    and where it reads (``run.json``, results). Files outside hold :data:`OUTSIDE_MARK` and must keep it."""
    import sqlite3

    work = folder / "w"
    outside = folder / "outside"
    (outside / "variant").mkdir(parents=True)
    for name in ("target.html", "run.json", "result.json", "variant/report.html"):
        (outside / name).write_text(OUTSIDE_MARK)
    (work / "results" / "m").mkdir(parents=True)
    (work / "predictions" / "m").mkdir(parents=True)
    tokens = {"prompt": ch.choice([10, "lots", float("inf"), None, 10**400]),
              "output": ch.choice([3, "lots", float("nan"), None, -5, [1]])}
    result = {"model": "m", "dataset": "d", "mode": "gen", "status": "done", "rows": 1,
              "metrics": {"accuracy": 50.0}, "tokens": tokens}
    (work / "results" / "m" / "d.json").write_text(json.dumps(result))
    usage = {"prompt_tokens": ch.choice([1, "Infinity", float("inf"), "x", None, 10**400]),
             "completion_tokens": ch.choice([1, float("nan"), {}, None])}
    row = {"index": 0, "prompt": "p", "prediction": "A", "gold": "A", "correct": True, "usage": usage}
    (work / "predictions" / "m" / "d.jsonl").write_text(json.dumps(row) + "\n")
    spread = _spread_json(ch)
    if ch.integer(0, 2):
        (work / "spread.json").write_text(spread if isinstance(spread, str) else json.dumps(spread, default=str))
    cache = ch.integer(0, 4)
    if cache == 0:
        (work / "cache.sqlite").write_bytes(b"not a database at all" * 50)
    elif cache in (1, 2):
        con = sqlite3.connect(work / "cache.sqlite")
        if cache == 1:
            con.execute("CREATE TABLE responses (key TEXT, model TEXT, kind TEXT, request TEXT, response TEXT, "
                        "created REAL)")
            con.execute("INSERT INTO responses VALUES ('k', 'm', 'gen', '{}', ?, ?)",
                        (ch.choice(['{"usage": {"prompt_tokens": 1e999}}', "[[[", '{"usage": "x"}']),
                         ch.choice([1e300, "yesterday", -1e300, None, 1.0])))
        else:
            con.execute("CREATE TABLE other (x)")
        con.commit()
        con.close()
    for _ in range(ch.integer(0, 3)):  # links planted where report writes or reads
        plant = ch.integer(0, 4)
        if plant == 0:
            (work / "report.html.tmp").unlink(missing_ok=True)
            (work / "report.html.tmp").symlink_to(outside / "target.html")
        elif plant == 1 and not (work / "variants").exists():
            (work / "variants").mkdir()
            (work / "variants" / "1").symlink_to(outside / "variant")
            (outside / "variant" / "results").mkdir(exist_ok=True)
        elif plant == 2 and not (work / "run.json").is_symlink():
            (work / "run.json").symlink_to(outside / "run.json")
        elif plant == 3 and not (work / "results" / "m" / "x.json").is_symlink():
            (work / "results" / "m" / "x.json").symlink_to(outside / "result.json")
        elif plant == 4:
            (work / "report.html").unlink(missing_ok=True)
            (work / "report.html").symlink_to(outside / "target.html")
    return ["report", str(work)]


def outside_touched(folder: Path) -> list[str]:
    """Files outside the work dir of a :func:`workdir_case` that no longer hold their mark."""
    outside = folder / "outside"
    return [str(p) for p in outside.rglob("*") if p.is_file() and p.read_text(errors="replace") != OUTSIDE_MARK]


KINDS["workdir"] = workdir_case


def command_args(argv: list[str], folder: Path) -> list[str]:
    """View / lint as given; ``run`` only plans (``--dry-run``) so no model is needed."""
    if argv[0] == "view":
        return argv + ["-n", "2"]
    if argv[0] == "run":
        return argv + ["-w", str(folder / "w"), "--dry-run", "--no-progress"]
    return argv


# --------------------------------------------------------------------------- running a case
class Hang(Exception):
    pass


def run_case(argv: list[str], limit_s: float = 20.0) -> tuple[str, int, str]:
    """(outcome, exit status, stderr's last line) of one command run in-process."""
    from promptweave.cli.app import run_cli

    hung = []

    def alarm(signum: int, frame: Any) -> None:
        hung.append(True)
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = run_cli(argv)
    except Hang:
        return "hang", -1, ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    last = (err.getvalue().strip().splitlines() or [""])[-1]
    if hung:  # the handler turned the alarm into an exit status: still a hang
        return "hang", code, last
    if code == 5:
        return "raw traceback", code, last
    if code == 0:
        return "ok", code, last
    return "typed error", code, last


def one(ch: Chooser, kind: str) -> tuple[str, list[str], int, str]:
    folder = Path(tempfile.mkdtemp(prefix="pwfuzz-"))
    try:
        argv = command_args(KINDS[kind](ch, folder), folder)
        outcome, code, last = run_case(argv)
        if outside_touched(folder):
            outcome = "wrote outside"
        return outcome, argv, code, last
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="Print this many raw tracebacks / hangs.")
    ap.add_argument("--kinds", default=",".join(KINDS), help="Comma-separated case kinds (default: all).")
    args = ap.parse_args()
    kinds_run = [k for k in args.kinds.split(",") if k in KINDS] or list(KINDS)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    rng = random.Random(args.seed)
    counts: Counter = Counter()
    per_kind: dict[str, Counter] = {k: Counter() for k in kinds_run}
    bad: list[tuple] = []
    start = time.perf_counter()
    for i in range(args.cases):
        kind = kinds_run[i % len(kinds_run)]
        outcome, argv, _code, last = one(Chooser(rng), kind)
        counts[outcome] += 1
        per_kind[kind][outcome] += 1
        if outcome in ("raw traceback", "hang", "wrote outside"):
            bad.append((kind, argv, last))
    took = time.perf_counter() - start
    print(f"{args.cases} cases in {took:.0f}s (seed {args.seed})")
    for name in ("ok", "typed error", "raw traceback", "hang", "wrote outside"):
        print(f"  {name:14s} {counts[name]:6d}  ({100.0 * counts[name] / max(args.cases, 1):.1f}%)")
    for kind, c in per_kind.items():
        print(f"  {kind:9s} " + "  ".join(f"{n}: {c[n]}" for n in ("ok", "typed error", "raw traceback", "hang")))
    kinds = Counter(b[2].split(": internal error: ")[-1].split(":")[0] for b in bad)
    for k, n in kinds.most_common():
        print(f"  raw: {n:5d} {k}")
    for kind, argv, last in bad[: args.show]:
        print(f"--- {kind}: {' '.join(argv)}\n    {last}")


if __name__ == "__main__":
    main()
