"""Long inputs stay near-linear: ``spread`` on a ~400 KB template with 1, 2 and 3 variants, the format
grammar on a template doubled in size, and the compare page's prompt diff on prompts doubled in size.

    PYTHONPATH=src python benchmarks/long_inputs.py

Each figure is a ratio against the smallest case measured beside it in this process (CPU time, the median
of 3): linear work gives about 2 for a doubled size and about 1.5 / 2 for 2 / 3 variants against 1 (variant
0 is the template as written, so it costs little); quadratic work gives 4 per doubling.
"""
from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path


def _cpu(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def template(blocks: int) -> str:
    block = "Question {}: what is shown?\nContext: a few words of context here\nA. {{A}}\nB. {{B}}\nC. {{C}}\n"
    return "".join(block.format(i % 9) for i in range(blocks)) + "Question: {question}\nAnswer:"


def spread_config(folder: Path, blocks: int) -> Path:
    rows = [{"question": f"q{i}", "A": "a", "B": "b", "C": "c", "answer": "A"} for i in range(3)]
    (folder / "rows.json").write_text(json.dumps(rows))
    cfg = folder / "long.py"
    cfg.write_text(
        "datasets = [dict(abbr='long', path='rows.json', reader_cfg=dict(input_columns=['question', 'A', 'B', 'C'], "
        "output_column='answer'), infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template="
        f"{template(blocks)!r}), retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer', "
        "max_out_len=4)), eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]\n"
        "models = [dict(abbr='api', type='OpenAISDK', path='m', openai_api_base='http://127.0.0.1:9/v1')]\n")
    return cfg


def spread_dry_run(cfg: Path, work: Path, n: int) -> None:
    from promptweave.cli.app import run_cli
    from promptweave.spread.grammar import clear_cache

    clear_cache()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = run_cli(["spread", str(cfg), "-w", str(work), "-n", str(n), "--dry-run", "--no-progress"])
    assert code == 0, code


def main() -> None:
    from promptweave.report.compare import prompt_diff
    from promptweave.spread.grammar import Format, apply_text, clear_cache

    print("case                                   seconds   ratio")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = spread_config(folder, 4800)
        print(f"(template: {len(template(4800)) / 1000:.0f} KB)")
        base = None
        for n in (1, 2, 3):
            t = _cpu(lambda n=n: spread_dry_run(cfg, folder / f"w{n}", n))
            base = base or t
            print(f"spread --dry-run, {n} variant(s)            {t:7.3f}  {t / base:6.2f}")
    fmt = Format(separator=" - ", spacing=" || ", casing="upper", label="({})", choice_sep="; ", cue="Response")
    base = None
    for blocks in (1200, 2400, 4800):
        text = template(blocks)

        def one(text=text) -> None:
            clear_cache()
            apply_text(text, fmt)
        t = _cpu(one)
        base = base or t
        print(f"grammar, {len(text) / 1000:4.0f} KB template              {t:7.3f}  {t / base:6.2f}")
    base = None
    for blocks in (1800, 3600, 7200):
        a = "\n".join(f"Question: item {i % 40}\nA. one\nB. two\nAnswer: {'AB'[i % 2]}" for i in range(blocks))
        b = a.replace("Question: item 20\n", "Question: changed\n", 1)
        t = _cpu(lambda a=a, b=b: prompt_diff(a, b))
        base = base or t
        print(f"compare diff, 2 × {len(a) / 1000:4.0f} KB prompts           {t:7.3f}  {t / base:6.2f}")


if __name__ == "__main__":
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    main()
