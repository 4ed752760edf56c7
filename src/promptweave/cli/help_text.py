"""How ``--help`` reads: an on/off flag shows no value placeholder (typer prints ``<bool>`` after every flag,
which reads as if the flag took a value), and help text is plain text, never Rich markup (so ``promptweave[ray]``
prints as written)."""
from __future__ import annotations

from typing import Any


def quiet_flag_types() -> None:
    """Show no ``<bool>`` type after on/off flags (``--dry-run``, ``--help``...), in every command's help."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - another typer layout: its own help stays as it is
        return
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_promptweave", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)

    display_type_rich._promptweave = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
