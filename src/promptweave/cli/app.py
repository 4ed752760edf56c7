"""The ``promptweave`` command: a typer app that each cli module adds its commands to.

``main()`` is the one place errors leave the program: every exception becomes one
``error: [PWnnn] ...`` line and an exit status from :class:`~promptweave.cli.common.ExitCode`
(``--debug`` adds the traceback).
"""
from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Sequence

import typer

from promptweave.cli.help_text import quiet_flag_types

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Build, view, run and score LLM evaluation prompts.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain text: 'promptweave[ray]' is not a markup tag
)

_STATE = {"debug": False}


def _version(value: bool) -> None:
    if value:
        from promptweave import __version__

        typer.echo(f"promptweave {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="On an error, print the Python traceback too."),
    version: bool | None = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
) -> None:
    """Build, view, run and score LLM evaluation prompts."""
    _STATE["debug"] = debug


quiet_flag_types()  # no '<bool>' after on/off flags in any --help

# Each module registers its commands on ``app`` when imported.
_COMMAND_MODULES = ("view", "conformance", "run", "lve", "lint", "report", "spread", "data", "perf")

for _name in _COMMAND_MODULES:
    _modname = f"promptweave.cli.{_name}"
    try:
        importlib.import_module(_modname)
    except ModuleNotFoundError as _exc:
        if _exc.name != _modname:
            raise


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame that raised ``exc``."""
    tb = exc.__traceback__
    frame = None
    while tb is not None:
        frame, tb = tb, tb.tb_next
    if frame is None:
        return "?"
    return f"{frame.tb_frame.f_code.co_filename}:{frame.tb_lineno}"


def error_line(exc: BaseException) -> str:
    """The one line an error is reported as."""
    from promptweave.errors import PromptweaveError

    if isinstance(exc, PromptweaveError):
        return f"error: {exc}"
    detail = str(exc).splitlines()[0][:300] if str(exc) else ""
    return (f"error: [PW001] {_where(exc)}: internal error: {type(exc).__name__}"
            f"{': ' + detail if detail else ''}; rerun with --debug for the traceback and please report it")


def _click_classes() -> tuple[tuple, tuple, tuple]:
    """(exit, abort, usage-error) exception classes of typer and of the click it is built on (vendored or not)."""
    exits: list = [typer.Exit]
    aborts: list = [typer.Abort]
    usage: list = []
    for modname in ("typer._click.exceptions", "click.exceptions"):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        exits += [c for c in (getattr(mod, "Exit", None),) if c is not None]
        aborts += [c for c in (getattr(mod, "Abort", None),) if c is not None]
        usage += [c for c in (getattr(mod, "ClickException", None),) if c is not None]
    return tuple(exits), tuple(aborts), tuple(usage)


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
                 line: str | None = None) -> None:
    """A warning that reaches the terminal: one line, ``warning: [PWnnn] ...``, as errors are printed (never
    Python's own format with a line of our source)."""
    from promptweave.errors import warning_text

    try:
        sys.stderr.write(f"warning: {warning_text(message)}\n")
    except Exception:  # noqa: BLE001, S110 - a broken stderr must not turn a warning into a traceback
        pass


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return its exit status; never raises."""
    import warnings

    before = warnings.showwarning
    # inside a caller's `catch_warnings(record=True)` (a test, a library user) the warnings are theirs to keep
    recording = getattr(getattr(warnings, "_showwarnmsg_impl", None), "__name__", "") != "_showwarnmsg_impl"
    if not recording:
        warnings.showwarning = show_warning
    try:
        return _run_cli(argv)
    finally:
        warnings.showwarning = before


def _run_cli(argv: Sequence[str] | None) -> int:
    from promptweave.cli.common import ExitCode, exit_code_for

    exits, aborts, usage = _click_classes()
    args = list(sys.argv[1:] if argv is None else argv)
    _STATE["debug"] = "--debug" in args[:args.index("--")] if "--" in args else "--debug" in args
    try:
        code = app(args=args, prog_name="promptweave", standalone_mode=False)
        return int(code or 0)
    except exits as exc:
        return int(getattr(exc, "exit_code", 0))
    except aborts:
        sys.stderr.write("interrupted\n")
        return ExitCode.INTERRUPTED
    except usage as exc:  # usage errors: click's own message
        exc.show()
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return ExitCode.INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else ExitCode.INTERNAL)
    except BaseException as exc:  # noqa: BLE001 - the one place an error leaves the program
        if _STATE["debug"]:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        try:
            sys.stderr.write(error_line(exc) + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001, S110 - a broken stderr must not turn into a traceback either
            pass
        return exit_code_for(exc)


def main() -> None:
    for stream in (sys.stdout, sys.stderr):
        # a lone surrogate or odd byte in the data must print, not crash the terminal output
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    sys.exit(run_cli())
