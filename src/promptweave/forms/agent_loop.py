"""OpenCompass's ``AgentInferencer`` with ``infer_mode='every'`` / ``'every_with_gt'``: a ReAct code agent per chat.

The row holds a chat (CIBench: the ``questions`` column, user messages and the notebook's gold cells as assistant
messages, read by :class:`~promptweave.forms.chat_loop.ChatDialogueTemplate`). Each user message is answered by
the agent the reference builds for CIBench (Lagent's ReAct protocol, OpenCompass's ``CIReAct`` agent, its
``IPythonInterpreter`` action), re-implemented here:

* the prompt is the protocol's system message (tools, format), the session history, then this turn's attempts;
* the model's reply is parsed for ``Thought:`` / ``Action:`` / ``Action Input:`` or ``Final Answer:``;
* a code action runs in the conversation's own persistent Python session (:class:`PythonSession`, only with
  ``--allow-code-exec``) and its output goes back as a ``system`` message ``Response:...``;
* the turn ends at the first action that succeeds (code that ran, or a final answer): the reply and the
  response join the session history; a failed one is retried, with its error, up to ``max_turn`` calls, after which
  the turn's answer is the reference's fixed apology.

``every``: the history holds the agent's own successful replies; ``every_with_gt``: before each user turn the
history is rebuilt from the row's gold cells, each gold cell run in the session as the reference does (so its
state is the notebook's), formatted as a ReAct action and its response.

Each turn records the reference's ``steps`` (one dict per action: ``type``, ``args``, ``result``, ``thought``,
``state``, ``errmsg``, ``valid``), which ``CIBenchEvaluator`` scores.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from promptweave.errors import CodeExecutionError, DataError, UnsupportedError
from promptweave.evaluate.python_session import CellResult, PythonSession, SessionLimits, require_code_exec
from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn

# -- the reference's prompt text (prompt data: what the model is sent must match the reference's byte for byte) --
CALL_PROTOCOL = """\
You are a assistant who can utilize external tools.
{tool_description}
To use a tool, please response with the following format:
```
{thought} Think what you need to solve, do you need to use tools?
{action} The tool name, should be one of [{action_names}].
{action_input} The input to the tool that you want to use.
```
The tool will give you response after your response using the following format:
```
{response} the results after call the tool.
```
Therefore DO NOT generate tool response by yourself.

Also please follow the guidelines:
1. Always use code interpreter to solve the problem.
2. The generated codes should always in a markdown code block format.
3. The generated codes will be executed in an ipython manner and the results will be cached.
4. Your responded code should always be simple and only solves the problem in current step.

Begin!
"""
FORCE_STOP = "You should directly give results based on history information."
IPYTHON_DESCRIPTION = ("It can run Python code in a manner as jupyter notebook. The code must be a valid code that "
                       "contains only python method.")
APOLOGY = "对不起，我无法回答你的问题"  # CIReAct's answer when no attempt succeeded
NO_ACTION_MSG = "Please follow the format"
INVALID_ACTION_MSG = "The action is invalid, please check the action name."
EMPTY_CODE_MSG = "The input code is empty. Please follow the format."
NO_OUTPUT_MSG = "The code is succeed without any outputs."
TOOL = "IPythonInterpreter"
GT_SPLIT = "**split**"  # CIBench's gold cells: '<thought>**split**<code>'

# Lagent's status codes, as recorded in steps
SUCCESS, API_ERROR = 0, -1002
VALID_OPEN, VALID_FINISH, VALID_INVALID = 0, 1, -2

MODES = ("every", "every_with_gt")


@dataclass(frozen=True)
class ReActProtocol:
    """Lagent's ReAct protocol: the markers the model writes and reads, and the system prompt built from them."""

    call_protocol: str = CALL_PROTOCOL
    force_stop: str = FORCE_STOP
    thought: str = "Thought:"
    action: str = "Action:"
    action_input: str = "Action Input:"
    response: str = "Response:"
    response_end: str = "\n"
    finish: str = "Final Answer:"

    def system_prompt(self, tools: Mapping[str, str]) -> str:
        # the reference formats the executor's {name: description} dict and its name list as Python reprs
        return self.call_protocol.format(tool_description=repr(dict(tools)), action_names=repr(list(tools)),
                                         thought=self.thought, action=self.action, action_input=self.action_input,
                                         response=self.response, finish=self.finish)

    def parse(self, message: str) -> tuple[str, str | None, str]:
        """``(thought, action, action_input)``; action ``None`` when the reply names none, ``''`` for a final
        answer (the input is then the answer)."""
        thought = message.split(self.action)[0].split(self.thought)[-1].split(self.finish)[0]
        if self.finish in message:
            return thought, "", message.split(self.finish)[-1]
        actions = re.findall(re.escape(self.action) + "(.*?)\n", message)
        inputs = re.findall(re.escape(self.action_input) + "(.*)", message, re.DOTALL)
        if not actions or not inputs:
            return thought, None, ""
        return thought, actions[-1].strip(), inputs[-1].strip().strip('"')

    def format_response(self, text: str) -> str:
        return self.response + text + self.response_end


