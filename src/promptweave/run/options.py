"""What a run is asked to do: one options object for the library call and for ``run``, ``spread`` and ``lint``.

Every field has the default the CLI flag of the same name has; ``cli/options.py`` derives each command's flags from
this one list, so an option added here (and given its flag there) reaches every command that runs a config.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from promptweave.errors import RunOptionsError

ON_ROW_ERROR = ("wrong", "skip", "fail")
CODE_SANDBOXES = ("bwrap", "rlimits")
EXECUTORS = ("local", "ray")
MODES = ("accuracy", "perf")


@dataclass
class RunOptions:
    """How to run a config (``promptweave.evaluate_config``); the CLI flag of each field is ``--`` + its name with
    ``-`` for ``_`` (``datasets`` / ``models`` are ``--dataset`` / ``--model``, repeatable)."""

    workdir: Path = Path("outputs")
    """Where predictions, results and the response cache go; the same work dir resumes."""
    datasets: list[str] | None = None
    """Dataset abbrs to run (None: all)."""
    models: list[str] | None = None
    """Model abbrs to run (None: all)."""
    limit: int | None = None
    """Only the first N test rows of each dataset."""
    dry_run: bool = False
    """Plan and check only: load no model, send nothing."""
    trust_config: bool = False
    """Run a .py config as Python and let its callables run."""
    allow_env: list[str] = field(default_factory=list)
    """Credential-looking environment variables the config may read or send as an API key (``NAME@host``: to
    that host only)."""
    allow_data: list[str] = field(default_factory=list)
    """Paths outside the data roots a safe-mode config may read data from (``data/roots.py``)."""
    on_row_error: str = "wrong"
    """A row whose request still fails: 'wrong', 'skip' or 'fail'."""
    wait: bool = True
    """Wait for another run holding the work dir (False: stop at once)."""
    report: bool = True
    """Write the HTML report at the end."""
    show_progress: bool = True
    """Progress bars."""
    allow_code_exec: bool = False
    """Let code evaluators and the code agent run the model's code, in the sandbox."""
    code_sandbox: str = "bwrap"
    """Where model code runs: 'bwrap' or 'rlimits'."""
    judge_model: str | None = None
    """The judge (a model abbr) of LLM-judged datasets whose judge_cfg is empty."""
    executor: str = "local"
    """'local' (this process) or 'ray'."""
    address: str | None = None
    """Ray: the cluster to join."""
    shard_rows: int | None = None
    """Ray: rows per shard."""
    workers: int | None = None
    """Ray: model replicas per model."""
    num_gpus: float | None = None
    """Ray: GPUs per replica."""
    num_cpus: float | None = None
    """Ray: CPUs per replica."""
    mode: str = "accuracy"
    """``accuracy`` (answers and scores: ``evaluate_config``) or ``perf`` (serving performance: ``run --mode perf``
    calls ``promptweave.run.perf.run_perf``)."""

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.allow_env = list(self.allow_env or ())
        self.allow_data = [str(p) for p in self.allow_data or ()]

    def check(self) -> None:
        """Each value is one the run can take (PW180, naming the flag), before anything is read."""
        for name, value, allowed in (("on-row-error", self.on_row_error, ON_ROW_ERROR),
                                     ("code-sandbox", self.code_sandbox, CODE_SANDBOXES),
                                     ("executor", self.executor, EXECUTORS), ("mode", self.mode, MODES)):
            if value not in allowed:
                raise RunOptionsError(f"unknown --{name}", field=f"--{name}", value=value,
                                      expected=" or ".join(allowed))
        bounds: tuple[tuple[str, int | float | None, int], ...] = (
            ("limit", self.limit, 1), ("shard-rows", self.shard_rows, 1), ("workers", self.workers, 1),
            ("num-gpus", self.num_gpus, 0), ("num-cpus", self.num_cpus, 0))
        for name, number, low in bounds:
            if number is not None and (isinstance(number, bool) or not isinstance(number, (int, float))
                                       or number < low):
                raise RunOptionsError(f"--{name} must be a number of at least {low}", field=f"--{name}",
                                      value=number, expected=f">= {low}")

    def executor_options(self) -> dict[str, object]:
        """The Ray executor's settings (``run.executors.make_executor``)."""
        return {"address": self.address, "shard_rows": self.shard_rows, "workers": self.workers,
                "num_gpus": self.num_gpus, "num_cpus": self.num_cpus}
