"""Load and validate an LVE test folder (``test.json``, ``.prompt`` files, ``checker/``).

Everything the folder alone can show is checked here, so an invalid test is refused
before any instance is filled or any model is called. Where LVE and its documentation
disagree we follow the documentation: a ``.prompt`` file may hold one JSON object over
several lines, a ``multi_run_prompt`` element needs no ``name``, may use ``prompt_file``,
and its ``repetitions`` are honoured.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from promptweave.errors import LVEError
from promptweave.lve import checkers as core
from promptweave.lve.custom import defined_classes
from promptweave.lve.model import (
    CheckerSpec,
    LVELoadError,
    LVETest,
    Message,
    PromptSpec,
    Role,
    RunSpec,
)
from promptweave.lve.template import Template, TemplateSyntaxError, compile_template

PLACEHOLDER = "<please fill in>"
TAG_NAMES = ("severity", "jailbreak", "paper")
SEVERITIES = ("low", "medium", "high")

# Model providers LVE has backends for, by name prefix; ``system`` says whether their prompt format
# has a system role (LVE's Mistral format raises on one).
MODEL_FAMILIES: tuple[tuple[str, bool], ...] = (
    ("openai/", True), ("meta/", True), ("hf-meta/", True), ("mistralai/", False), ("hf-mistralai/", False),
    ("microsoft/", True), ("hf-microsoft/", True), ("dummy/", True),
)


def _err(message: str, file: Path | str | None, field: str | None = None, **kw: Any) -> LVELoadError:
    return LVELoadError(message, file=str(file) if file is not None else None, field=field, **kw)


def find_test_dirs(root: Path) -> list[Path]:
    """Every folder holding a ``test.json`` at or under ``root`` (sorted)."""
    root = Path(root)
    if root.is_file():
        return [root.parent] if root.name == "test.json" else []
    if (root / "test.json").is_file():
        return [root]
    return sorted(p.parent for p in root.rglob("test.json"))


def load_test(path: str | Path) -> LVETest:
    """Load the LVE test at ``path`` (its folder or its ``test.json``); raise :class:`LVELoadError`
    naming the file and field for anything invalid."""
    path = Path(path)
    folder = path.parent if path.name == "test.json" and path.is_file() else path
    test_file = folder / "test.json"
    if not test_file.is_file():
        raise _err("no test.json in this folder", folder)
    try:
        text = test_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _err(f"cannot read test.json: {exc}", test_file) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _err(f"test.json is not valid JSON: {exc}", test_file) from None
    if not isinstance(raw, dict):
        raise _err("test.json must hold a JSON object", test_file, value=type(raw).__name__)
    return _build(raw, folder.resolve(), test_file)


def _build(raw: dict[str, Any], folder: Path, test_file: Path) -> LVETest:
    for key in ("description", "model"):
        if key not in raw or raw[key] is None:
            raise _err(f"missing required field '{key}'", test_file, key)
        if not isinstance(raw[key], str):
            raise _err(f"'{key}' must be a string", test_file, key, value=raw[key])
    model = raw["model"]
    family = next((f for f in MODEL_FAMILIES if model.startswith(f[0])), None)
    if family is None:
        raise _err("unknown model: LVE has no backend for it", test_file, "model", value=model,
                   expected="a name starting with " + ", ".join(p for p, _ in MODEL_FAMILIES))
    author = raw.get("author")
    if author is not None and not isinstance(author, str):
        raise _err("'author' must be a string", test_file, "author", value=author)
    tags = _tags(raw.get("tags"), test_file)

    forms = [k for k in ("prompt", "prompt_file", "multi_run_prompt") if raw.get(k) is not None]
    if len(forms) != 1:
        raise _err("exactly one of prompt, prompt_file or multi_run_prompt must be given",
                   test_file, "/".join(forms) if forms else None,
                   value=forms if forms else None, expected="one prompt form")

    params = raw.get("prompt_parameters")
    if params is not None:
        if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
            raise _err("'prompt_parameters' must be a list of strings", test_file, "prompt_parameters", value=params)
        if params == [PLACEHOLDER]:
            raise _err("'prompt_parameters' has not been filled in yet", test_file, "prompt_parameters",
                       value=params)
        params = tuple(params)

    dma = raw.get("default_model_args")
    if dma is None:
        dma = {}
    if not isinstance(dma, dict):
        raise _err("'default_model_args' must be an object", test_file, "default_model_args", value=dma)

    checker = _checker(raw, folder, test_file, params)

    prompt: PromptSpec | None = None
    runs: tuple[RunSpec, ...] | None = None
    if forms[0] == "prompt":
        prompt = _messages(raw["prompt"], "prompt", test_file, params)
    elif forms[0] == "prompt_file":
        prompt = _prompt_file(raw["prompt_file"], "prompt_file", folder, test_file, params)
    else:
        runs = _runs(raw["multi_run_prompt"], folder, test_file, params)

    prompts = [prompt] if prompt is not None else [r.prompt for r in runs or ()]
    if not family[1]:
        for spec in prompts:
            for i, msg in enumerate(spec.messages):
                if msg.role == Role.system:
                    raise _err(f"model '{model}' has no system role in its prompt format",
                               spec.file, f"{spec.where}[{i}].role", value="system")

    if checker.multi_run is not None and checker.multi_run != (runs is not None):
        if checker.multi_run:
            raise _err(f"{checker.name} judges several runs: it needs multi_run_prompt", test_file,
                       "checker_args.checker_name", value=checker.name)
        raise _err(f"{checker.name} judges one conversation: it cannot be used with multi_run_prompt",
                   test_file, "checker_args.checker_name", value=checker.name)

    return LVETest(path=folder, test_file=test_file, description=raw["description"], model=model,
                   checker=checker, prompt_parameters=params, default_model_args=dict(dma),
                   prompt=prompt, runs=runs, author=author, tags=tags, raw=raw)


def _tags(tags: Any, test_file: Path) -> list[dict[str, Any]]:
    if tags is None:
        return []
    if not isinstance(tags, list):
        raise _err("'tags' must be a list", test_file, "tags", value=tags)
    for i, tag in enumerate(tags):
        if not isinstance(tag, dict) or "name" not in tag or "value" not in tag:
            raise _err("a tag must be an object with 'name' and 'value'", test_file, f"tags[{i}]", value=tag)
        if tag["name"] not in TAG_NAMES:
            raise _err("invalid tag name", test_file, f"tags[{i}].name", value=tag["name"],
                       expected=", ".join(TAG_NAMES))
        if tag["name"] == "severity" and tag["value"] not in SEVERITIES:
            raise _err("invalid severity", test_file, f"tags[{i}].value", value=tag["value"],
                       expected=", ".join(SEVERITIES))
    return tags


# --- messages and prompt files --------------------------------------------------------------------


def _message(obj: Any, where: str, file: Path) -> Message:
    if not isinstance(obj, dict):
        raise _err("a message must be a JSON object", file, where, value=obj)
    content = obj.get("content")
    if content is not None and not isinstance(content, str):
        raise _err("message content must be a string or null", file, f"{where}.content", value=content)
    if "role" in obj:
        role = obj["role"]
        if role not in ("user", "system", "assistant"):
            raise _err("invalid role (roles are case-sensitive; omit it for 'user')", file, f"{where}.role",
                       value=role, expected="user, system or assistant")
    else:
        role = "user"
    variable = obj.get("variable")
    if variable is not None and not isinstance(variable, str):
        raise _err("'variable' must be a string", file, f"{where}.variable", value=variable)
    image_url = obj.get("image_url")
    if image_url is not None and not isinstance(image_url, str):
        raise _err("'image_url' must be a string", file, f"{where}.image_url", value=image_url)
    return Message(content=content, role=Role(role), variable=variable, image_url=image_url)


def _messages(value: Any, where: str, file: Path, params: tuple[str, ...] | None,
              parsed: list[Message] | None = None) -> PromptSpec:
    if parsed is None:
        if isinstance(value, str):
            raise _err("a prompt must be a list of messages (a string is not a prompt; use prompt_file for "
                       "plain text)", file, where, value=value)
        if not isinstance(value, list):
            raise _err("a prompt must be a list of messages", file, where, value=value)
        parsed = [_message(m, f"{where}[{i}]", file) for i, m in enumerate(value)]
    if not parsed:
        raise _err("the prompt has no messages", file, where)
    messages = list(parsed)
    appended = False
    if messages[-1].role != Role.assistant:
        messages.append(Message(content=None, role=Role.assistant, variable="response"))
        appended = True
    assistants = [m for m in messages if m.role == Role.assistant]
    if len(assistants) > 1:
        for i, m in enumerate(messages):
            if m.role == Role.assistant and m.variable is None:
                raise _err("with more than one assistant message (counting the reply slot appended after a "
                           "final non-assistant message), every assistant message needs a 'variable'",
                           file, f"{where}[{i}].variable")
    templates: list[tuple[Template | None, Template | None]] = []
    for i, m in enumerate(messages):
        if m.role == Role.assistant:
            templates.append((None, None))
            continue
        if m.content is None:
            raise _err(f"a {m.role.value} message needs content", file, f"{where}[{i}].content")
        content_t = _template(m.content, file, f"{where}[{i}].content", params)
        image_t = _template(m.image_url, file, f"{where}[{i}].image_url", params) if m.image_url is not None else None
        templates.append((content_t, image_t))
    return PromptSpec(tuple(messages), tuple(templates), where, str(file), appended)


def _template(text: str, file: Path, field: str, params: tuple[str, ...] | None) -> Template:
    template = compile_template(text, file=str(file), field=field)
    for name in template.names:
        if params is None or name not in params:
            declared = ", ".join(params) if params else "none declared"
            raise _err(f"placeholder {{{name}}} is not a prompt parameter, so it can never be filled "
                       f"(prompt_parameters: {declared}); write literal braces as '{{{{' and '}}}}'",
                       file, field, value=name)
    return template


def _resolve_inside(folder: Path, name: Any, test_file: Path, field: str) -> Path:
    if not isinstance(name, str) or not name or "\x00" in name:  # NUL is no file name (fuzz)
        raise _err("must be a file name", test_file, field, value=name)
    candidate = Path(name)
    if candidate.is_absolute():
        raise _err("prompt files are resolved inside the test folder; absolute paths are refused",
                   test_file, field, value=name)
    try:  # a name the OS refuses (too long, ...) is a typed error (fuzz)
        resolved = (folder / candidate).resolve()
        found = resolved.is_file()
    except OSError as exc:
        raise _err(f"cannot use this prompt file name: {exc.strerror}", test_file, field, value=name) from None
    if not resolved.is_relative_to(folder):
        raise _err("prompt file lies outside the test folder", test_file, field, value=name)
    if not name.endswith(".prompt"):
        raise _err("a prompt file must end in .prompt", test_file, field, value=name)
    if not found:
        raise _err("prompt file not found in the test folder", test_file, field, value=name)
    return resolved


def parse_prompt_text(text: str, file: Path | str, where: str) -> list[Message] | None:
    """Parse a ``.prompt`` file's text (universal newlines already applied). ``None`` = the
    ``<please fill in>`` placeholder."""
    if re.fullmatch(r"\s*<please fill in>\s*", text):
        return None
    lines = text.splitlines(keepends=True)
    decoded: list[Any] = []
    for line in lines:
        try:
            decoded.append(json.loads(line))
        except json.JSONDecodeError:
            break
    else:
        # Every line is JSON: JSON lines, one message object per line.
        for i, obj in enumerate(decoded):
            if not isinstance(obj, dict):
                raise _err("a prompt file whose lines are all JSON must hold one message object per line",
                           file, f"line {i + 1}", value=obj)
        return [_message(obj, f"line {i + 1}", Path(file)) for i, obj in enumerate(decoded)]
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return [Message(content=text, role=Role.user)]
    if not isinstance(whole, dict):
        raise _err("a JSON prompt file must hold one message object (or one per line)", file, None,
                   value=type(whole).__name__)
    return [_message(whole, "message", Path(file))]


def _prompt_file(name: Any, field: str, folder: Path, test_file: Path, params: tuple[str, ...] | None) -> PromptSpec:
    path = _resolve_inside(folder, name, test_file, field)
    try:
        with open(path, encoding="utf-8") as fh:  # text mode: CRLF -> LF, as LVE reads it
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _err(f"cannot read prompt file: {exc}", path) from None
    messages = parse_prompt_text(text, path, field)
    if messages is None:
        raise _err("the prompt file still holds the '<please fill in>' placeholder", path, field)
    if not messages:
        raise _err("the prompt file is empty", path, field)
    return _messages(None, "message", path, params, parsed=messages)


def _runs(value: Any, folder: Path, test_file: Path, params: tuple[str, ...] | None) -> tuple[RunSpec, ...]:
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list) or not items:
        raise _err("multi_run_prompt must be a non-empty list of {prompt | prompt_file} objects", test_file,
                   "multi_run_prompt", value=value)
    runs: list[RunSpec] = []
    for i, item in enumerate(items):
        where = f"multi_run_prompt[{i}]"
        if not isinstance(item, dict):
            raise _err("a multi_run_prompt element must be an object", test_file, where, value=item)
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise _err("'name' must be a string", test_file, f"{where}.name", value=name)
        forms = [k for k in ("prompt", "prompt_file") if item.get(k) is not None]
        if len(forms) != 1:
            raise _err("each multi_run_prompt element needs exactly one of prompt or prompt_file", test_file,
                       where, value=forms or None)
        reps: Any = 1
        for key in ("repetitions", "repetition"):
            if key in item:
                reps = item[key]
        if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
            raise _err("'repetitions' must be a positive integer", test_file, f"{where}.repetitions", value=reps)
        if forms[0] == "prompt":
            spec = _messages(item["prompt"], f"{where}.prompt", test_file, params)
        else:
            spec = _prompt_file(item["prompt_file"], f"{where}.prompt_file", folder, test_file, params)
        runs.append(RunSpec(name, spec, reps))
    return tuple(runs)


# --- checker -------------------------------------------------------------------------------------


def _checker(raw: dict[str, Any], folder: Path, test_file: Path, params: tuple[str, ...] | None) -> CheckerSpec:
    args = raw.get("checker_args")
    if args is None:
        raise _err("missing required field 'checker_args'", test_file, "checker_args")
    if not isinstance(args, dict):
        raise _err("'checker_args' must be an object", test_file, "checker_args", value=args)
    name = args.get("checker_name")
    if name is None:
        raise _err("checker_args needs a 'checker_name'", test_file, "checker_args.checker_name")
    if not isinstance(name, str) or name == PLACEHOLDER:
        raise _err("checker_name has not been filled in", test_file, "checker_args.checker_name", value=name)
    rest = {k: v for k, v in args.items() if k != "checker_name"}

    custom_file = folder / "checker" / "checker.py"
    builtin = core.BUILTIN_CHECKERS.get(name)
    if custom_file.is_file():
        try:
            classes = defined_classes(custom_file)
        except LVEError as exc:
            raise _err(exc.message, custom_file) from None
        if name in classes:
            builtin = None
        elif builtin is None:
            raise _err(f"checker '{name}' is neither a core checker nor defined in checker/checker.py",
                       test_file, "checker_args.checker_name", value=name,
                       expected=", ".join(sorted(core.BUILTIN_CHECKERS) + classes))
    elif builtin is None:
        raise _err(f"unknown checker '{name}' (and no checker/checker.py in the test folder)", test_file,
                   "checker_args.checker_name", value=name, expected=", ".join(sorted(core.BUILTIN_CHECKERS)))

    code_args = builtin.code_args if builtin else frozenset()
    templates: dict[str, Template] = {}
    preview: dict[str, Any] = {}
    for key, value in rest.items():
        if not isinstance(value, str):
            preview[key] = value
            continue
        try:
            template = compile_template(value, file=str(test_file), field=f"checker_args.{key}")
        except TemplateSyntaxError as exc:
            raise LVELoadError(exc.message, file=exc.file, field=exc.field, value=value) from None
        templates[key] = template
        if key in code_args:
            # Code (a lambda) is never filled with values: its {placeholders} reach the checker as written
            # (inside an f-string they read the parameter at call time), only {{ }} escapes are resolved.
            preview[key] = template.as_written()
        else:
            preview[key] = template.fill({}) if template.is_literal else core.UNKNOWN

    if builtin is not None:
        try:
            builtin.check_arg_names(list(rest))
            builtin.validate(preview, prompt_parameters=params)
        except LVELoadError as exc:
            raise LVELoadError(exc.message, file=str(test_file), field=exc.field, value=exc.value,
                               expected=exc.expected) from None
        return CheckerSpec(name, rest, templates, builtin=builtin, multi_run=builtin.multi_run)
    return CheckerSpec(name, rest, templates, custom_file=custom_file, multi_run=None)
