"""The code agent's parts: the persistent Python session, the ReAct parsing, the CIBench loader and evaluator, and an
agent defined in the model config (OpenCompass's CodeAgent) run against the loopback stand-in server."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_stub import StubServer, scripted_agent
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.data.loaders.base import LoadContext
from promptweave.errors import UnsupportedError
from promptweave.evaluate.context import EvalContext
from promptweave.evaluate.python_session import PythonSession, SessionLimits
from promptweave.forms.agent_loop import APOLOGY, ReActProtocol, agent_settings, extract_code
from promptweave.suites.cibench.data import cibench
from promptweave.suites.cibench.scoring import CIBenchEvaluator
from tests.codebox import CODE_EXEC, CODE_SANDBOX


# -- the session ---------------------------------------------------------------------------------------------------
def test_a_variable_defined_in_one_cell_is_visible_in_the_next() -> None:
    with PythonSession(sandbox=CODE_SANDBOX) as s:
        first = s.run("data = {'a': 1}\ndef f(x):\n    return x * 2\n")
        second = s.run("print(f(data['a']))\nlen(data)")
    assert first.ok and first.outputs == ()
    assert second.ok and second.outputs == (("stdout", "2\n"), ("execute_result", "1"))


def test_a_timed_out_cell_ends_the_session_and_the_next_says_it_restarted() -> None:
    with PythonSession(SessionLimits(cell_timeout_s=1.5), sandbox=CODE_SANDBOX) as s:
        s.run("kept = 1")
        slow = s.run("while True:\n    pass")
        after = s.run("kept")
    assert not slow.ok and slow.timed_out and "Timeout" in slow.outputs[0][1]
    assert after.restarted and not after.ok and "NameError" in after.outputs[-1][1]


def test_the_session_refuses_processes_and_file_removal(tmp_path) -> None:
    victim = tmp_path / "keep.txt"
    victim.write_text("x")
    with PythonSession(sandbox=CODE_SANDBOX) as s:
        spawn = s.run("import subprocess\nsubprocess.run(['true'])")
        rm = s.run(f"import os\nos.remove({str(victim)!r})")
        inp = s.run("input()")
    assert not spawn.ok and "PermissionError" in spawn.outputs[-1][1]
    assert not rm.ok and victim.exists()
    assert not inp.ok and "input() function is disabled" in inp.outputs[-1][1]


def test_the_data_folder_is_visible_by_its_name(tmp_path) -> None:
    src = tmp_path / "datasources"
    src.mkdir()
    (src / "t.csv").write_text("a,b\n1,2\n")
    with PythonSession(data_dir=src, sandbox=CODE_SANDBOX) as s:
        got = s.run("print(open('datasources/t.csv').read().splitlines()[1])")
    assert got.ok and got.outputs == (("stdout", "1,2\n"),)


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=60))
def test_any_cell_text_gives_a_result_and_the_session_lives_on(code: str) -> None:
    with PythonSession(SessionLimits(cell_timeout_s=10), sandbox=CODE_SANDBOX) as s:
        got = s.run(code)
        assert isinstance(got.ok, bool)
        assert all(kind in ("stdout", "stderr", "execute_result", "error") for kind, _ in got.outputs)
        assert s.run("1 + 1").outputs[-1] == ("execute_result", "2")


# -- parsing ---------------------------------------------------------------------------------------------------------
_plain = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="`\r"), max_size=40)


@settings(max_examples=100, deadline=None)
@given(thought=_plain.filter(lambda t: "Action" not in t and "Final Answer:" not in t and "Thought:" not in t),
       code=_plain.filter(lambda c: c.strip() and "Final Answer:" not in c))
def test_a_code_action_parses_back(thought: str, code: str) -> None:
    p = ReActProtocol()
    reply = f"Thought:{thought}\nAction: IPythonInterpreter\nAction Input:```python\n{code}\n```"
    got_thought, action, arg = p.parse(reply)
    assert action == "IPythonInterpreter"
    assert got_thought == thought + "\n"
    assert extract_code(arg) == code + "\n"


@given(st.text(max_size=80))
def test_parse_never_fails(text: str) -> None:
    thought, action, arg = ReActProtocol().parse(text)
    assert isinstance(thought, str) and isinstance(arg, str)
    assert action is None or isinstance(action, str)


def test_the_codeagent_definition_is_read() -> None:
    cfg = {"type": "CodeAgent", "agent_type": "CIReAct", "max_turn": 2,
           "llm": {"type": "OpenAICompatModel"},
           "actions": [{"type": "IPythonInterpreter", "description": "DESC", "user_data_dir": "/d", "timeout": 7}],
           "protocol": {"type": "ReActProtocol", "call_protocol": "CALL {tool_description} {action_names}",
                        "finish": {"role": "FINISH", "begin": "Answer:", "end": "\n"}}}
    s = agent_settings(cfg)
    assert (s.max_turn, s.tool_description, s.data_dir, s.limits.cell_timeout_s) == (2, "DESC", "/d", 7.0)
    assert s.protocol.finish == "Answer:"
    assert s.protocol.system_prompt({"IPythonInterpreter": "DESC"}) == "CALL {'IPythonInterpreter': 'DESC'} " \
                                                                        "['IPythonInterpreter']"
    with pytest.raises(UnsupportedError, match="agent_type"):
        agent_settings({**cfg, "agent_type": "ReWOO"})
    with pytest.raises(UnsupportedError, match="IPythonInterpreter"):
        agent_settings({**cfg, "actions": [{"type": "GoogleSearch"}]})


# -- loader and evaluator ------------------------------------------------------------------------------------------
PNG = base64.b64encode(b"\x89PNG fake").decode()


def _notebook(path: Path, *, step_types: list[str] | None = None) -> None:
    cells = [
        {"cell_type": "markdown", "source": ["Load the table.\n\nThought: read it"]},
        {"cell_type": "code", "source": ["x = 3\n", "x"],
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["3"]}}]},
        {"cell_type": "markdown", "source": ["Plot it."]},
        {"cell_type": "code", "source": ["plot()"], "outputs": [{"output_type": "display_data",
                                                                   "data": {"image/png": PNG, "text/plain": "F"}}]},
        {"cell_type": "markdown", "source": ["Describe it."]},
        {"cell_type": "code", "source": ["print('a small table')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "a small table\n"}]},
        {"cell_type": "markdown", "source": ["Save it."]},
        {"cell_type": "code", "source": ["save()"], "outputs": []},
    ]
    meta = {"modules": ["pandas", "matplotlib & seaborn", "pandas", "pandas"], "step_types": step_types} \
        if step_types else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": meta}))


def test_the_loader_reads_notebooks_as_the_reference_does(tmp_path) -> None:
    _notebook(tmp_path / "set_chinese" / "b" / "e2.ipynb", step_types=["num", "vis", "text", "exec"])
    _notebook(tmp_path / "set_chinese" / "a.ipynb")
    split = cibench(LoadContext("CIBenchDataset"), str(tmp_path / "set_chinese"))
    first, second = split.rows
    assert first["experiment"].endswith("a.ipynb") and second["experiment"].endswith("e2.ipynb")
    assert [m["role"] for m in first["questions"]] == ["user", "assistant"] * 4
    assert first["questions"][0]["content"] == "Load the table.\n"
    assert first["questions"][1]["content"] == "read it**split**x = 3\nx"
    assert first["questions"][3]["content"] == " **split**plot()"
    assert first["references"]["tags"] == ["general", "vis", "general", "exec"]
    assert first["references"]["outputs"] == ["3", PNG, "a small table\n", None]
    # with metadata.modules each question names them (in Chinese for the _chinese sets)
    assert second["questions"][2]["content"] == "Plot it.请用 matplotlib 和 seaborn 模块.\n"


def _tool(text: str | None, err: str | None = None) -> dict:
    return {"type": "IPythonInterpreter", "args": {}, "result": None if text is None else {"text": text,
                                                                                          "image_path": ""},
            "errmsg": err, "state": 0 if err is None else -1002}


def test_the_evaluator_scores_steps_like_the_reference() -> None:
    gold_soft = {"tags": ["general", "vis", "general", "exec"], "outputs": ["3", PNG, "a small table\n", None],
                 "metadata": {}}
    gold_hard = {"tags": ["general", "vis", "general", "exec"], "outputs": ["3", PNG, "a small table\n", None],
                 "metadata": {"step_types": ["num", "vis", "text", "exec"]}}
    steps_soft = [[_tool("execute_result:\n\n```\n3\n```")], [_tool(None, "boom")],
                  [{"type": "FinishAction", "result": {"text": "x"}, "errmsg": None}], [_tool("done")]]
    steps_hard = [[_tool(None, "e"), _tool("stdout:\n\n```\n30\n```")], [], [_tool("stdout:\n\n```\na big table\n```")],
                  [_tool(None, "e")]]
    ev = CIBenchEvaluator()
    got = ev.score([None, None], [gold_soft, gold_hard], EvalContext(steps=[steps_soft, steps_hard]))
    m = got.metrics
    # tool used in 3 of 4 soft turns and 3 of 4 hard ones; ran cleanly in 2 + 2
    assert m["tool_rate"] == 6 / 8 * 100 and m["executable"] == 4 / 8 * 100
    assert m["general_correct"] == 1 / 2 * 100  # '3' matched; the finish action has no interpreter result
    assert m["numeric_correct"] == 1 / 1 * 100  # '3' is contained in '30', as the reference's test allows
    assert m["vis_sim"] == 0  # no figure drawn
    rouge = ev.text_evaluator.score(["a big table"], ["a small table\n"]).metrics["rouge1"]
    assert m["text_score"] == pytest.approx(rouge)
    assert CIBenchEvaluator().score([], [], EvalContext(steps=[])).metrics == {}


# -- an agent defined in the model config ------------------------------------------------------------------------
CODEAGENT = '''
models = [dict(abbr="agent", type="CodeAgent", agent_type="CIReAct", max_turn=2,
               llm=dict(type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
                        backoff_base=0, max_retries=1),
               actions=[dict(type="IPythonInterpreter", description="Runs Python.", user_data_dir="{data}")],
               protocol=dict(type="ReActProtocol", call_protocol="Tools: {{tool_description}} / {{action_names}}",
                             force_stop="Stop.", finish=dict(role="FINISH", begin="Final Answer:", end="\\n")))]
datasets = [dict(abbr="ci", type="CIBenchDataset", path="{nb}",
                 reader_cfg=dict(input_columns=["questions"], output_column="references"),
                 infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="{{questions}}"),
                                retriever=dict(type="ZeroRetriever"),
                                inferencer=dict(type="AgentInferencer", infer_mode="every")),
                 eval_cfg=dict(evaluator=dict(type="CIBenchEvaluator")))]
'''


def test_a_codeagent_model_runs_with_its_own_protocol_and_max_turn(tmp_path) -> None:
    nb = tmp_path / "nb"
    nb.mkdir()
    (nb / "e.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["Read the file."]},
        {"cell_type": "code", "source": ["print(1)"], "outputs": [{"output_type": "stream", "name": "stdout",
                                                                 "text": "a,b\n"}]}], "metadata": {}}))
    data = tmp_path / "datasources"
    data.mkdir()
    (data / "t.csv").write_text("a,b\n")
    code = "Action: IPythonInterpreter\nAction Input:```python\nprint(open('datasources/t.csv').readline())\n```"
    script = {"Read the file.\n": ["no format here", code]}
    cfg = tmp_path / "eval.py"
    with StubServer(answer=scripted_agent(script)) as srv:
        cfg.write_text(CODEAGENT.format(url=srv.url, data=data, nb=nb))
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report",
                                       *CODE_EXEC])
        assert res.exit_code == 0, res.output
        sent = [e["body"]["messages"] for e in srv.log]
    system = {"role": "system", "content": "Tools: {'IPythonInterpreter': 'Runs Python.'} / ['IPythonInterpreter']"}
    user = {"role": "user", "content": "Read the file.\n"}
    assert sent == [[system, user],
                    [system, user, {"role": "assistant", "content": "no format here"},
                     {"role": "system", "content": "Response:Please follow the format\n"}]]
    row = json.loads((tmp_path / "w" / "predictions" / "agent" / "ci.jsonl").read_text())
    assert row["prediction"] == ["stdout:\n\n```\na,b\n\n\n```"]  # the file was read from the data folder
    m = json.loads((tmp_path / "w" / "results" / "agent" / "ci.json").read_text())["metrics"]
    assert m["general_correct"] == 100


def test_max_turn_failures_give_the_apology(tmp_path) -> None:
    from promptweave.forms.agent_loop import AgentConversation, AgentSettings, run_agents
    from promptweave.forms.chat_loop import ChatConversation

    conv = ChatConversation(0, (("user", "q"), ("assistant", "g")), (1,))
    c = AgentConversation(conv, AgentSettings(max_turn=2), "every")
    seen: list = []

    def generate(prompts: list) -> list:
        seen.extend(prompts)
        return ["Action: Nope\nAction Input: x"] * len(prompts)

    res = run_agents([c], generate, lambda d: d)
    assert len(seen) == 2 and res[0].turns[0].prediction == APOLOGY
    assert [s["type"] for s in res[0].turns[0].steps] == ["InvalidAction", "InvalidAction"]
    assert res[0].turns[0].steps[0]["errmsg"] == "The action is invalid, please check the action name."