@dataclass(frozen=True)
class AgentSettings:
    """The agent a dataset × model runs: protocol, tool, attempts per turn, reply length, sandbox limits."""

    protocol: ReActProtocol = ReActProtocol()
    tool_name: str = TOOL
    tool_description: str = IPYTHON_DESCRIPTION
    max_turn: int = 3
    max_out_len: int = 512  # the reference's agent asks its LLM for 512 tokens per call, whatever the model says
    limits: SessionLimits = SessionLimits()
    gt_timeout_s: float = 120.0  # the reference runs each gold cell with a 120 s timeout
    data_dir: str | None = None  # CIBench's datasources folder, visible in the session's working directory
    sandbox: str = "bwrap"  # --code-sandbox: the OS sandbox the session runs in (rlimits only when asked for)
    source: str = "the reference's CIBench agent (CIReAct, ReAct protocol, IPythonInterpreter, max_turn=3)"


def extract_code(text: str) -> str:
    """The code of an action input: a fenced block, else a `backticked` span, else ``{"code": ...}``, else as is."""
    m = re.search(r"```[^\n]*\n(.+?)```", text, re.DOTALL)
    if m:
        return m.group(1)
    m = re.search(r"`([^`]*)`", text, re.DOTALL)
    if m:
        return m.group(1)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict) and isinstance(value.get("code"), str):
        return value["code"]
    return text


def interpreter_text(cell: CellResult) -> tuple[str, str]:
    """The interpreter's result text and image links, in the reference's shape (one fenced block per output)."""
    text = "".join(f"\n\n{kind}:\n\n```\n{out}\n```" for kind, out in cell.outputs if out)
    images = "".join(f"\n\n![fig-{n:03d}]({p})" for n, p in enumerate(cell.images, 1))
    return text.lstrip("\n"), images.lstrip("\n")


def run_code_action(session: PythonSession, command: str, tool: str = TOOL) -> dict[str, Any]:
    """One ``IPythonInterpreter`` call as a step record (``state`` 0 when the code ran without an error)."""
    code = extract_code(command)
    step: dict[str, Any] = {"type": tool, "args": {"text": command, "extract_code": code}, "result": None,
                            "thought": None, "state": API_ERROR, "errmsg": None, "valid": VALID_OPEN}
    if not code:
        step["errmsg"] = EMPTY_CODE_MSG
        return step
    cell = session.run(code)
    text, images = interpreter_text(cell)
    if cell.ok:
        step.update(result={"text": text or NO_OUTPUT_MSG, "image_path": images}, state=SUCCESS)
    else:
        step["errmsg"] = repr(text)
    return step


def _response_text(step: Mapping[str, Any]) -> str:
    return step["result"]["text"] if step["state"] == SUCCESS else str(step["errmsg"])


Message = tuple[str, str]  # (role, content), role one of system / user / assistant


