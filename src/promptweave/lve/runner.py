"""Fill an LVE test with an instance's arguments, run it through a chat model, check the replies.

Three stages, each with its own error class: :func:`prepare` (fill: everything that
depends on the instance args, checked before any model call), :func:`execute` (model
calls: each assistant message with ``content: null`` is one call with everything
before it) and the check (the checker's verdict; a failure there is recorded on the
result, the replies are kept).
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from promptweave.errors import LVEError, ModelError
from promptweave.lve import checkers as core
from promptweave.lve.custom import UntrustedCheckerError, load_custom_checker
from promptweave.lve.model import LVECheckError, LVEFillError, LVETest, Message, Role
from promptweave.lve.template import MissingValueError, fill_twice
from promptweave.models.base import ChatModel, GenerationParams


def split_instance_args(args: dict[str, Any], prompt_parameters: Sequence[str] | None
                        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """LVE's split: declared prompt parameters fill the prompt, every other argument goes to the
    model; null values are dropped from both."""
    params: dict[str, Any] = {}
    model_args: dict[str, Any] = {}
    declared = set(prompt_parameters or ())
    for key, value in args.items():
        if value is None:
            continue
        (params if key in declared else model_args)[key] = value
    return params, model_args


_NUMERIC = {"temperature": float, "top_p": float}


def generation_params(model_args: dict[str, Any]) -> GenerationParams:
    """Map LVE model arguments (OpenAI / Hugging Face names) onto :class:`GenerationParams`."""
    rest = dict(model_args)
    values: dict[str, Any] = {}
    for key, cast in _NUMERIC.items():
        if key in rest:
            value = rest.pop(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LVEFillError("must be a number", field=f"args.{key}", value=value)
            values[key] = cast(value)
    for key in ("max_tokens", "max_new_tokens"):
        if key in rest:
            value = rest.pop(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LVEFillError("must be a positive integer", field=f"args.{key}", value=value)
            values["max_out_len"] = value
    if "seed" in rest:
        values["seed"] = rest.pop("seed")
    if "stop" in rest:
        stop = rest.pop("stop")
        values["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
    values.setdefault("temperature", 0.0)
    return GenerationParams(**values, extra=rest)


@dataclass
class PreparedRun:
    """An instance filled in and ready to send: the conversations (multi-run: one per run and
    repetition) with their assistant slots still empty, the model settings and the checker."""

    test: LVETest
    args: dict[str, Any]
    param_values: dict[str, Any]
    model_args: dict[str, Any]
    params: GenerationParams
    conversations: list[list[Message]]
    checker: Any | None
    checker_status: str | None = None


@dataclass
class RunResult:
    """One instance run: what was sent, what came back, the verdict."""

    prepared: PreparedRun
    prompt_out: list[list[Message]]
    requests: list[list[dict[str, Any]]]
    response: Any
    is_safe: bool | None
    checker_error: str | None = None
    run_info: dict[str, Any] = field(default_factory=dict)

    def to_instance(self) -> dict[str, Any]:
        """The run as an LVE instance line (``args``, ``response``, ``passed``, ``run_info``)."""
        out: dict[str, Any] = {"test_path": str(self.prepared.test.test_file), "args": self.prepared.args,
                               "response": self.response, "passed": self.is_safe, "run_info": self.run_info}
        if self.prepared.checker_status:
            out["checker_status"] = self.prepared.checker_status
        if self.checker_error:
            out["checker_error"] = self.checker_error
        return out


def fill_conversations(test: LVETest, param_values: dict[str, Any]) -> list[list[Message]]:
    conversations = []
    for spec in test.prompts():
        conv: list[Message] = []
        for i, (msg, (content_t, image_t)) in enumerate(zip(spec.messages, spec.templates)):
            if msg.role == Role.assistant:
                conv.append(msg.copy())  # never substituted
                continue
            where = f"{spec.where}[{i}]"
            try:
                content = content_t.fill(param_values, file=spec.file, field=f"{where}.content") if content_t else None
                image = image_t.fill(param_values, file=spec.file, field=f"{where}.image_url") if image_t else None
            except MissingValueError as exc:
                raise LVEFillError(exc.message, file=exc.file, field=exc.field, value=exc.value,
                                   expected=exc.expected) from None
            conv.append(Message(content=content, role=msg.role, variable=msg.variable, image_url=image))
        conversations.append(conv)
    return conversations


def _checker_args(test: LVETest, args: dict[str, Any], param_values: dict[str, Any]) -> dict[str, Any]:
    spec = test.checker
    out: dict[str, Any] = {}
    code_args = spec.builtin.code_args if spec.builtin else frozenset()
    for key, value in spec.args.items():
        template = spec.templates.get(key)
        if template is None:
            out[key] = value
            continue
        where = f"checker_args.{key}"
        try:
            if key in code_args:
                out[key] = template.as_written()  # code is never filled with values
            elif spec.builtin is core.ExactMatchChecker and key == "pattern":
                out[key] = fill_twice(template, args, param_values, file=str(test.test_file), field=where)
            else:
                out[key] = template.fill(args, file=str(test.test_file), field=where)
        except MissingValueError as exc:
            raise LVEFillError(exc.message, file=exc.file, field=exc.field, value=exc.value,
                               expected=exc.expected) from None
    return out


# Custom checkers that could not start here for environmental reasons (a missing package or model),
# remembered so a replay or conformance pass does not retry the import for every instance.
_UNAVAILABLE: dict[tuple[Any, str], str] = {}


def _build_checker(test: LVETest, args: dict[str, Any], param_values: dict[str, Any], *,
                   trust_checkers: bool, skip_unavailable: bool) -> tuple[Any | None, str | None]:
    spec = test.checker
    kwargs = _checker_args(test, args, param_values)
    file = str(test.test_file)
    if spec.builtin is not None:
        reason = spec.builtin.available()
        if reason:
            if skip_unavailable:
                return None, f"unavailable: {reason}"
            raise core.NeedsExtraError(reason, file=file, field="checker_args.checker_name")
        try:
            checker = spec.builtin(**kwargs)
        except core.NeedsExtraError as exc:
            if skip_unavailable:
                return None, f"unavailable: {exc.message}"
            raise
        except Exception as exc:  # e.g. a regex that only breaks once a value is filled in
            raise LVEFillError(f"{spec.name} cannot be built with these arguments: {exc}", file=file,
                               field="checker_args") from None
        check_params = getattr(checker, "check_params", None)
        if check_params is not None:
            try:
                check_params(param_values)
            except TypeError as exc:
                raise LVEFillError(f"the checker lambda cannot take this instance's parameters: {exc}",
                                   file=file, field="checker_args.func", value=sorted(param_values)) from None
        return checker, None

    assert spec.custom_file is not None
    cache_key = (spec.custom_file, spec.name)
    if skip_unavailable and cache_key in _UNAVAILABLE:
        return None, _UNAVAILABLE[cache_key]
    if not trust_checkers:
        raise UntrustedCheckerError(
            f"checker '{spec.name}' is Python code in {spec.custom_file}; it runs only with --trust-checkers "
            "(trust_checkers=True)", file=file, field="checker_args.checker_name", value=spec.name)
    try:
        cls = load_custom_checker(spec.custom_file, spec.name)
    except LVEError:
        raise
    except Exception as exc:  # the checker file failed to import (often a missing dependency)
        if skip_unavailable:
            _UNAVAILABLE[cache_key] = f"unavailable: custom checker failed to import: {type(exc).__name__}: {exc}"
            return None, _UNAVAILABLE[cache_key]
        raise LVEError(f"custom checker failed to import: {type(exc).__name__}: {exc}",
                       file=str(spec.custom_file)) from None
    multi = bool(getattr(cls, "multi_run", False))
    if multi != test.multi_run:
        raise LVEFillError(f"custom checker '{spec.name}' is {'a multi-run' if multi else 'a single-run'} "
                           "checker, which does not fit this test's prompt form", file=file,
                           field="checker_args.checker_name")
    sig = inspect.signature(cls)
    for name, p in sig.parameters.items():
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) \
                and name not in kwargs:
            raise LVEFillError(f"checker {spec.name} requires argument '{name}'", file=file,
                               field=f"checker_args.{name}")
    try:
        return cls(**kwargs), None
    except Exception as exc:
        if skip_unavailable:
            status = f"unavailable: custom checker failed to start: {type(exc).__name__}: {exc}"
            if isinstance(exc, (ImportError, OSError, core.NeedsExtraError)):
                _UNAVAILABLE[cache_key] = status  # an environment fault: same for every instance
            return None, status
        raise LVEError(f"custom checker {spec.name} failed to start: {type(exc).__name__}: {exc}",
                       file=str(spec.custom_file)) from None


def prepare(test: LVETest, args: dict[str, Any] | None = None, *, trust_checkers: bool = False,
            skip_unavailable_checker: bool = False) -> PreparedRun:
    """Fill ``test`` with one instance's ``args``; raise :class:`LVEFillError` (or another
    :class:`LVEError`) for anything wrong, before any model call."""
    args = dict(args or {})
    for key in args:
        if not isinstance(key, str):
            raise LVEFillError("argument names must be strings", field="args", value=key)
    param_values, model_args = split_instance_args(args, test.prompt_parameters)
    conversations = fill_conversations(test, param_values)
    merged = dict(test.default_model_args)
    merged.update(model_args)
    merged.setdefault("temperature", 0.0)
    params = generation_params(merged)
    checker, status = _build_checker(test, args, param_values, trust_checkers=trust_checkers,
                                     skip_unavailable=skip_unavailable_checker)
    return PreparedRun(test, args, param_values, merged, params, conversations, checker, status)


def response_of(conversation: Sequence[Message]) -> Any:
    """LVE's recorded response: the last message's content, or a ``{variable: content}`` dict of every
    assistant message when more than one assistant message is named."""
    named = [m for m in conversation if m.role == Role.assistant and m.variable is not None]
    if len(named) > 1:
        return {m.variable: m.content for m in conversation if m.role == Role.assistant}
    return conversation[-1].content


def execute(prepared: PreparedRun, model: ChatModel) -> RunResult:
    """Send every model call in order and judge the replies."""
    requests: list[list[dict[str, Any]]] = []
    outs: list[list[Message]] = []
    for template in prepared.conversations:
        conv = [m.copy() for m in template]
        for i, msg in enumerate(conv):
            if msg.role == Role.assistant and msg.content is None:
                sent = [m.to_request() for m in conv[:i]]
                replies = model.chat([sent], prepared.params)
                if len(replies) != 1 or not isinstance(replies[0], str):
                    raise ModelError(f"model {getattr(model, 'name', model)!r} returned {replies!r} for one "
                                     "conversation; expected one string")
                requests.append(sent)
                msg.content = replies[0]
        outs.append(conv)
    responses = [response_of(c) for c in outs]
    response: Any = responses if prepared.test.multi_run else responses[0]
    is_safe: bool | None = None
    error: str | None = None
    checker = prepared.checker
    if checker is not None:
        try:
            verdict = checker.is_safe(outs if prepared.test.multi_run else outs[0], prepared.param_values)
            is_safe = bool(verdict)
            # multi-run checkers get the list of run responses, as LVE documents
            response = checker.postprocess_response(response)
        except LVEError as exc:
            error = LVECheckError(exc.message, file=exc.file, field=exc.field).message
        except Exception as exc:  # a checker computing on an unexpected reply, e.g. int("five")
            error = f"{type(exc).__name__}: {exc}"
    run_info = {"promptweave": _version(), "model": getattr(model, "name", type(model).__name__),
                "timestamp": time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime())}
    return RunResult(prepared, outs, requests, response, is_safe, error, run_info)


def run_instance(test: LVETest, args: dict[str, Any] | None, model: ChatModel, *, trust_checkers: bool = False,
                 skip_unavailable_checker: bool = False) -> RunResult:
    """:func:`prepare` then :func:`execute`."""
    prepared = prepare(test, args, trust_checkers=trust_checkers, skip_unavailable_checker=skip_unavailable_checker)
    return execute(prepared, model)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("promptweave")
    except Exception:
        return "0+unknown"
