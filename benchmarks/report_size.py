"""The HTML report of a large run: file size, build time, and time to first rows in headless Chromium.

Writes a synthetic work dir (N rows of 3-shot chat prompts, like the bundled arithmetic example,
plus an N-row perplexity task with 4 labels), builds the report, then opens it in headless
Chromium (Debian's chromium + chromium-driver) and reads the page's own timing of when the first
rows were on screen, then times a search over all rows and a page flip.

    PYTHONPATH=src python benchmarks/report_size.py [--rows 100000]
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path


def make_workdir(root: Path, n: int) -> Path:
    rnd = random.Random(0)
    names = ["Ada", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana"]
    things = ["apples", "pencils", "stamps", "marbles", "coins", "books"]

    def q(i: int) -> tuple[str, int]:
        a, b = rnd.randint(2, 60), rnd.randint(1, 9)
        text = (f"Question: {names[i % 8]} has {a} {things[i % 6]} and buys {b} more. How many "
                f"{things[i % 6]} does {names[i % 8]} have now?\nAnswer with a number.")
        return text, a + b

    shots = [q(k) for k in range(3)]
    (root / "predictions" / "chat").mkdir(parents=True)
    (root / "results" / "chat").mkdir(parents=True)
    correct = 0
    with open(root / "predictions" / "chat" / "arith.jsonl", "w") as fh:
        for i in range(n):
            text, gold = q(i + 3)
            prompt = [m for s, a in shots for m in ({"role": "HUMAN", "prompt": s}, {"role": "BOT", "prompt": str(a)})]
            prompt.append({"role": "HUMAN", "prompt": text})
            pred = gold if rnd.random() < 0.6 else gold + rnd.randint(1, 3)
            correct += pred == gold
            fh.write(json.dumps({"index": i, "prompt": prompt, "shot_ids": [0, 1, 2],
                                 "output": f"The answer is {pred}.", "prediction": str(pred), "gold": str(gold),
                                 "correct": pred == gold}) + "\n")
    (root / "results" / "chat" / "arith.json").write_text(json.dumps(
        {"dataset": "arith", "model": "chat", "mode": "gen", "status": "done", "rows": n,
         "metrics": {"accuracy": 100 * correct / n}}))
    with open(root / "predictions" / "chat" / "mc.jsonl", "w") as fh:
        ok = 0
        for i in range(n):
            text, _ = q(i)
            ppl = {lab: round(rnd.uniform(1, 3), 4) for lab in "ABCD"}
            pred = min(ppl, key=ppl.get)
            gold = "ABCD"[i % 4]
            ok += pred == gold
            fh.write(json.dumps({"index": i, "prompt": {lab: f"{text}\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer: {lab}"
                                                        for lab in "ABCD"},
                                 "shot_ids": [], "output": ppl, "prediction": pred, "gold": gold,
                                 "correct": pred == gold}) + "\n")
    (root / "results" / "chat" / "mc.json").write_text(json.dumps(
        {"dataset": "mc", "model": "chat", "mode": "ppl", "status": "done", "rows": n,
         "metrics": {"accuracy": 100 * ok / n}}))
    return root


def open_in_browser(html: Path) -> dict:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    profile = tempfile.mkdtemp(prefix="pw-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=shutil.which("chromedriver")))
    try:
        drv.set_page_load_timeout(300)
        t0 = time.perf_counter()
        drv.get(html.resolve().as_uri())
        WebDriverWait(drv, 300, poll_frequency=0.05).until(
            lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        wall = time.perf_counter() - t0
        page_ms = drv.execute_script("return window.PW_TIMING.rowsShown")
        search_ms = drv.execute_script("""
            const t = performance.now(); const s = document.getElementById('search'); s.value = 'marbles';
            s.dispatchEvent(new Event('input')); return new Promise(r => setTimeout(() => r(performance.now() - t - 150), 160));""")
        flip_ms = drv.execute_script("const t = performance.now(); document.getElementById('next').click(); "
                                     "return performance.now() - t;")
        heap = drv.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : null")
        return {"first_rows_ms": round(page_ms), "wall_s": round(wall, 2), "search_ms": round(search_ms),
                "page_flip_ms": round(flip_ms, 1), "js_heap_mb": round(heap / 1e6) if heap else None}
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    from promptweave.report import write_report

    with tempfile.TemporaryDirectory() as tmp:
        wd = make_workdir(Path(tmp) / "work", args.rows)
        raw = sum(f.stat().st_size for f in (wd / "predictions").rglob("*.jsonl"))
        t0 = time.perf_counter()
        out = write_report([wd], Path(tmp) / "report.html")
        build = time.perf_counter() - t0
        size = out.stat().st_size
        print(f"rows: {args.rows} per task × 2 tasks; predictions {raw / 1e6:.1f} MB; report {size / 1e6:.1f} MB "
              f"({size / raw:.2f}× the predictions); built in {build:.1f}s")
        if shutil.which("chromium") and shutil.which("chromedriver"):
            print("browser:", open_in_browser(out))
        else:
            print("browser: skipped (no chromium/chromedriver)", file=sys.stderr)


if __name__ == "__main__":
    main()
