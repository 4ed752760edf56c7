"""The report of a real run, opened in headless Chromium: scores, drill-down, filters, console, screenshot."""
from __future__ import annotations

import json
from pathlib import Path

from promptweave.report import load_workdir, score_table


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _open(browser, html: Path):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(html.resolve().as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.find_elements("css selector", "#row-body tr"))
    return WebDriverWait


def _pick_task(browser, dataset: str, model: str):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    sel = Select(browser.find_element("id", "task-select"))
    option = next(o for o in sel.options if o.text.startswith(f"{dataset} × {model} "))
    value = option.get_attribute("value")
    sel.select_by_value(value)
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.body.dataset.task") == value)



def _click_row(browser, i: int, body: str = "row-body") -> None:
    """Click row ``i`` once the table has settled: a filter or search may re-render it under our feet."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def click(d):
        d.find_elements("css selector", f"#{body} tr")[i].click()
        return True

    WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException, IndexError)).until(click)


def _cells(browser, col: int) -> list[str]:
    """The text of one column of every shown row, read in one step (no element handles to go stale)."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#row-body tr'))"
        ".map(tr => (tr.querySelectorAll('td')[arguments[0]] || {}).textContent || '')", col)


def _console_errors(browser) -> list:
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def test_report_in_browser(browser, workdir, tmp_path):
    html = workdir / "report.html"
    assert html.is_file(), "run writes the report at the end"
    _open(browser, html)

    # the score table shows the run's numbers, as the summarizer would
    table = browser.find_element("id", "score-table")
    got = [[c.text for c in tr.find_elements("css selector", "th,td")]
           for tr in table.find_elements("css selector", "tr")]
    assert got == score_table(load_workdir(workdir))
    res = json.loads((workdir / "results" / "served-chat" / "science_mc.json").read_text())
    assert [f"{res['metrics']['accuracy']:.2f}"] == [r[4] for r in got if r[0] == "science_mc"]

    # drill-down: a chat row shows the exact messages sent
    _pick_task(browser, "arithmetic", "served-chat")
    rows = _rows(workdir / "predictions" / "served-chat" / "arithmetic.jsonl")
    _click_row(browser, 2)
    detail = browser.find_element("id", "detail")
    assert json.loads(browser.execute_script("return document.getElementById('detail-prompt-json').textContent"))\
        == rows[2]["prompt"]
    bodies = [e.get_attribute("textContent") for e in detail.find_elements("css selector", ".msg-body")]
    assert bodies == [m["prompt"] for m in rows[2]["prompt"]]
    assert str(rows[2]["shot_ids"]).replace(" ", "") in detail.text.replace(" ", "").replace("\n", "")

    # a text model's row shows the exact text sent
    _pick_task(browser, "science_mc", "served-text")
    rows = _rows(workdir / "predictions" / "served-text" / "science_mc.jsonl")
    _click_row(browser, 1)
    pre = browser.find_element("css selector", "#detail pre.prompt-text")
    assert pre.get_attribute("textContent") == rows[1]["prompt"]
    assert rows[1]["output"] in browser.find_element("id", "detail").get_attribute("textContent")

    # filters: wrong only, by gold label, search
    _pick_task(browser, "science_mc", "served-chat")
    rows = _rows(workdir / "predictions" / "served-chat" / "science_mc.jsonl")
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.find_element("id", "wrong-only").click()
    n_wrong = sum(1 for r in rows if not r["correct"])
    WebDriverWait(browser, 10).until(lambda d: len(_cells(d, 2)) == n_wrong)
    assert all("wrong" in c for c in _cells(browser, 2))
    browser.find_element("id", "wrong-only").click()
    WebDriverWait(browser, 10).until(lambda d: len(_cells(d, 2)) == min(len(rows), 50))

    gold = rows[0]["gold"]
    Select(browser.find_element("id", "gold-filter")).select_by_value(gold)
    n_gold = sum(1 for r in rows if r["gold"] == gold)
    WebDriverWait(browser, 10).until(lambda d: len(_cells(d, 2)) == n_gold)
    Select(browser.find_element("id", "gold-filter")).select_by_value("")
    word = rows[3]["prompt"][0]["prompt"].split("\n")[0][10:30]
    browser.find_element("id", "search").send_keys(word)

    want = sum(1 for r in rows if word.lower() in json.dumps(r["prompt"], ensure_ascii=False).lower()
               or word.lower() in str(r["output"]).lower())
    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "match-count").text.startswith(f"{want} of"))
    browser.find_element("id", "search").clear()

    # ppl: every label's score and prompt
    _pick_task(browser, "science_ppl", "served-text")
    rows = _rows(workdir / "predictions" / "served-text" / "science_ppl.jsonl")
    browser.execute_script("document.getElementById('search').value=''; "
                           "document.getElementById('search').dispatchEvent(new Event('input'))")
    WebDriverWait(browser, 10).until(lambda d: d.find_element("id", "match-count").text.startswith(f"{len(rows)} of"))
    _click_row(browser, 0)
    cells = [td.text for td in browser.find_elements("css selector", "#detail table.ppl td")]
    for score in rows[0]["output"].values():
        assert str(score) in cells
    pre = browser.find_elements("css selector", "#detail details.label-prompt pre.prompt-text")
    assert [p.get_attribute("textContent") for p in pre] == list(rows[0]["prompt"].values())

    shot = tmp_path / "report.png"
    browser.execute_script("document.getElementById('detail').scrollIntoView()")
    browser.find_element("id", "detail").screenshot(str(shot))  # the test run's screenshot of the drill-down
    browser.save_screenshot(str(tmp_path / "page.png"))
    assert shot.stat().st_size > 10_000
    assert _console_errors(browser) == []


