"""Model-side meta templates, validated once when the model config loads."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from promptweave.errors import MetaTemplateError, PromptweaveWarning


class TokenIds(tuple):
    """Token ids given directly in a meta template: they reach the model verbatim, never as text."""


Piece = Union[str, TokenIds]

_ROLE_KEYS = {"role", "begin", "end", "generate", "api_role", "prompt", "fallback_role"}


def _piece(value: Any, *, file: str | None, field_path: str) -> Any:
    """Normalise a begin/end value: a string, or a list of strings and token ids."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return (TokenIds((value,)),)
    if isinstance(value, (list, tuple)):
        out: list[Piece] = []
        for i, v in enumerate(value):
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(TokenIds((v,)))
            elif isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                out.append(TokenIds(v))
            else:
                raise MetaTemplateError("begin/end list items must be strings or token ids", file=file,
                                        field=f"{field_path}[{i}]", value=v)
        if all(isinstance(p, str) for p in out):
            return "".join(out)
        return tuple(out)
    raise MetaTemplateError("begin/end must be a string or a list of strings and token ids", file=file,
                            field=field_path, value=value)


@dataclass(frozen=True)
class RoleSpec:
    """One role of a meta template."""

    role: str
    begin: Any = ""
    end: Any = ""
    generate: bool = False
    api_role: str | None = None
    prompt: str = ""
    extra: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class MetaTemplate:
    """A model's meta template: how each role's turn is wrapped, and where generation starts."""

    round: tuple[Union[RoleSpec, str], ...]
    reserved: tuple[RoleSpec, ...] = ()
    begin: Any = None
    end: Any = None
    eos_token_id: Any = None
    roles: Mapping[str, RoleSpec] = field(default_factory=dict)
    round_index: Mapping[str, int] = field(default_factory=dict)
    has_token_ids: bool = False

    @property
    def generate_role(self) -> str | None:
        for r in self.round:
            if isinstance(r, RoleSpec) and r.generate:
                return r.role
        return None

    @classmethod
    def from_config(cls, cfg: Any, *, kind: str = "lm", file: str | None = None,
                    field: str = "meta_template") -> "MetaTemplate | None":
        """Validate a meta template dict. ``kind`` is ``lm`` (text) or ``api`` (chat)."""
        if cfg is None:
            return None
        if isinstance(cfg, MetaTemplate):
            return cfg
        if not isinstance(cfg, Mapping):
            raise MetaTemplateError("meta_template must be a dict", file=file, field=field, value=cfg)
        unknown = set(cfg) - {"round", "reserved_roles", "begin", "end", "eos_token_id"}
        if unknown:
            raise MetaTemplateError(f"unknown meta template key {sorted(unknown)[0]!r}", file=file,
                                    field=f"{field}.{sorted(unknown)[0]}",
                                    expected="round, reserved_roles, begin, end, eos_token_id")
        rnd = cfg.get("round")
        if not isinstance(rnd, list):
            raise MetaTemplateError("'round' must be a list of role dicts", file=file, field=f"{field}.round",
                                    value=rnd, expected="[dict(role='HUMAN', ...), dict(role='BOT', ...)]")
        token_ids = False

        def role_spec(item: Any, path: str) -> RoleSpec:
            nonlocal token_ids
            if not isinstance(item, Mapping):
                raise MetaTemplateError("a role must be a dict", file=file, field=path, value=item)
            role = item.get("role")
            if not isinstance(role, str) or not role:
                raise MetaTemplateError("a role needs a 'role' name", file=file, field=path + ".role", value=role)
            if kind == "api" and not isinstance(item.get("api_role"), str):
                raise MetaTemplateError(f"role {role!r} needs an 'api_role' for an API model", file=file,
                                        field=path + ".api_role", value=item.get("api_role"),
                                        expected="'HUMAN', 'BOT' or 'SYSTEM'")
            begin = _piece(item.get("begin"), file=file, field_path=path + ".begin")
            end = _piece(item.get("end"), file=file, field_path=path + ".end")
            token_ids |= not isinstance(begin, str) or not isinstance(end, str)
            gen = item.get("generate", False)
            if not isinstance(gen, bool):
                raise MetaTemplateError("'generate' must be true or false", file=file, field=path + ".generate",
                                        value=gen)
            prompt = item.get("prompt", "")
            extra = tuple((k, v) for k, v in item.items() if k not in _ROLE_KEYS)
            return RoleSpec(role, begin, end, gen, item.get("api_role"), prompt if isinstance(prompt, str) else "",
                            extra)

        rounds: list[Union[RoleSpec, str]] = []
        roles: dict[str, RoleSpec] = {}
        index: dict[str, int] = {}
        for i, item in enumerate(rnd):
            path = f"{field}.round[{i}]"
            if isinstance(item, str):
                rounds.append(item)
                continue
            spec = role_spec(item, path)
            if spec.role in roles:
                raise MetaTemplateError(f"role {spec.role!r} appears twice", file=file, field=path + ".role")
            roles[spec.role] = spec
            index[spec.role] = i
            rounds.append(spec)
        reserved: list[RoleSpec] = []
        res_cfg = cfg.get("reserved_roles", [])
        if not isinstance(res_cfg, list):
            raise MetaTemplateError("'reserved_roles' must be a list", file=file, field=f"{field}.reserved_roles",
                                    value=res_cfg)
        for i, item in enumerate(res_cfg):
            path = f"{field}.reserved_roles[{i}]"
            spec = role_spec(item, path)
            if spec.role in roles:
                raise MetaTemplateError(f"role {spec.role!r} appears twice", file=file, field=path + ".role")
            roles[spec.role] = spec
            reserved.append(spec)
        begin, end = cfg.get("begin"), cfg.get("end")
        if kind == "lm":
            begin = _piece(begin, file=file, field_path=f"{field}.begin")
            end = _piece(end, file=file, field_path=f"{field}.end")
            token_ids |= not isinstance(begin, str) or not isinstance(end, str)
        elif begin is not None and not (isinstance(begin, Mapping) and isinstance(begin.get("prompt", ""), str)):
            # an API model's begin goes first as one message, as the reference inserts it
            raise MetaTemplateError("an API meta template's begin must be one message dict (role, api_role, "
                                    "prompt)", file=file, field=f"{field}.begin", value=begin)
        return cls(tuple(rounds), tuple(reserved), begin, end, cfg.get("eos_token_id"), roles, index, token_ids)

    def warn_if_no_generate(self, *, file: str | None = None, field: str = "meta_template") -> None:
        """Gen mode needs a ``generate`` role to know where the model's answer starts."""
        if self.generate_role is None:
            warnings.warn(
                f"{file + ': ' if file else ''}{field}.round: no role has generate=True, so in gen mode the "
                "prompt runs to the end of the last round instead of stopping where the answer starts",
                PromptweaveWarning, stacklevel=3)


# raw message rows (``prompt/raw.py``) sent to a chat API: the plain role mapping; a system message is placed
# before the conversation (a system message inside a row's history is a role error)
_API_ROLES = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
              "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}]}


def with_api_roles(model: Any) -> Any:
    """The chat model with the plain role mapping as its meta template: the reference sends raw messages to a
    chat API as written, without the model's meta template (and, without one, other templates become one text)."""
    import dataclasses

    return dataclasses.replace(model, meta=MetaTemplate.from_config(_API_ROLES, kind="api", file=model.file,
                                                                    field="meta_template"))
