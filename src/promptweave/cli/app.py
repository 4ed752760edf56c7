"""The ``promptweave`` command: a typer app that each cli module adds its commands to."""
from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Build, view, run and score LLM evaluation prompts.",
    pretty_exceptions_enable=False,
)



@app.callback()
def _root() -> None:
    """Build, view, run and score LLM evaluation prompts."""


# Each module registers its commands on ``app`` when imported.
_COMMAND_MODULES = ("view", "conformance", "run", "lve", "lint", "report")

for _name in _COMMAND_MODULES:
    _modname = f"promptweave.cli.{_name}"
    try:
        importlib.import_module(_modname)
    except ModuleNotFoundError as _exc:
        if _exc.name != _modname:
            raise


def main() -> None:
    app()
