"""Typed errors and warnings: every one names where the fault is.

Each class has a stable ``code`` so scripts and tests can match on it rather
than on wording. ``location`` is a human path such as
``examples/q.py: datasets[0].infer_cfg.prompt_template.template.round[1].role``.
"""
from __future__ import annotations

from typing import Any

_MISSING = object()


class PromptweaveError(Exception):
    """Base of every error promptweave raises on bad input."""

    code = "PW000"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: Any = _MISSING,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(self._render())

    @property
    def location(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        return ": ".join(parts)

    def _render(self) -> str:
        text = f"[{self.code}] "
        if self.location:
            text += f"{self.location}: "
        text += self.message
        if self.value is not _MISSING:
            shown = repr(self.value)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            text += f" (got {shown})"
        if self.expected:
            text += f"; expected {self.expected}"
        return text

    def at(self, *, file: str | None = None, prefix: str | None = None) -> "PromptweaveError":
        """Return the same error re-located under a file and/or a parent field path."""
        field = self.field
        if prefix:
            field = prefix + ("" if not field or field.startswith("[") else ".") + (field or "")
        new = type(self).__new__(type(self))
        PromptweaveError.__init__(
            new, self.message, file=file or self.file, field=field, value=self.value, expected=self.expected
        )
        return new


class ConfigError(PromptweaveError):
    """A config file or config value is malformed."""

    code = "PW100"


class TemplateError(ConfigError):
    """A dataset-side prompt template is malformed."""

    code = "PW110"


class RoleError(TemplateError):
    """A dialogue turn names a role the meta template cannot place."""

    code = "PW120"


class MetaTemplateError(ConfigError):
    """A model-side meta template is malformed."""

    code = "PW130"


class DataError(PromptweaveError):
    """Dataset rows are missing, malformed or lack a required column."""

    code = "PW200"


class RetrieverError(PromptweaveError):
    """A retriever was configured or used wrongly."""

    code = "PW300"


class ModelError(PromptweaveError):
    """A model backend failed or was misconfigured."""

    code = "PW400"


class LVEError(PromptweaveError):
    """An LVE test folder or instance is invalid."""

    code = "PW500"


class PromptweaveWarning(UserWarning):
    """Something suspicious that the reference tolerates, so we only warn."""

    code = "PW770"


def warning_text(message: Warning | str) -> str:
    """A warning as the one line after ``warning: ``: ``[PWnnn] what, and what to do``.

    A library's own warning (not ours) keeps its category's name: ``[PW779] DeprecationWarning: ...``.
    """
    if isinstance(message, PromptweaveWarning):
        return f"[{message.code}] {message}"
    if isinstance(message, Warning):
        return f"[PW779] {type(message).__name__}: {message}"
    return str(message) if str(message).startswith("[PW") else f"[PW770] {message}"


# Codes below are reserved per area so parallel work never reuses one. Add a class in your area's block only.

# -- sandbox (config and checker interpreter) --
class SandboxError(ConfigError):
    """Safe mode refused a form, a name or an attribute (``--trust-config`` / ``--trust-checkers`` may run it)."""

    code = "PW140"


class BudgetError(SandboxError):
    """Safe mode refused work past a budget (integer size, sequence size, steps, time, depth), before doing it."""

    code = "PW150"


class SecretRefusedError(SandboxError):
    """A config asked for an environment variable the env rule refuses (a credential-looking name, or any
    variable sent as an API key) and the user did not allow it with ``--allow-env NAME``."""

    code = "PW145"


class UnsupportedError(ConfigError):
    """A reference class or form that promptweave does not implement (named, never silently replaced)."""

    code = "PW160"


# -- data (reference dataset ids, paths and loader classes) --
class DataNotFoundError(DataError):
    """A dataset's files are not where the reference would put them; says where we looked and how to get them."""

    code = "PW210"


class LoaderError(DataError):
    """A reference loader class is unknown, or its files do not have the layout it expects."""

    code = "PW220"


class CorpusError(DataError):
    """A conformance corpus file cannot be read: not gzip, corrupt, a line too long, a line that is not a case."""

    code = "PW230"


# -- evaluation (evaluators, postprocessors, LLM judges) --
class EvaluationError(PromptweaveError):
    """An evaluator or postprocessor is unknown or failed on the predictions."""

    code = "PW600"


class JudgeError(EvaluationError):
    """An LLM-as-judge evaluator is misconfigured or its judge model failed."""

    code = "PW610"


class RegexTimeoutError(EvaluationError):
    """A pattern from a config (postprocessor argument) ran past its time limit; names the pattern."""

    code = "PW620"


class CodeExecutionError(EvaluationError):
    """A code-executing evaluator was asked for without ``--allow-code-exec``, or its sandbox could not start."""

    code = "PW630"


class CodeSandboxError(CodeExecutionError):
    """``--allow-code-exec`` needs the OS sandbox (bubblewrap) and it is missing or cannot start here."""

    code = "PW631"


# -- run (work dir, locking, row failures) --
class RunError(PromptweaveError):
    """A run could not proceed: the work dir is locked or unusable, or a task could not be executed."""

    code = "PW700"


class WorkdirLockedError(RunError):
    """Another promptweave run holds the work dir's lock."""

    code = "PW710"


# -- report --
class ReportError(PromptweaveError):
    """A work dir cannot be turned into a report (missing or malformed results)."""

    code = "PW800"


class ChatTemplateError(ReportError):
    """A tokenizer's chat template cannot be found, compiled or rendered for these messages."""

    code = "PW810"


# -- distributed execution --
class DistributedError(RunError):
    """The Ray executor could not start, join a cluster, or finish a shard within its retries."""

    code = "PW900"


# -- forms (native long-tail evaluators) --
class MissingExtraError(EvaluationError):
    """An evaluator needs an optional package that is not installed; names the package and the extra."""

    code = "PW640"


class PlaceholderNearMissWarning(PromptweaveWarning):
    """A template placeholder names no column but resembles one (``{OPTION_A}`` beside ``option_A``): sent as
    written, as OpenCompass sends it, and reported with the column it resembles."""

    code = "PW771"


# -- bridge (a reference package installed without its dependencies) --
class ReferenceUnavailableError(PromptweaveError):
    """A reference class known from the installed package's source, needed now, but the package cannot import."""

    code = "PW240"


# -- search (ToTInferencer, AttackInferencer) --
class ReferenceTextMissingError(ReferenceUnavailableError):
    """Prompt texts that belong to a reference package (read from its installed source) cannot be found."""

    code = "PW250"


class AttackStageError(UnsupportedError):
    """An eval config asks for PromptBench's adversarial prompt search, which needs the ``promptbench`` package."""

    code = "PW170"


# -- data fetch (data/fetch.py, data/archive.py) ---------------------------------------------------------------------
class DataFetchError(DataError):
    """``data fetch`` could not get a dataset's archive: no known source, a failed or short download, a wrong md5,
    or an archive member that could write outside the data root."""

    code = "PW270"


class ChecksumError(DataFetchError):
    """A downloaded archive's md5 is not the one the table (or ``--md5-table``) pins."""

    code = "PW271"


# -- the library call, its options and the model contract --
class RunOptionsError(ConfigError):
    """A run option (a ``RunOptions`` field or the CLI flag of the same name) has a value no run can take."""

    code = "PW180"


class ModelConfigError(ConfigError):
    """A model config entry has a field of the wrong type or shape (read at the config boundary, ``ModelConfig``)."""

    code = "PW181"


# -- data roots and secret destinations (safe mode: data stays home, a key reaches only the hosts granted) --
class DataOutsideRootsError(DataError):
    """Safe mode refused a data file or folder outside the data roots (the config's folder, ``./data``, the
    OpenCompass / AISBench / Hugging Face caches) that the user did not name with ``--allow-data PATH``."""

    code = "PW260"


class SecretDestinationError(SecretRefusedError):
    """A granted variable would be sent as a key to a host the grant does not cover (``--allow-env NAME`` covers
    one host; ``--allow-env NAME@host`` names each)."""

    code = "PW146"


class SecretAsTextError(SecretRefusedError):
    """A variable sent as an API key is also read by the config as a plain value (it could reach a prompt)."""

    code = "PW147"


# -- code sandbox: verdicts and the rlimits mode run as root --
class CodeSandboxRootError(CodeSandboxError):
    """``--code-sandbox=rlimits`` run as root could not drop to a throwaway user, so it refuses to run model code
    with root's reach."""

    code = "PW632"


# -- the terminal: what a run says happened --
class RowsFailedWarning(PromptweaveWarning):
    """Some rows of a task failed (their requests were refused or ran out of retries); the task is partial and a
    rerun of the same command retries only them."""

    code = "PW772"


class NothingComparedWarning(PromptweaveWarning):
    """``report A B`` found no task (dataset × model) the two runs share, so there is nothing to compare."""

    code = "PW773"


class EndpointDownError(ModelError):
    """An API model's server refuses connections (or cannot be reached) several times in a row: the model's
    remaining requests are not sent."""

    code = "PW470"


# -- work dirs and caches as data (links, full disks, hostile files) --
class NoSpaceError(RunError):
    """A write into the work dir failed for lack of space; what was finished is kept, so a rerun resumes."""

    code = "PW720"


class WorkdirLinkError(RunError):
    """A path promptweave writes in a work dir is a symbolic link or not a plain file or folder: nothing is
    written through it."""

    code = "PW721"


class CacheUnusableError(RunError):
    """The work dir's response cache cannot be opened nor set aside."""

    code = "PW722"


class PriceError(ConfigError):
    """A model's ``input_price`` / ``output_price`` is not a finite number ≥ 0."""

    code = "PW723"


class WorkdirFileError(ReportError):
    """A file of a work dir handed to ``report`` cannot be read as data: a link out of the dir, not a regular
    file, too large, or not the shape promptweave writes."""

    code = "PW820"


class SpreadFileError(WorkdirFileError):
    """A spread work dir's ``spread.json`` is not the shape ``promptweave spread`` writes."""

    code = "PW821"


# -- data fetch: Hugging Face hub datasets (data/hub_fetch.py) --
class HubClientMissingError(DataFetchError):
    """``data fetch`` needs the ``huggingface_hub`` package to get a hub dataset, and it is not installed."""

    code = "PW272"


class HubRepoNotFoundError(DataFetchError):
    """The hub has no dataset repo by the id a config names (or it is gated or private to this user)."""

    code = "PW273"


class HubRevisionNotFoundError(DataFetchError):
    """The hub dataset repo exists but has no such revision (branch, tag or commit) as the config pins."""

    code = "PW274"


class HubNetworkError(DataFetchError):
    """The hub (``$HF_ENDPOINT``, else huggingface.co) could not be reached, or a transfer from it failed."""

    code = "PW275"


# -- AISBench judge stage and the config-key table --
class JudgeStageError(JudgeError):
    """A dataset's ``judge_infer_cfg`` (AISBench's judge stage) is malformed or asks for what is not run here."""

    code = "PW650"


class UnimplementedKeyError(UnsupportedError):
    """A config key promptweave knows but does not implement, and which would change what is sent or scored:
    refused at plan time (``compat/config_keys.py``) rather than ignored."""

    code = "PW195"


class UnknownConfigKeyWarning(PromptweaveWarning):
    """A dataset / model / eval config key that is in no reference's table of keys (a typo, or a newer release's)."""


# -- perf mode (run/perf/: serving performance, streamed requests) ---------------------------------------------------
class PerfError(RunError):
    """A serving-performance run cannot go ahead: its model is not an OpenAI-protocol HTTP model, or a task's form
    is not one streamed generation per row."""

    code = "PW740"


class PerfConfigError(ConfigError):
    """A perf setting is out of range: ``request_rate`` / ``traffic_cfg``, ``--concurrency``, ``--requests``,
    ``--duration`` or ``--synthetic``."""

    code = "PW741"


class PerfAllFailedError(PerfError):
    """Every request of a perf run failed, so there is nothing to measure; the first failure is named."""

    code = "PW742"
