"""``promptweave.__all__`` is the public API: pinned here, so a name added or dropped is a decision made in review
(change this list with it), and every pinned name imports."""
from __future__ import annotations

import promptweave

PUBLIC = [
    "Config", "load_config", "open_dataset", "open_model", "DatasetSpec", "InferencerConfig", "ModelSpec",
    "PromptBuilder", "PromptRecord", "ReaderConfig", "RecordChunk", "columns_of", "ConfigError", "DataError",
    "LVEError", "MetaTemplateError", "ModelError", "PromptweaveError", "PromptweaveWarning", "RetrieverError",
    "RoleError", "TemplateError", "ContentPart", "Dialogue", "SectionMark", "Turn", "PromptTemplate",
    "MetaTemplate", "render_chat", "render_text", "to_openai_messages", "EvalContext", "Evaluation", "Scores",
    "build_evaluation", "render_with_chat_template", "lint_file", "LintReport", "evaluate_config", "RunOptions",
    "RunResult", "spread_config", "SpreadOptions", "SpreadResult", "Backend", "Capabilities", "GenerationParams",
    "ScriptedModel", "ModelConfig", "Budget", "BudgetError", "SandboxError", "RunError", "WorkdirLockedError",
    "RowFailure", "Retriever", "ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingKRetriever",
    "build_retriever", "DatasetSplits", "load_dataset", "check_loader", "locate_data", "RunRequest",
    "make_executor", "ReferenceUnavailableError", "MissingExtraError", "PlaceholderNearMissWarning",
    "AgentInferencer", "AgentSettings", "ReActProtocol", "PythonSession", "SessionLimits", "AttackStageError",
    "ReferenceTextMissingError", "Format", "SpreadRequest", "dataset_variants", "run_spread", "search_extremes"
]


def test_all_is_exactly_the_pinned_list() -> None:
    assert promptweave.__all__ == PUBLIC


def test_every_public_name_imports() -> None:
    missing = [name for name in PUBLIC if not hasattr(promptweave, name)]
    assert missing == []


def test_the_library_call_is_public() -> None:
    from promptweave.run.pipeline import evaluate_config

    assert promptweave.evaluate_config is evaluate_config and callable(promptweave.RunOptions)
