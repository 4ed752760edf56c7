"""Function calling (AISBench's ``BFCLV3FunctionCallInferencer``): each row's functions go to the model as tools.

A BFCL row holds ``question`` (JSON: a list of turns, each a list of ``{role, content}`` messages), ``function``
(JSON: BFCL function documents) and ``id`` (``<category>_<n>``). For single-turn categories the first turn's
messages are sent to an OpenAI-compatible chat endpoint with the functions as the request's ``tools``, in the
reference's function-calling path (``returns_tool_calls=True``):

- each function's description gets the BFCL language note (Python 3 / Java 8 SDK / JavaScript syntax); Java and
  JavaScript parameters become strings with their real type described in words;
- BFCL type names become OpenAPI ones (``dict`` -> ``object``, ``float`` -> ``number`` with ``format: float``,
  ``tuple`` -> ``array`` ...), nested properties and array items too; a ``.`` in a function name becomes ``_``
  (OpenAI refuses dots);
- the prediction is the reply's ``tool_calls`` as ``[{name: arguments_json}, ...]``, or the reply's text when it
  calls nothing (the BFCL evaluators then fail to decode it as calls, as the reference's do).

Multi-turn categories execute the model's calls against BFCL's simulated backends (Python classes of the
``bfcl_eval`` package) between turns; that is code, not data, so they are refused with a typed error. Local LM
backends have no tool-calling protocol here and are refused too.
"""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import DataError, UnsupportedError
from promptweave.infer.cache import ResponseCache, request_key
from promptweave.infer.failure import RowFailure
from promptweave.models.base import GenerationParams, backend_name, capabilities_of

# BFCL's parameter type names -> OpenAPI (JSON schema) types; unknown names become strings, as in BFCL
BFCL_TO_OPENAPI: Mapping[str, str] = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object",
    "Queue": "array", "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}


def category_of(row_id: Any) -> str:
    """``simple_12`` -> ``simple``; ``live_parallel_multiple_3-1-0`` -> ``live_parallel_multiple``."""
    return str(row_id).rsplit("_", 1)[0]


def is_multi_turn(category: str) -> bool:
    return "multi_turn" in category


def _language(category: str) -> str:
    if "javascript" in category:
        return "JavaScript"
    if "java" in category:
        return "Java"
    return "Python"


def language_notes(functions: Sequence[Mapping[str, Any]], category: str) -> list[dict[str, Any]]:
    """The functions with BFCL's per-language hints (a copy; the row's own data is left as it is)."""
    out = copy.deepcopy([dict(f) for f in functions])
    lang = _language(category)
    syntax = {"Python": "Python 3", "Java": "Java 8 SDK", "JavaScript": "JavaScript"}[lang]
    for f in out:
        f["description"] = str(f.get("description", "")) + f"\n Note that the provided function is in {syntax} syntax."
        if lang == "Python":
            continue
        props = (f.get("parameters") or {}).get("properties") or {}
        for value in props.values():
            if not isinstance(value, dict):
                continue
            t = value.get("type")
            desc = str(value.get("description", ""))
            if t == "any":
                desc += f" This parameter can be of any type of {lang} object in string representation."
            else:
                desc += f" This is {lang} {t} type parameter in string representation."
            if lang == "Java" and t in ("ArrayList", "Array") and isinstance(value.get("items"), dict):
                desc += (f" The list elements are of type {value['items'].get('type')}; they are not in string "
                         "representation.")
                del value["items"]
            if lang == "JavaScript":
                if t == "dict" and "properties" in value:
                    desc += (" The dictionary entries have the following schema; they are not in string "
                             f"representation. {json.dumps(value['properties'])}")
                    del value["properties"]
                if t == "array" and isinstance(value.get("items"), dict):
                    desc += (f" The list elements are of type {value['items'].get('type')}; they are not in "
                             "string representation.")
                    del value["items"]
            value["description"] = desc
            value["type"] = "string"
    return out