def test_compare_in_browser(browser, workdir, workdir_b, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait
    from typer.testing import CliRunner

    from promptweave.cli.app import app

    out = tmp_path / "compare.html"
    res = CliRunner().invoke(app, ["report", str(workdir), str(workdir_b), "-o", str(out)])
    assert res.exit_code == 0, res.output
    browser.get(out.as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.find_elements("css selector", "#change-body tr"))
    delta_rows = [[c.text for c in tr.find_elements("css selector", "td")]
                  for tr in browser.find_elements("css selector", "#delta-table tbody tr")]
    a = json.loads((workdir / "results" / "served-chat" / "science_mc.json").read_text())["metrics"]["accuracy"]
    b = json.loads((workdir_b / "results" / "served-chat" / "science_mc.json").read_text())["metrics"]["accuracy"]
    row = next(r for r in delta_rows if r[:3] == ["science_mc", "served-chat", "accuracy"])
    assert row[3:6] == [f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}"]
    browser.find_elements("css selector", "#change-body tr")[0].click()
    detail = browser.find_element("id", "change-detail")
    assert "A ·" in detail.text and "B ·" in detail.text
    # the prompts differ in one line: marked removed (A) and added (B)
    removed = [e.get_attribute("textContent") for e in detail.find_elements("css selector", "#prompt-diff .d-del")]
    added = [e.get_attribute("textContent") for e in detail.find_elements("css selector", "#prompt-diff .d-add")]
    assert removed == ["- Answer with the letter of the right option."]
    assert added == ["+ Reply with one letter."]
    browser.save_screenshot(str(tmp_path / "compare.png"))
    assert _console_errors(browser) == []


def test_judge_fields_errors_and_other_models(browser, tmp_path):
    """Fields other parts of a run add (LLM judge, a failed row's error) show in the drill-down, and the same
    row on the run's other model is listed beside it."""
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from promptweave.report import write_report

    wd = tmp_path / "w"
    for model, pred in (("m1", "x"), ("m2", "y")):
        (wd / "predictions" / model).mkdir(parents=True)
        (wd / "predictions" / model / "judged.jsonl").write_text(
            json.dumps({"index": 0, "prompt": "Say y", "output": pred, "prediction": pred, "gold": "y",
                        "correct": pred == "y", "judge_prompt": f"Is {pred!r} the same as 'y'?",
                        "judge_verdict": "no" if pred == "x" else "yes", "usage": {"total_tokens": 7}}) + "\n"
            + json.dumps({"index": 1, "prompt": "Say z", "error": "[PW700] the server timed out"}) + "\n")
    html = write_report([wd], tmp_path / "r.html")
    browser.get(html.as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    Select(browser.find_element("id", "task-select")).select_by_index(0)
    rows = browser.find_elements("css selector", "#row-body tr")
    assert [tr.find_elements("css selector", "td")[2].text for tr in rows] == ["✗ wrong", "error"]
    rows[0].click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements("css selector", "#detail table.peers"))
    detail = browser.find_element("id", "detail").text
    assert "LLM judge" in detail and "Is 'x' the same as 'y'?" in detail and "judge_verdict" in detail
    assert "total_tokens" in detail  # fields the report does not know are still shown
    peer = browser.find_element("css selector", "#detail table.peers tbody tr").text
    assert "m2" in peer and "correct" in peer and "same prompt" in peer
    _click_row(browser, 1)
    assert "the server timed out" in browser.find_element("id", "detail").text
    browser.find_element("id", "wrong-only").click()
    assert len(browser.find_elements("css selector", "#row-body tr")) == 2  # wrong and failed rows
    assert _console_errors(browser) == []


def test_row_data_is_shown_as_text_never_run(browser, tmp_path):
    """Names and prompts holding markup or script are shown literally; nothing in them runs."""
    from selenium.webdriver.support.ui import WebDriverWait

    from promptweave.report import write_report

    evil = "</script><script>window.PWNED=1</script><img src=x onerror=\"window.PWNED=2\">"
    wd = tmp_path / "w"
    (wd / "predictions" / "m").mkdir(parents=True)
    (wd / "results" / "m").mkdir(parents=True)
    (wd / "predictions" / "m" / "d.jsonl").write_text(json.dumps(
        {"index": 0, "prompt": evil, "output": evil, "prediction": evil, "gold": "a", "correct": False}) + "\n")
    (wd / "results" / "m" / "d.json").write_text(json.dumps(
        {"dataset": evil, "model": "m", "mode": "gen", "status": "done", "metrics": {"accuracy": 0.0}}))
    html = write_report([wd], tmp_path / "r.html")
    browser.get(html.as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    _click_row(browser, 0)
    assert browser.find_element("css selector", "#detail pre.prompt-text").get_attribute("textContent") == evil
    assert evil in browser.find_element("id", "score-table").text
    assert browser.execute_script("return window.PWNED === undefined")
    assert _console_errors(browser) == []
