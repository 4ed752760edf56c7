"""promptweave: build, view, run and score LLM evaluation prompts.

The data flow, one package per step: config -> dataset rows -> shots (retrievers)
-> filled templates (Dialogue) -> rendered prompt (meta template) -> model ->
predictions -> scores.

Run a config (what ``promptweave run`` does)::

    from promptweave import RunOptions, evaluate_config

    result = evaluate_config("examples/quickstart.py", RunOptions(workdir="outputs", limit=10))
    print([(o.dataset, o.model, o.ok) for o in result.outcomes])

Build one prompt::

    from promptweave import load_config, open_dataset, open_model, PromptBuilder

    cfg = load_config("examples/quickstart.py")
    builder = PromptBuilder(open_dataset(cfg, 0), open_model(cfg, 0))
    print(builder.build(0).rendered)
"""
from promptweave.config import Config, load_config, open_dataset, open_model
from promptweave.config.model_config import ModelConfig
from promptweave.data import DatasetSplits, check_loader, load_dataset
from promptweave.data import locate as locate_data
from promptweave.engine import DatasetSpec, InferencerConfig, ModelSpec, PromptBuilder, PromptRecord, ReaderConfig
from promptweave.errors import (
                                AttackStageError,
                                ConfigError,
                                DataError,
                                LVEError,
                                MetaTemplateError,
                                MissingExtraError,
                                ModelError,
                                PlaceholderNearMissWarning,
                                PromptweaveError,
                                PromptweaveWarning,
                                ReferenceTextMissingError,
                                ReferenceUnavailableError,
                                RetrieverError,
                                RoleError,
                                RunError,
                                TemplateError,
                                WorkdirLockedError,
)
from promptweave.evaluate import EvalContext, Evaluation, Scores, build_evaluation
from promptweave.evaluate.python_session import PythonSession, SessionLimits
from promptweave.forms.agent_loop import AgentInferencer, AgentSettings, ReActProtocol
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import RecordChunk, columns_of
from promptweave.models.base import Backend, Capabilities, GenerationParams
from promptweave.models.scripted import ScriptedModel
from promptweave.prompt.dialogue import ContentPart, Dialogue, SectionMark, Turn
from promptweave.prompt.template import PromptTemplate
from promptweave.render.chat import render_chat, to_openai_messages
from promptweave.render.chat_template import render_with_chat_template
from promptweave.render.meta import MetaTemplate
from promptweave.render.text import render_text
from promptweave.run.executors import RunRequest, make_executor
from promptweave.run.lint import LintReport, lint_file
from promptweave.run.options import RunOptions
from promptweave.run.pipeline import RunResult, evaluate_config
from promptweave.sandbox import Budget, BudgetError, SandboxError  # noqa: I001 - sandbox: safe-mode rules and budgets
from promptweave.shots import (
                                FixKRetriever,
                                RandomRetriever,
                                Retriever,
                                SlidingKRetriever,
                                ZeroRetriever,
                                build_retriever,
)
from promptweave.spread import Format, SpreadRequest, dataset_variants, run_spread, search_extremes  # the format spread
from promptweave.spread.pipeline import SpreadOptions, SpreadResult, spread_config

__version__ = "0.1.0"

__all__ = [
    "Config", "load_config", "open_dataset", "open_model",
    "DatasetSpec", "InferencerConfig", "ModelSpec", "PromptBuilder", "PromptRecord", "ReaderConfig",
    "RecordChunk", "columns_of",
    "ConfigError", "DataError", "LVEError", "MetaTemplateError", "ModelError", "PromptweaveError",
    "PromptweaveWarning", "RetrieverError", "RoleError", "TemplateError",
    "ContentPart", "Dialogue", "SectionMark", "Turn", "PromptTemplate", "MetaTemplate",
    "render_chat", "render_text", "to_openai_messages",
    "EvalContext", "Evaluation", "Scores", "build_evaluation",
    "render_with_chat_template",
    "lint_file", "LintReport",
    "evaluate_config", "RunOptions", "RunResult", "spread_config", "SpreadOptions", "SpreadResult",
    "Backend", "Capabilities", "GenerationParams", "ScriptedModel", "ModelConfig",
    "Budget", "BudgetError", "SandboxError",
    "RunError", "WorkdirLockedError", "RowFailure",
    "Retriever", "ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingKRetriever", "build_retriever",
    "DatasetSplits", "load_dataset", "check_loader", "locate_data",
    "RunRequest", "make_executor",
    "ReferenceUnavailableError",
    "MissingExtraError",
    "PlaceholderNearMissWarning",
    "AgentInferencer", "AgentSettings", "ReActProtocol", "PythonSession", "SessionLimits",
    "AttackStageError", "ReferenceTextMissingError",
    "Format", "SpreadRequest", "dataset_variants", "run_spread", "search_extremes",
]
