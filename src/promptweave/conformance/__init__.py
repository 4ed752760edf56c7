"""Run the reference conformance corpora (see SCHEMA.md) through the public engine."""
from promptweave.conformance.outcome import Outcome, Unsupported
from promptweave.conformance.runner import run_files

__all__ = ["Outcome", "Unsupported", "run_files"]
