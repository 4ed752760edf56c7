import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))

from openai_stub import StubServer

EXAMPLE = ROOT / "examples" / "run_openai_server.py"

# the bundled example plus a text (/v1/completions) model and a perplexity dataset, so the report shows
# chat messages, plain text prompts and per-label scores
EXTRA = '''
science_ppl = dict(
    abbr="science_ppl", path="data/science_mc.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template={
            lab: dict(round=[dict(role="HUMAN", prompt=_question), dict(role="BOT", prompt=lab)]) for lab in "ABCD"}),
        retriever=dict(type="ZeroRetriever"), inferencer=dict(type="PPLInferencer")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [science, arithmetic, science_ppl]
models = models + [dict(abbr="served-text", type="OpenAICompatModel", kind="lm", base_url="URL", model="served",
                        key="EMPTY", batch_size=4, max_out_len=32,
                        meta_template=dict(round=[dict(role="HUMAN", begin="<|user|>\\n", end="\\n"),
                                                  dict(role="BOT", begin="<|assistant|>\\n", end="\\n",
                                                       generate=True)]))]
'''


def make_config(folder: Path, url: str, edit=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "data").exists():
        shutil.copytree(ROOT / "examples" / "data", folder / "data")
    text = EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", url) + EXTRA.replace("URL", url)
    if edit:
        text = edit(text)
    cfg = folder / "run_openai_server.py"
    cfg.write_text(text)
    return cfg


def run_workdir(folder: Path, *, limit: int = 6, answer=None, extra_args=(), edit=None) -> Path:
    """A real ``promptweave run`` of the example config against the loopback stand-in server."""
    from typer.testing import CliRunner

    from promptweave.cli.app import app

    kw = {"answer": answer} if answer else {}
    with StubServer(**kw) as srv:
        cfg = make_config(folder / "cfg", srv.url, edit)
        wd = folder / "work"
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(wd), "--limit", str(limit), "--no-progress",
                                       *extra_args])
    # a perplexity dataset cannot run on the chat model (no prompt log-probabilities over chat): that one task
    # fails, as it should, and the report shows it as failed
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 1 and res.output.count("failed: ") == 1, res.output
    assert "no report written" not in res.output, res.output
    assert "failed: science_ppl × served-chat" in res.output
    return wd


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return run_workdir(tmp_path_factory.mktemp("run-a"))


@pytest.fixture(scope="session")
def workdir_b(tmp_path_factory) -> Path:
    """A second run with a reworded science question, whose server answers every one with B (verdicts change)."""
    def answer(body):
        return "The answer is B." if "Reply with one letter" in str(body) else "42"

    def edit(text):
        return text.replace("Answer with the letter of the right option.", "Reply with one letter.")
    return run_workdir(tmp_path_factory.mktemp("run-b"), answer=answer, edit=edit)


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Chromium driven by chromedriver (Debian's chromium + chromium-driver), with no network."""
    found = _chromium()
    if found is None:
        pytest.skip("headless browser tests need Debian's chromium and chromium-driver: "
                    "apt-get install -y chromium chromium-driver (.ci/run installs them)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need selenium (test extra)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000",
                 # no network: every host resolves nowhere and no proxy is reachable
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=found[1]))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