def to_dialogue(messages: Sequence[Message]) -> Dialogue:
    """The agent's messages as a dialogue for the model's meta template (leading system messages as its begin)."""
    roles = {"system": "SYSTEM", "user": "HUMAN", "assistant": "BOT"}
    begin: list[Any] = []
    rnd: list[Any] = []
    for role, content in messages:
        (begin if role == "system" and not rnd else rnd).append(Turn(roles[role], content))
    items: list[Any] = []
    if begin:
        items += [SectionMark("begin", "begin"), *begin, SectionMark("begin", "end")]
    items += [SectionMark("round", "begin"), *rnd, SectionMark("round", "end")]
    return Dialogue(tuple(items))


@dataclass
class AgentTurn:
    """One user message answered: the reference's record fields for it, and the model's raw replies."""

    origin_prompt: str
    prediction: str
    steps: list[dict[str, Any]]
    gold: str
    replies: list[str] = field(default_factory=list)


@dataclass
class AgentResult:
    index: int
    turns: list[AgentTurn] = field(default_factory=list)
    error: str | None = None  # a model call that failed: the chat stopped there
    calls: int = 0
    restarts: int = 0  # cells that found their session ended (a timeout or limit) and ran in a fresh one


class AgentConversation:
    """One row's chat driven through the agent: a generator of prompts (message lists) that takes the replies."""

    def __init__(self, conv: Any, settings: AgentSettings, infer_mode: str, *, image_dir: str | None = None) -> None:
        self.conv = conv
        self.settings = settings
        self.mode = infer_mode
        self.session = PythonSession(settings.limits, data_dir=settings.data_dir, image_dir=image_dir,
                                     sandbox=settings.sandbox)
        self.result = AgentResult(conv.index)
        self.system = settings.protocol.system_prompt({settings.tool_name: settings.tool_description})

    def _user(self, k: int) -> str:
        pos = self.conv.bots[k]
        return self.conv.messages[pos - 1][1] if pos > 0 else ""

    def _gt(self, content: str) -> list[Message]:
        """A gold cell as the reference replays it: run in the session, shown as a ReAct action and its response."""
        p = self.settings.protocol
        thought, code = content.split(GT_SPLIT, 1)
        said = (f"{p.thought} {thought}\n{p.action} {self.settings.tool_name}\n"
                f"{p.action_input}```python\n{code}\n```\n")
        limits = self.session.limits
        self.session.limits = replace(limits, cell_timeout_s=self.settings.gt_timeout_s)
        try:
            step = run_code_action(self.session, f"```python\n{code}\n```\n", self.settings.tool_name)
        finally:
            self.session.limits = limits
        return [("assistant", said), ("system", p.format_response(_response_text(step)))]

    def run(self) -> Generator[list[Message], str, None]:
        msgs = self.conv.messages
        prefix = list(msgs[:self.conv.bots[0] - 1]) if self.conv.bots[0] > 0 else []
        history: list[Message] = list(prefix)
        prev = 0
        for k, pos in enumerate(self.conv.bots):
            if self.mode == "every_with_gt":
                for j in range(prev, pos - 1):
                    role, content = msgs[j]
                    if role == "assistant":
                        history += self._gt(content)
                    elif role == "user":
                        history.append((role, content))
                session = list(history)
            else:
                session = history  # the agent's own history, grown by each turn
            user = self._user(k)
            turn = AgentTurn(user, APOLOGY, [], msgs[pos][1])
            self.result.turns.append(turn)
            yield from self._chat(user, session, turn)
            if self.mode == "every_with_gt":
                history.append(("user", user))
                prev = pos

    def _chat(self, user: str, session: list[Message], turn: AgentTurn) -> Generator[list[Message], str, None]:
        """CIReAct's turn: attempts until an action succeeds, at most ``max_turn`` model calls."""
        p, s = self.settings.protocol, self.settings
        session.append(("user", user))
        inner: list[Message] = []
        for _attempt in range(s.max_turn):
            reply = yield [("system", self.system), *session, *inner]
            self.result.calls += 1
            turn.replies.append(reply)
            inner.append(("assistant", reply))
            thought, action, arg = p.parse(reply)
            step: dict[str, Any]
            if action == "":
                step = {"type": "FinishAction", "args": {"text": arg}, "result": {"text": arg}, "thought": thought,
                        "state": SUCCESS, "errmsg": None, "valid": VALID_FINISH}
            elif action is None:
                step = {"type": "NoAction", "args": {"text": ""}, "result": None, "thought": thought,
                        "state": API_ERROR, "errmsg": NO_ACTION_MSG, "valid": VALID_INVALID}
            elif action == s.tool_name:
                before = self.session.started
                step = run_code_action(self.session, arg, s.tool_name)
                step["thought"] = thought
                if self.session.started > before > 0:
                    self.result.restarts += 1
            else:
                step = {"type": "InvalidAction", "args": {"text": arg}, "result": None, "thought": thought,
                        "state": API_ERROR, "errmsg": INVALID_ACTION_MSG, "valid": VALID_INVALID}
            turn.steps.append(step)
            if step["state"] == SUCCESS:
                session += [("assistant", reply), ("system", p.format_response(step["result"]["text"]))]
                turn.prediction = step["result"]["text"]
                return
            inner.append(("system", p.format_response(_response_text(step))))
        session.append(("assistant", APOLOGY))

    def close(self) -> None:
        self.session.close()


