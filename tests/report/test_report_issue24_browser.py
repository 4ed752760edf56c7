"""The report in headless Chromium: what changed between two runs (prompts too), bars named by model, each row's
own text, a URL per drill-down, wire roles, tokens per task, and a cut prompt shown as the model received it."""
from __future__ import annotations

import json
from pathlib import Path

from tests.report.conftest import run_workdir


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _wait(browser, cond, timeout: int = 30):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException, IndexError)).until(cond)


def _console_errors(browser) -> list:
    return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def _pick_task(browser, dataset: str, model: str) -> None:
    from selenium.webdriver.support.ui import Select

    sel = Select(browser.find_element("id", "task-select"))
    option = next(o for o in sel.options if o.text.startswith(f"{dataset} × {model} "))
    value = option.get_attribute("value")
    sel.select_by_value(value)
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.task") == value)


def _js(browser, script: str, *args):
    return browser.execute_script(script, *args)


def test_a_template_change_shows_when_no_verdict_moves(browser, tmp_path) -> None:
    from typer.testing import CliRunner

    from promptweave.cli.app import app

    def same(body):
        return "The answer is B."

    a = run_workdir(tmp_path / "a", answer=same)
    b = run_workdir(tmp_path / "b", answer=same,
                    edit=lambda t: t.replace("Answer with the letter of the right option.", "Reply with one letter."))
    out = tmp_path / "compare.html"
    res = CliRunner().invoke(app, ["report", str(a), str(b), "-o", str(out)])
    assert res.exit_code == 0, res.output
    browser.get(out.as_uri())
    _wait(browser, lambda d: d.find_elements("css selector", "#change-task option"))
    options = [o.text for o in browser.find_elements("css selector", "#change-task option")]
    science = next(o for o in options if o.startswith("science_mc × served-chat"))
    n = len(_rows(a / "predictions" / "served-chat" / "science_mc.jsonl"))
    assert f"({n} changed: prompt {n}, answer 0, verdict 0)" in science  # scores did not move; prompts did
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "change-task")).select_by_visible_text(science)
    _wait(browser, lambda d: len(d.find_elements("css selector", "#change-body tr")) == n)
    assert {tr.get_attribute("data-what") for tr in browser.find_elements("css selector", "#change-body tr")} == {"prompt"}
    inline = browser.find_elements("css selector", "#change-body tr")[0].find_element("css selector", "td.inline-diff")
    assert [e.get_attribute("textContent") for e in inline.find_elements("css selector", ".d-del")] == \
        ["- Answer with the letter of the right option."]
    assert [e.get_attribute("textContent") for e in inline.find_elements("css selector", ".d-add")] == \
        ["+ Reply with one letter."]
    browser.find_elements("css selector", "#change-body tr")[0].click()
    detail = browser.find_element("id", "change-detail").get_attribute("textContent")
    assert "Answer with the letter of the right option." in detail and "Reply with one letter." in detail
    # the arithmetic prompts did not change: nothing listed for that task
    arith = next(o for o in options if o.startswith("arithmetic × served-chat"))
    assert "(0 changed" in arith
    assert _console_errors(browser) == []


def test_bars_rows_url_roles_and_tokens(browser, workdir) -> None:
    html = workdir / "report.html"
    browser.get(html.resolve().as_uri())
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready === '1'"))

    # every bar is labelled with its model, under its dataset
    labels = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "#scores svg text.bar-label")]
    assert set(labels) == {"served-chat", "served-text"}
    groups = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "#scores svg text.g")]
    assert any(g.startswith("science_mc") for g in groups) and len(groups) == len(set(groups))

    # each row shows its own text: the part after what every row of the task shares (the in-context examples)
    _pick_task(browser, "arithmetic", "served-text")
    rows = _rows(workdir / "predictions" / "served-text" / "arithmetic.jsonl")
    own = _js(browser, "return Array.from(document.querySelectorAll('#row-body td.own')).map(t => t.textContent)")
    assert len(own) == len(rows) and len(set(own)) == len(rows)
    shared = rows[0]["prompt"][:len(rows[0]["prompt"]) - len(own[0])]
    assert shared and all(r["prompt"].startswith(shared) for r in rows)
    assert all(rows[i]["prompt"].endswith(own[i]) for i in range(len(rows)))
    assert not own[0].startswith(rows[0]["prompt"][:40])  # not the first few-shot example

    # a drill-down has a URL, and the URL opens it
    _pick_task(browser, "arithmetic", "served-chat")
    chat_rows = _rows(workdir / "predictions" / "served-chat" / "arithmetic.jsonl")
    _wait(browser, lambda d: d.find_elements("css selector", "#row-body tr")[2].click() or True)
    url = browser.current_url
    assert url.endswith("#task=served-chat%2Farithmetic&row=" + str(chat_rows[2]["index"])), url
    browser.get("about:blank")
    browser.get(url)
    _wait(browser, lambda d: d.execute_script("return !document.getElementById('detail').hidden"))
    got = json.loads(_js(browser, "return document.getElementById('detail-prompt-json').textContent"))
    assert got == chat_rows[2]["prompt"]

    # each message shows its template role and the role sent on the wire
    msgs = browser.find_elements("css selector", "#detail .msg")
    roles = [(m.find_element("css selector", ".role").get_attribute("textContent"), m.get_attribute("data-wire-role"))
             for m in msgs]
    want = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}
    assert roles and all(wire == want.get(m["role"], m["role"].lower())
                         for (_, wire), m in zip(roles, chat_rows[2]["prompt"], strict=True))
    assert any(text == "HUMAN→ user" for text, _ in roles)

    # tokens used per task, from the results
    cells = _js(browser, "return Array.from(document.querySelectorAll('#run td.tokens')).map(t => t.textContent)")
    assert cells and all("prompt" in c and "output" in c for c in cells if c != "-")
    res = json.loads((workdir / "results" / "served-chat" / "arithmetic.json").read_text())
    assert f"{res['tokens']['prompt']:,} prompt" in " ".join(cells)
    assert _console_errors(browser) == []


def test_a_cut_prompt_is_shown_as_received(browser, tmp_path) -> None:
    from promptweave.report import write_report

    prompt = "Example one. Example two.\nQuestion: what is 2+2?\nAnswer:"
    cut = {"side": "left", "tokens_before": 20, "tokens_after": 12, "max_seq_len": 28, "reserved": 16,
           "dropped_chars": prompt.index("Question")}
    wd = tmp_path / "w"
    (wd / "predictions" / "tiny").mkdir(parents=True)
    (wd / "predictions" / "tiny" / "long.jsonl").write_text(
        json.dumps({"index": 0, "prompt": prompt, "output": "4", "prediction": "4", "gold": "4", "correct": True,
                    "truncated": cut}) + "\n")
    html = write_report([wd], tmp_path / "r.html")
    browser.get(html.as_uri() + "#task=tiny%2Flong&row=0")
    _wait(browser, lambda d: d.execute_script("return !document.getElementById('detail').hidden"))
    detail = browser.find_element("id", "detail")
    assert "prompt as the model received it (cut)" in detail.text
    assert "the model received the last 12 of 20 tokens" in detail.text
    dropped = detail.find_element("css selector", "pre.prompt-text del.dropped").get_attribute("textContent")
    assert dropped == "Example one. Example two.\n"
    assert detail.find_element("css selector", "pre.prompt-text").get_attribute("textContent") == prompt
    assert _console_errors(browser) == []