def _openapi_properties(props: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in props.items():
        if not isinstance(value, dict):
            out[key] = value
            continue
        v = dict(value)
        t = v.get("type")
        if t is None:
            v["type"] = "string"
        else:
            if t == "float":
                v["format"] = "float"
                v["description"] = str(v.get("description", "")) + " This is a float type value."
            v["type"] = BFCL_TO_OPENAPI.get(t, "string")
        if v["type"] in ("array", "object"):
            if isinstance(v.get("properties"), dict):
                v["properties"] = _openapi_properties(v["properties"])
            elif isinstance(v.get("items"), dict):
                v["items"] = _openapi_items(v["items"])
        out[key] = v
    return out


def _openapi_items(items: Mapping[str, Any]) -> dict[str, Any]:
    it = dict(items)
    if "type" in it:
        it["type"] = BFCL_TO_OPENAPI.get(it["type"], "string")
    if isinstance(it.get("properties"), dict):
        it["properties"] = _openapi_properties(it["properties"])
    if isinstance(it.get("items"), dict):
        it["items"] = _openapi_items(it["items"])
    return it


def to_openai_tools(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function documents as the ``tools`` of an OpenAI chat request."""
    tools = []
    for f in copy.deepcopy([dict(f) for f in functions]):
        f["name"] = re.sub(r"\.", "_", str(f.get("name", "")))
        params = dict(f.get("parameters") or {})
        params["type"] = "object"
        params["properties"] = _openapi_properties(params.get("properties") or {})
        f["parameters"] = params
        tools.append({"type": "function", "function": f})
    return tools


@dataclass(frozen=True)
class ToolRequest:
    """What one row sends: its first turn's messages and its tools."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "tools": self.tools}


def _json_column(row: Mapping[str, Any], key: str, *, where: str, file: str | None) -> Any:
    if key not in row:
        raise DataError(f"a function-calling row needs a {key!r} column", file=file, field=f"{where}.{key}",
                        expected="BFCL rows: id, question (JSON turns), function (JSON function list)")
    value = row[key]
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(f"{key} is not valid JSON: {exc.msg}", file=file, field=f"{where}.{key}",
                            value=value[:80]) from None
    return value


def tool_request(row: Mapping[str, Any], *, where: str = "row", file: str | None = None) -> ToolRequest:
    """The request for one BFCL row (first turn, tools from its functions with the category's notes)."""
    category = category_of(row.get("id", ""))
    turns = _json_column(row, "question", where=where, file=file)
    functions = _json_column(row, "function", where=where, file=file)
    if not isinstance(turns, list) or not turns or not isinstance(turns[0], list):
        raise DataError("question must be a JSON list of turns, each a list of messages", file=file,
                        field=f"{where}.question", value=str(row.get("question"))[:80])
    if not isinstance(functions, list) or not all(isinstance(f, Mapping) for f in functions):
        raise DataError("function must be a JSON list of function documents", file=file,
                        field=f"{where}.function", value=str(row.get("function"))[:80])
    messages = []
    for n, m in enumerate(turns[0]):
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant", "system", "tool"):
            raise DataError("each message needs a role (user / assistant / system / tool)", file=file,
                            field=f"{where}.question[0][{n}]", value=m)
        messages.append({k: v for k, v in m.items()})
    return ToolRequest(messages, to_openai_tools(language_notes(functions, category)))


def decode_reply(reply: Mapping[str, Any]) -> Any:
    """The prediction from a chat reply: ``[{name: arguments_json}, ...]``, else its text, else ``[]``."""
    calls = reply.get("tool_calls") or []
    out = []
    for c in calls:
        fn = (c or {}).get("function") or {}
        out.append({str(fn.get("name", "")).strip(): fn.get("arguments", "")})
    if out:
        return out
    return reply.get("content") or []


def check_model(mcfg: Any, *, file: str | None, where: str) -> None:
    """Function calling needs an OpenAI-compatible API model (the request's ``tools``)."""
    from promptweave.compat.models import MODEL_TYPES, type_name

    t = mcfg.get("type") if isinstance(mcfg, Mapping) else getattr(mcfg, "type", None)
    mt = MODEL_TYPES.get(type_name(t))
    if mt is None or mt.backend != "openai":
        raise UnsupportedError("BFCLV3FunctionCallInferencer is not supported for this model: function calling "
                               "needs an API model with tool calling (an OpenAI-compatible chat endpoint that "
                               "takes 'tools')", file=file, field=f"{where}.type", value=type_name(t),
                               expected="an OpenAI-compatible API model type (OpenAISDK, OpenAI, ...)")


def check_category(raw_dataset: Mapping[str, Any], *, file: str | None, where: str) -> None:
    """Multi-turn BFCL categories run the model's calls on simulated backends (code): refused by name."""
    category = str(raw_dataset.get("category", ""))
    if is_multi_turn(category):
        raise UnsupportedError(
            f"BFCL category {category!r} is not supported: its multi-turn loop executes each tool call on "
            "bfcl_eval's simulated backends (Python classes), which promptweave does not run; the single-turn "
            "categories (simple, multiple, parallel, parallel_multiple, java, javascript, live_*, relevance, "
            "irrelevance) are supported", file=file, field=f"{where}.category", value=category)


def infer_function_calls(model: Any, rows: Mapping[int, Mapping[str, Any]], params: GenerationParams,
                         cache: ResponseCache | None = None, progress: Callable[[int], None] | None = None,
                         *, file: str | None = None) -> dict[int, tuple[ToolRequest, Any]]:
    """Each row's request and its prediction (or a :class:`RowFailure`); answers are cached by request."""
    from promptweave.infer.dispatch import model_identity

    if not capabilities_of(model).tool_calls:
        raise UnsupportedError("function calling needs an API model with tool calling", field="model",
                               value=backend_name(model))
    progress = progress or (lambda n: None)
    ident = model_identity(model)
    requests = {k: tool_request(row, where=f"test[{k}]", file=file) for k, row in rows.items()}
    keys = {k: request_key(ident, "tool_chat", r.to_json(), params) for k, r in requests.items()}
    found = cache.get_many(keys.values()) if cache is not None else {}
    replies: dict[int, Any] = {k: found[key] for k, key in keys.items() if key in found}
    if replies:
        progress(len(replies))
    todo = [k for k in requests if k not in replies]
    name = backend_name(model)

    def done(j: int, value: Any) -> None:
        k = todo[j]
        replies[k] = value
        if cache is not None:
            cache.put(keys[k], name, "tool_chat", requests[k].to_json(), value)
        progress(1)

    def failed(j: int, exc: Exception) -> None:
        replies[todo[j]] = RowFailure.of(exc)
        progress(1)

    if todo:
        model.run_batch("tool_chat", [(requests[k].messages, requests[k].tools) for k in todo], params,
                        on_result=done, on_error=failed)
    return {k: (requests[k], replies[k] if isinstance(replies[k], RowFailure) else decode_reply(replies[k]))
            for k in requests}