Generate = Callable[[list[Any]], Sequence[Any]]


def run_agents(convs: Sequence[AgentConversation], generate: Generate, render: Callable[[Dialogue], Any], *,
               on_turn: Callable[[int], None] | None = None, workers: int = 4) -> list[AgentResult]:
    """Drive the conversations in waves: the next call of every live chat goes to the model as one batch, then
    each reply is acted on (its code run) in parallel. A failed call ends its chat; ``on_turn(n)`` counts turns
    finished (or abandoned)."""
    live: dict[int, tuple[AgentConversation, Generator[list[Message], str, None], list[Message]]] = {}
    told: dict[int, int] = {}  # turns already counted, per conversation

    def tell(n: int, upto: int) -> None:
        if on_turn is not None and upto > told.get(n, 0):
            on_turn(upto - told.get(n, 0))
        told[n] = max(upto, told.get(n, 0))

    def advance(gen: Generator[list[Message], str, None], reply: str | None) -> list[Message] | None:
        try:
            return next(gen) if reply is None else gen.send(reply)
        except StopIteration:
            return None

    try:
        for n, c in enumerate(convs):
            gen = c.run()
            first = advance(gen, None)
            if first is not None:
                live[n] = (c, gen, first)
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            while live:
                order = list(live)
                replies = list(generate([render(to_dialogue(live[n][2])) for n in order]))
                if len(replies) != len(order):
                    raise DataError(f"the model returned {len(replies)} replies for {len(order)} prompts")
                moves = {}
                for n, r in zip(order, replies):
                    c, gen, _ = live[n]
                    if r is None or isinstance(r, BaseException):
                        c.result.error = (f"{type(r).__name__}: {r}" if isinstance(r, BaseException)
                                          else "request failed")
                        gen.close()
                        del live[n]
                        tell(n, len(c.conv.bots))  # the turns never finished still close the progress bar
                        continue
                    moves[n] = pool.submit(advance, gen, str(r))
                for n, fut in moves.items():
                    c, gen, _ = live[n]
                    nxt = fut.result()
                    if nxt is None:
                        del live[n]
                        tell(n, len(c.conv.bots))
                        continue
                    live[n] = (c, gen, nxt)
                    tell(n, len(c.result.turns) - 1)  # a new turn started: those before it are finished
    finally:
        for c in convs:
            c.close()
    return [c.result for c in convs]


MAX_SESSIONS = 8  # conversations (each with its Python process) alive at once


