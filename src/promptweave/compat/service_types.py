"""AISBench's service model classes by name (the OpenAI-protocol servers it registers): which endpoint each
sends to, whether it streams, and the meta template its chat classes use when a config gives none."""
from __future__ import annotations

from typing import Any

# what AISBench's chat classes assume when a config gives no meta template
DEFAULT_CHAT_META: dict[str, Any] = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}

# type name -> (endpoint, stream forced on): the classes AISBench registers for OpenAI-protocol servers
SERVICE_TYPES: dict[str, tuple[str, bool | None]] = {
    "VLLMCustomAPIChat": ("chat", None),
    "VLLMCustomAPIChatStream": ("chat", True),
    "VllmMultiturnAPIChatStream": ("chat", True),
    "VLLMFunctionCallAPIChat": ("chat", False),
    "VLLMCustomAPI": ("completions", None),
    "VLLMCustomAPIStream": ("completions", True),
}


def is_service_type(type_name: str) -> bool:
    return type_name in SERVICE_TYPES


def default_meta(type_name: str) -> dict[str, Any] | None:
    """The meta template an AISBench chat class uses when its config names none (completions: none)."""
    kind = SERVICE_TYPES.get(type_name)
    return DEFAULT_CHAT_META if kind is not None and kind[0] == "chat" else None
