"""Perf mode end to end against the loopback stand-in server streaming a scripted reply: the files AISBench
writes, their shapes and their counts (no timed assertions: timing is measured in benchmarks/perf_truth.py)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer
from timed_stream import TimedStreamServer, Timing
from typer.testing import CliRunner

from promptweave.cli.app import app

ROWS = [{"question": f"Question number {i}?", "answer": "A"} for i in range(12)]
REPLY = "one two three four five six seven"  # the stub streams one event per word
TIMING = Timing(t0=0.002, t1=0.001, tokens=7)  # scripted: 7 tokens, 1 ms apart, after 2 ms

CONFIG = '''
qa = dict(
    abbr="qa", path="qa.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{{question}}")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [qa]
models = [dict(attr="service", type="{type}", abbr="svc", path="", model="served", stream=False, retry=1,
               api_key="", host_ip="127.0.0.1", host_port={port}, url="", max_out_len=24, batch_size={batch},
               request_rate={rate}, generation_kwargs=dict(temperature=0.01, ignore_eos=True))]
'''

CSV_HEADER = ["Performance Parameters", "Stage", "Average", "Min", "Max", "Median", "P75", "P90", "P99", "N"]
COMMON = ["Benchmark Duration", "Total Requests", "Failed Requests", "Success Requests", "Concurrency",
          "Max Concurrency", "Request Throughput", "Total Input Tokens", "Prefill Token Throughput",
          "Total Generated Tokens", "Input Token Throughput", "Output Token Throughput", "Total Token Throughput"]


def write_config(folder: Path, port: int, *, type_: str = "VLLMCustomAPIChat", batch: int = 4,
                 rate: float = 0) -> Path:
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = folder / "config.py"
    cfg.write_text(CONFIG.format(type=type_, port=port, batch=batch, rate=rate))
    return cfg


def invoke(*args: str):
    return CliRunner().invoke(app, [*args, "--no-progress"])


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_run_mode_perf_writes_aisbench_s_files(tmp_path) -> None:
    with TimedStreamServer(TIMING, keep_bodies=1) as server:
        cfg = write_config(tmp_path, server.port)
        work = tmp_path / "w"
        res = invoke("run", str(cfg), "-w", str(work), "--mode", "perf")
        assert res.exit_code == 0, res.output
        # every row once, streamed, with the body accuracy mode sends plus stream on
        assert server.truth.requests == len(ROWS)
        body = server.truth.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["ignore_eos"] is True and body["max_tokens"] == 24 and body["temperature"] == 0.01
    folder = work / "performances" / "svc"
    rows = read_csv(folder / "qa.csv")
    assert rows[0] == CSV_HEADER
    assert [r[0] for r in rows[1:]] == ["E2EL", "TTFT", "TPOT", "ITL", "InputTokens", "OutputTokens",
                                        "OutputTokenThroughput"]
    assert {r[1] for r in rows[1:]} == {"total"}
    by = {r[0]: r for r in rows[1:]}
    for metric in ("E2EL", "TTFT", "TPOT", "ITL"):
        assert all(v.endswith(" ms") for v in by[metric][2:9])
    assert all(v.endswith(" token/s") for v in by["OutputTokenThroughput"][2:9])
    assert by["E2EL"][9] == str(len(ROWS))
    assert float(by["OutputTokens"][5]) == 7.0 and float(by["InputTokens"][5]) == 8.0  # the server's usage
    common = json.loads((folder / "qa.json").read_text())
    assert list(common) == COMMON
    assert all(list(v) == ["total"] for v in common.values())
    assert common["Total Requests"]["total"] == len(ROWS) and common["Failed Requests"]["total"] == 0
    assert common["Max Concurrency"]["total"] == 4
    assert common["Total Generated Tokens"]["total"] == 7 * len(ROWS)
    assert common["Total Input Tokens"]["total"] == 8 * len(ROWS)
    assert common["Benchmark Duration"]["total"].endswith(" ms")
    assert common["Request Throughput"]["total"].endswith(" req/s")
    details = [json.loads(x) for x in (folder / "qa_details.jsonl").read_text().splitlines()]
    assert len(details) == len(ROWS) and sorted(d["row"] for d in details) == list(range(len(ROWS)))
    for d in details:
        assert d["success"] and d["ttft_ms"] <= d["e2el_ms"]
        assert d["content_events"] == 7 and d["itl_count"] == 6  # ITL gaps = tokens - 1
        assert d["output_tokens_from"] == "usage" and d["input_tokens_from"] == "usage"
        assert 1 <= d["in_flight_at_send"] <= 4
    # the index line the pages read
    index = [json.loads(x) for x in (work / "performances" / "perf_index.jsonl").read_text().splitlines()]
    assert index[-1]["concurrency"] == 4 and index[-1]["total"]["Success Requests"] == len(ROWS)


def test_without_usage_output_tokens_are_the_streamed_events_and_the_details_say_so(tmp_path) -> None:
    timing = Timing(t0=0.002, t1=0.001, tokens=5, usage=False)
    with TimedStreamServer(timing) as server:
        cfg = write_config(tmp_path, server.port)
        res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "perf")
    assert res.exit_code == 0, res.output
    assert "count of streamed text events" in res.output
    folder = tmp_path / "w" / "performances" / "svc"
    details = [json.loads(x) for x in (folder / "qa_details.jsonl").read_text().splitlines()]
    assert {(d["output_tokens"], d["output_tokens_from"], d["input_tokens_from"]) for d in details} == {
        (5, "events", "none")}
    common = json.loads((folder / "qa.json").read_text())
    assert "Prefill Token Throughput" not in common  # no input tokens: left out, as AISBench leaves it out


def test_statistics_are_consistent_between_the_csv_and_the_details(tmp_path) -> None:
    with TimedStreamServer(TIMING) as server:
        cfg = write_config(tmp_path, server.port, batch=1)
        work = tmp_path / "w"
        assert invoke("run", str(cfg), "-w", str(work), "--mode", "perf").exit_code == 0
    folder = work / "performances" / "svc"
    by = {r[0]: r for r in read_csv(folder / "qa.csv")[1:]}
    details = [json.loads(x) for x in (folder / "qa_details.jsonl").read_text().splitlines()]
    e2el = sorted(d["e2el_ms"] for d in details)
    # Min and Max are the details' extremes (to the 0.1 ms the CSV keeps)
    assert abs(float(by["E2EL"][3].split()[0]) - e2el[0]) <= 0.1
    assert abs(float(by["E2EL"][4].split()[0]) - e2el[-1]) <= 0.1
    for row in ("E2EL", "TTFT", "ITL"):
        vals = [float(v.split()[0]) for v in by[row][2:9]]
        avg, lo, hi, med, p75, p90, p99 = vals
        assert lo <= med <= p75 <= p90 <= p99 <= hi and lo <= avg <= hi
    assert by["ITL"][9] == by["TPOT"][9]  # N: the requests with decode gaps
    common = json.loads((folder / "qa.json").read_text())
    # at concurrency 1 the requests follow one another: Concurrency = sum(E2EL) / duration is at most 1
    assert 0 < common["Concurrency"]["total"] <= 1.0
    # one request at a time holds the maximum throughout: a steady-state stage, marked as such
    stable = read_csv(folder / "qa_stable.csv")
    assert stable[0] == CSV_HEADER and {r[1] for r in stable[1:]} == {"stable"}
    assert list(json.loads((folder / "qa_stable.json").read_text())["Total Requests"]) == ["stable"]
    assert sum(d["stable"] for d in details) == len(ROWS) - 1  # the first request at the maximum is left out


def test_failed_requests_are_counted_and_left_out_of_the_latencies(tmp_path) -> None:
    def faults(key, attempt, body):
        return Fault("status", 500) if "number 3?" in json.dumps(body) or "number 7?" in json.dumps(body) else None

    with StubServer(answer=lambda body: REPLY, faults=faults) as server:
        cfg = write_config(tmp_path, server.port)
        work = tmp_path / "w"
        res = invoke("run", str(cfg), "-w", str(work), "--mode", "perf")
        assert server.total_received == len(ROWS)  # no retries in perf mode
    assert res.exit_code == 0, res.output
    assert "failed requests" in res.output
    folder = work / "performances" / "svc"
    common = json.loads((folder / "qa.json").read_text())
    assert common["Failed Requests"]["total"] == 2 and common["Success Requests"]["total"] == len(ROWS) - 2
    by = {r[0]: r for r in read_csv(folder / "qa.csv")[1:]}
    assert by["E2EL"][9] == str(len(ROWS) - 2)
    details = [json.loads(x) for x in (folder / "qa_details.jsonl").read_text().splitlines()]
    bad = [d for d in details if not d["success"]]
    assert len(bad) == 2 and all(d["error"].startswith("HTTP 500") for d in bad)
    assert all("ttft_ms" not in d for d in bad)


def test_every_request_failing_is_a_typed_error(tmp_path) -> None:
    with StubServer(faults=lambda key, attempt, body: Fault("status", 503)) as server:
        cfg = write_config(tmp_path, server.port)
        res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "perf")
    assert res.exit_code == 2
    assert "[PW742]" in res.output and "HTTP 503" in res.output and "Traceback" not in res.output


def test_a_local_model_is_refused_with_a_typed_error(tmp_path) -> None:
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = tmp_path / "config.py"
    cfg.write_text(CONFIG.split("models = ")[0] + 'models = [dict(abbr="m", type="HuggingFaceCausalLM", '
                   'path="/nonexistent", batch_size=2)]\n')
    res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "perf")
    assert res.exit_code == 2 and "[PW740]" in res.output, res.output


def test_sweep_writes_one_file_set_per_level_and_the_page(tmp_path) -> None:
    with TimedStreamServer(TIMING) as server:
        cfg = write_config(tmp_path, server.port)
        work = tmp_path / "w"
        res = invoke("perf", str(cfg), "-w", str(work), "--concurrency", "1,2")
        assert res.exit_code == 0, res.output
        assert server.truth.requests == 12
    folder = work / "performances" / "svc"
    for level, n in ((1, 4), (2, 8)):  # 4 x N requests per level
        common = json.loads((folder / f"qa@c{level}.json").read_text())
        assert common["Total Requests"]["total"] == n and common["Max Concurrency"]["total"] == level
        assert read_csv(folder / f"qa@c{level}.csv")[0] == CSV_HEADER
    page = (work / "perf.html").read_text()
    assert page.count("<svg") == 6 and "qa" in page


def test_synthetic_prompts_ask_for_the_set_lengths(stub_server: StubServer, tmp_path) -> None:
    stub_server.answer = lambda body: REPLY
    cfg = write_config(tmp_path, stub_server.port)
    work = tmp_path / "w"
    res = invoke("perf", str(cfg), "-w", str(work), "--concurrency", "2", "--synthetic", "20,5", "--requests", "3")
    assert res.exit_code == 0, res.output
    bodies = [e["body"] for e in stub_server.log]
    assert len(bodies) == 3
    for b in bodies:
        assert b["max_tokens"] == 5 and b["ignore_eos"] is True and b["stream"] is True
        assert len(b["messages"][0]["content"].split()) == 20  # no tokenizer: IN words
    assert len({b["messages"][0]["content"] for b in bodies}) == 3
    assert (work / "performances" / "svc" / "synthetic-20-5@c2.csv").is_file()


def test_paced_requests_all_go_and_a_duration_run_reuses_rows(stub_server: StubServer, tmp_path) -> None:
    stub_server.answer = lambda body: "a b"
    cfg = write_config(tmp_path, stub_server.port, rate=500)
    work = tmp_path / "w"
    assert invoke("run", str(cfg), "-w", str(work), "--mode", "perf").exit_code == 0
    assert stub_server.total_answered == len(ROWS)


@pytest.mark.parametrize(("args", "field"), [
    (["--concurrency", "0"], "--concurrency"), (["--concurrency", "1,x"], "--concurrency"),
    (["--concurrency", "1", "--synthetic", "5"], "--synthetic"),
    (["--concurrency", "1", "--requests", "2", "--duration", "1"], "--duration"),
])
def test_bad_perf_options_are_one_typed_line(tmp_path, args, field) -> None:
    cfg = write_config(tmp_path, 9)
    res = invoke("perf", str(cfg), "-w", str(tmp_path / "w"), *args)
    assert res.exit_code == 2 and "[PW741]" in res.output and field in res.output, res.output


@pytest.mark.parametrize("type_", ["VLLMCustomAPIStream", "VLLMCustomAPI", "VLLMCustomAPIChatStream"])
def test_completions_and_stream_classes_are_measured_alike(tmp_path, type_) -> None:
    with TimedStreamServer(TIMING, keep_bodies=1) as server:
        cfg = write_config(tmp_path, server.port, type_=type_)
        res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "perf", "--limit", "3")
        assert res.exit_code == 0, res.output
        body = server.truth.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert ("prompt" in body) == (type_ != "VLLMCustomAPIChatStream")
    details = (tmp_path / "w" / "performances" / "svc" / "qa_details.jsonl").read_text().splitlines()
    assert [json.loads(d)["content_events"] for d in details] == [7, 7, 7]


def test_an_openai_compatible_model_with_base_url_is_measured(tmp_path) -> None:
    with TimedStreamServer(TIMING, keep_bodies=1) as server:
        (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
        cfg = tmp_path / "config.py"
        cfg.write_text(CONFIG.split("models = ")[0] + f'models = [dict(abbr="oa", type="OpenAICompatModel", '
                       f'kind="api", base_url="http://127.0.0.1:{server.port}/v1", model="m", key="EMPTY", '
                       'batch_size=3, max_out_len=16)]\n')
        res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "perf", "--limit", "5")
        assert res.exit_code == 0, res.output
        body = server.truth.bodies[0]
    assert body["stream"] is True and body["messages"][0]["role"] == "user"
    common = json.loads((tmp_path / "w" / "performances" / "oa" / "qa.json").read_text())
    assert common["Total Requests"]["total"] == 5 and common["Max Concurrency"]["total"] == 3


def test_an_unknown_mode_is_one_typed_line_and_the_library_call_refuses_perf(tmp_path) -> None:
    from promptweave.errors import RunOptionsError
    from promptweave.run.options import RunOptions
    from promptweave.run.pipeline import evaluate_config

    cfg = write_config(tmp_path, 9)
    res = invoke("run", str(cfg), "-w", str(tmp_path / "w"), "--mode", "speed")
    assert res.exit_code == 2 and "[PW180]" in res.output and "--mode" in res.output, res.output
    with pytest.raises(RunOptionsError) as err:
        evaluate_config(cfg, RunOptions(workdir=tmp_path / "w", mode="perf"))
    assert "run_perf" in err.value.message