class AgentInferencer:
    """AgentInferencer ``every`` / ``every_with_gt`` for one dataset × model: the rows' chats, the agent, the loop."""

    def __init__(self, dataset: Any, model: Any, infer_mode: str | None, settings: AgentSettings = AgentSettings(), *,
                 file: str | None = None) -> None:
        from promptweave.forms.chat_loop import ChatDialogueTemplate

        if infer_mode not in MODES:
            raise UnsupportedError("unknown AgentInferencer infer_mode", file=file,
                                   field="infer_cfg.inferencer.infer_mode", value=infer_mode,
                                   expected=" or ".join(map(repr, MODES)))
        self.dataset, self.model, self.infer_mode, self.settings = dataset, model, infer_mode, settings
        self.file = file or getattr(dataset, "file", None)
        where = f"{dataset.field}.reader_cfg" if getattr(dataset, "field", None) else "reader_cfg"
        self.template = ChatDialogueTemplate(dataset.reader.input_columns, file=self.file, field=where)

    def conversation(self, index: int) -> Any:
        try:
            row = self.dataset.test[index]
        except IndexError:
            raise DataError(f"row {index} is out of range: the test split has {len(self.dataset.test)} rows",
                            file=self.file, field="test", value=index) from None
        conv = self.template.conversation(row, index=index, file=self.file)
        for pos in conv.bots:
            if pos == 0 or conv.messages[pos - 1][0] != "user":
                raise DataError("each assistant message of an agent chat must follow a user message (the agent "
                                "answers that message)", file=self.file,
                                field=f"test[{index}].{self.template.column}[{pos}]")
        if self.infer_mode == "every_with_gt":
            check_gold_cells(conv, file=self.file, column=self.template.column)
        return conv

    def render(self, prompt: Dialogue) -> Any:
        """What the model receives. A chat API gets the agent's messages as they are (system / user / assistant,
        the observations as system messages, as Lagent sends them); a text model gets them through its meta
        template, an observation taking the SYSTEM role where the template's rounds have one, else HUMAN's."""
        from promptweave.engine.builder import render_prompt

        if self.model.kind == "api":  # the prompt side of the model (engine.spec.ModelSpec), not its backend
            return [{"role": t.role, "prompt": t.prompt} for t in prompt.items if isinstance(t, Turn)]
        rounds = self.model.meta.round_index if self.model.meta is not None else {}
        if "SYSTEM" not in rounds:
            depth, items = 0, []
            for it in prompt.items:
                if isinstance(it, SectionMark):
                    depth = 1 if (it.section, it.pos) == ("round", "begin") else depth
                elif isinstance(it, Turn) and depth and it.role == "SYSTEM":
                    it = Turn("HUMAN", it.prompt)
                items.append(it)
            prompt = Dialogue(tuple(items))
        return render_prompt(prompt, self.model, "gen")

    def run_cached(self, model: Any, cache: Any, params: Any, indices: Sequence[int],
                   progress: Callable[[int], None] | None = None, *,
                   image_root: Path | None = None) -> list[AgentResult]:
        """Run these rows' chats on ``model`` through the response cache (a rerun re-sends only unfinished calls;
        the code is run again, which rebuilds each session's state)."""
        from promptweave.forms.turn_loop import CachedGenerate

        gen = CachedGenerate(model, replace(params, max_out_len=self.settings.max_out_len), cache, None)
        out: list[AgentResult] = []
        idx = list(indices)
        for start in range(0, len(idx), MAX_SESSIONS):
            convs = [AgentConversation(self.conversation(i), self.settings, self.infer_mode,
                                       image_dir=image_dir_for(image_root, self.dataset.abbr, i))
                     for i in idx[start:start + MAX_SESSIONS]]
            out += run_agents(convs, gen, self.render, on_turn=progress)
        return out

    def turn_count(self, index: int) -> int:
        return len(self.conversation(index))

    def turn_prompts(self, index: int) -> list[Any]:
        """The first call of each turn of row ``index``, for ``view`` (nothing runs: what only the agent's replies
        or the interpreter would give shows as a ``<...>`` placeholder)."""
        from promptweave.forms.turn_loop import TurnView

        conv = self.conversation(index)
        p, s = self.settings.protocol, self.settings
        system = p.system_prompt({s.tool_name: s.tool_description})
        out: list[TurnView] = []
        history: list[Message] = []
        for k, pos in enumerate(conv.bots):
            user = conv.messages[pos - 1][1]
            d = to_dialogue([("system", system), *history, ("user", user)])
            out.append(TurnView(k, d, self.render(d), conv.messages[pos][1]))
            if self.infer_mode == "every":
                said = f"<the agent's reply to turn {k}>"
            else:
                thought, code = conv.messages[pos][1].split(GT_SPLIT, 1)
                said = (f"{p.thought} {thought}\n{p.action} {s.tool_name}\n"
                        f"{p.action_input}```python\n{code}\n```\n")
            history += [("user", user), ("assistant", said),
                        ("system", p.format_response(f"<the interpreter's output for turn {k}>"))]
        return out


