"""Test-only oracle: OpenCompass's own OlympiadBench prompt code, read from the installed reference's source.

The pure functions and classes (``get_single_answer_type_text``, ``get_answer_type_text``, ``OlympiadBenchPrompter``,
``OlympiadBenchTemplate``, ``OlympiadBenchRawTemplate``) are taken out of ``opencompass/datasets/OlympiadBench.py``
with ``ast`` and run in an isolated namespace, with ``safe_format`` taken from ``opencompass/utils/prompt.py`` the
same way. The reference module itself cannot be imported here (its dependencies are not installed), so the two
template classes get stand-in bases (test doubles): they do for the single turn what the reference's
``PromptTemplate.generate_item`` / ``RawPromptTemplate.generate_item`` do (the answer column set to the generation
token, then ``safe_format`` over the turn's text).
"""
from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

_WANTED = {"get_single_answer_type_text", "get_answer_type_text", "OlympiadBenchPrompter", "OlympiadBenchTemplate",
           "OlympiadBenchRawTemplate"}


def _defs(path: Path, names: set[str]) -> ast.Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names]
    missing = names - {n.name for n in body}
    assert not missing, f"{path} no longer defines {sorted(missing)}"
    return ast.Module(body=body, type_ignores=[])


class _Registry:  # double of ICL_PROMPT_TEMPLATES: registering changes nothing here
    @staticmethod
    def register_module(*_a: Any, **_k: Any) -> Any:
        return lambda cls: cls


def reference() -> dict[str, Any] | None:
    """The reference's objects by name, or None when opencompass is not installed."""
    from promptweave.compat.reference_index import package_root

    root = package_root("opencompass")
    if root is None or not (root / "datasets" / "OlympiadBench.py").exists():
        return None
    helpers: dict[str, Any] = {}
    exec(compile(_defs(root / "utils" / "prompt.py", {"safe_format"}), "opencompass/utils/prompt.py", "exec"),
         helpers)
    safe_format = helpers["safe_format"]

    class PromptTemplateDouble:
        def __init__(self, template: dict) -> None:
            self.template = template

        def generate_item(self, entry: dict, output_field: Any = None, output_field_replace_token: Any = "",
                          ice_field_replace_token: Any = "") -> dict:
            if output_field is not None:
                entry = copy.deepcopy(entry)
                entry[output_field] = output_field_replace_token
            (turn,) = self.template["round"]
            return {"role": turn["role"], "prompt": safe_format(turn["prompt"], **entry)}

    class RawPromptTemplateDouble:
        def __init__(self, messages: list) -> None:
            self.messages = messages

        def generate_item(self, entry: dict, *_a: Any, **_k: Any) -> list:
            return [{**m, "content": safe_format(m["content"], **entry)} for m in self.messages]

    ns: dict[str, Any] = {"Dict": dict, "ICL_PROMPT_TEMPLATES": _Registry, "PromptTemplate": PromptTemplateDouble,
                          "RawPromptTemplate": RawPromptTemplateDouble}
    src = root / "datasets" / "OlympiadBench.py"
    exec(compile(_defs(src, _WANTED), str(src), "exec"), ns)
    return ns