def agent_turns_inferencer(dataset: Any, model: Any, *, file: str | None = None) -> AgentInferencer | None:
    """The agent for a dataset whose inferencer is AgentInferencer every / every_with_gt, else None (for ``view``)."""
    from promptweave.compat.inferencers import inferencer_name, resolve_inferencer

    inf = dataset.inferencer
    if resolve_inferencer(inferencer_name(inf.type), inf.settings, file=file)[0].mode != "agent":
        return None
    return AgentInferencer(dataset, model, inf.settings.get("infer_mode"), default_data_dir(AgentSettings()),
                           file=file)


def check_gold_cells(conv: Any, *, file: str | None, column: str) -> None:
    """``every_with_gt`` replays each gold cell as ``thought**split**code``; a row without that shape is refused at
    plan time (the reference fails on it mid-run)."""
    for pos in conv.bots[:-1]:
        content = conv.messages[pos][1]
        if GT_SPLIT not in content:
            raise DataError("AgentInferencer every_with_gt replays each assistant message as a gold code cell "
                            f"'<thought>{GT_SPLIT}<code>' (CIBench's layout); this one has no {GT_SPLIT!r}",
                            file=file, field=f"test[{conv.index}].{column}[{pos}]", value=content[:80],
                            expected=f"'<thought>{GT_SPLIT}<code>'")


def mark_refused(tasks: Sequence[Any], allow_code_exec: bool) -> None:
    """For ``run --dry-run``: without the flag an agent task is shown as refused (and why) instead of stopping the
    plan; the run itself refuses it before any call (:func:`require_code_exec`)."""
    if allow_code_exec:
        return
    for t in tasks:
        if getattr(t, "mode", None) == "agent" and t.refused is None:
            try:
                require_code_exec(False, field=t.settings.get("where") or "infer_cfg.inferencer", value=t.settings.get("infer_mode"))
            except CodeExecutionError as exc:
                t.refused = exc


# -- the agent's definition in a model config (OpenCompass's CodeAgent / LagentAgent) -------------------------------
AGENT_MODEL_TYPES = ("CodeAgent", "LagentAgent")


def _name(t: Any) -> str:
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return str(getattr(t, "__name__", t))


def agent_settings(mcfg: Mapping[str, Any] | None, *, file: str | None = None, where: str = "models[0]",
                   base: AgentSettings = AgentSettings()) -> AgentSettings:
    """The agent of a model config with ``type=CodeAgent`` / ``LagentAgent`` (its ``agent_type``, ``max_turn``,
    ``protocol`` and ``actions``); a plain model gets the reference's CIBench agent (``base``)."""
    if not isinstance(mcfg, Mapping) or _name(mcfg.get("type")) not in AGENT_MODEL_TYPES:
        return base
    agent_type = _name(mcfg.get("agent_type", "ReAct"))
    if agent_type not in ("CIReAct", "ReAct"):
        raise UnsupportedError("only the CIReAct / ReAct agents are supported for AgentInferencer every / "
                               "every_with_gt", file=file, field=f"{where}.agent_type", value=agent_type,
                               expected="CIReAct")
    out = base
    mt = mcfg.get("max_turn", 3)
    if isinstance(mt, bool) or not isinstance(mt, int) or mt < 1:
        raise UnsupportedError("max_turn must be a positive whole number", file=file, field=f"{where}.max_turn",
                               value=mt)
    out = replace(out, max_turn=mt, source=f"the agent of {where} ({agent_type}, max_turn={mt})")
    proto = mcfg.get("protocol")
    if isinstance(proto, Mapping):
        kw: dict[str, Any] = {}
        for key, attr in (("call_protocol", "call_protocol"), ("force_stop", "force_stop")):
            if isinstance(proto.get(key), str):
                kw[attr] = proto[key]
        for key in ("thought", "action", "action_input", "finish"):
            v = proto.get(key)
            if isinstance(v, Mapping) and isinstance(v.get("begin"), str):
                kw[key] = v["begin"]
        resp = proto.get("response")
        if isinstance(resp, Mapping):
            if isinstance(resp.get("begin"), str):
                kw["response"] = resp["begin"]
            if isinstance(resp.get("end"), str):
                kw["response_end"] = resp["end"]
        out = replace(out, protocol=ReActProtocol(**{**out.protocol.__dict__, **kw}))
    actions = mcfg.get("actions")
    if isinstance(actions, (list, tuple)):
        tools = [a for a in actions if isinstance(a, Mapping)]
        names = [_name(a.get("type")) for a in tools]
        if names != [TOOL]:
            raise UnsupportedError("AgentInferencer every / every_with_gt runs one action, IPythonInterpreter",
                                   file=file, field=f"{where}.actions", value=names, expected=f"[{TOOL}]")
        a = tools[0]
        if isinstance(a.get("description"), str):
            out = replace(out, tool_description=a["description"])
        udd = a.get("user_data_dir")
        if isinstance(udd, str) and udd and udd != "ENV":
            out = replace(out, data_dir=udd)
        t = a.get("timeout")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
            out = replace(out, limits=replace(out.limits, cell_timeout_s=float(t)))
    return out


DEFAULT_DATA_DIR = "./data/cibench_dataset/datasources"  # where the reference's CIBench configs put it


def default_data_dir(settings: AgentSettings) -> AgentSettings:
    """The interpreter's data folder when the agent names none: ``$USER_DATA_DIR`` (the reference's ``'ENV'``),
    else CIBench's ``./data/cibench_dataset/datasources`` under the working directory when it exists."""
    import os

    from promptweave.sandbox.env import read_env

    if settings.data_dir is not None:
        return settings
    # through the one env rule, so the read is listed by --dry-run like every other a config causes
    found = read_env("USER_DATA_DIR", purpose="the agent's data folder") or (DEFAULT_DATA_DIR if os.path.isdir(DEFAULT_DATA_DIR) else None)
    return replace(settings, data_dir=found) if found else settings


def agent_llm(mcfg: Any) -> Any:
    """The model a CodeAgent / LagentAgent config wraps (its ``llm``), else the config itself."""
    if isinstance(mcfg, Mapping) and _name(mcfg.get("type")) in AGENT_MODEL_TYPES and isinstance(mcfg.get("llm"),
                                                                                               Mapping):
        llm = dict(mcfg["llm"])
        llm.setdefault("abbr", mcfg.get("abbr"))
        return llm
    return mcfg


def image_dir_for(root: Path | None, dataset: str, index: int) -> str | None:
    if root is None:
        return None
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", dataset).strip("._") or "dataset"
    return str(root / safe / str(index))


__all__ = ["AgentConversation", "AgentInferencer", "AgentResult", "AgentSettings", "AgentTurn", "ReActProtocol", "agent_llm",
           "agent_settings", "check_gold_cells", "extract_code", "interpreter_text", "mark_refused", "require_code_exec",
           "run_agents", "run_code_action", "to_dialogue"]
