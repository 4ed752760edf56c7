# Multi-turn chat in the AISBench config shape: each row is a conversation, with a list of
# questions and a list of reference answers (examples/data/conversations.jsonl).
#
# The round below is repeated once per turn. Each BOT turn is one model call; what the earlier
# BOT turns hold depends on infer_mode:
#   "every"          the model's own earlier replies (a real conversation),
#   "every_with_gt"  the reference answers (each turn judged on its own),
#   "last"           one call, with every reference answer but the last.
# Predictions are written per turn; scoring is per turn, with a per-conversation figure too
# (eval_cfg score_per="turn" | "conversation").
#
# `promptweave view examples/multiturn_chat.py` shows each turn's prompt for each model;
# `promptweave run examples/multiturn_chat.py -w outputs/mt -m api-chat` runs it against an
# OpenAI-compatible server (python tests/servers/openai_stub.py --port 8000 stands in offline).
# Configs are read safely: this file is evaluated as data, no code in it runs.
from ais_bench.benchmark.openicl.icl_prompt_template import MultiTurnPromptTemplate
from ais_bench.benchmark.openicl.icl_retriever import ZeroRetriever
from ais_bench.benchmark.openicl.icl_inferencer import MultiTurnGenInferencer

conversations = dict(
    abbr="conversations",
    path="data/conversations.jsonl",
    reader_cfg=dict(input_columns=["question", "answer"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(
            type=MultiTurnPromptTemplate,
            template=dict(
                # begin/end turns are used as written; SYSTEM falls back to HUMAN for models without it
                begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="Answer briefly and exactly.")],
                round=[
                    dict(role="HUMAN", prompt="{question}"),
                    dict(role="BOT", prompt="{answer}"),
                ],
            ),
        ),
        retriever=dict(type=ZeroRetriever),
        inferencer=dict(type=MultiTurnGenInferencer, infer_mode="every", max_out_len=64),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)

datasets = [conversations]

# The same conversations for a local chat LM (through its meta template, as text) and a chat API.
models = [
    dict(
        abbr="local-chatml",
        type="TransformersModel",
        path="path/to/a/local/model",
        meta_template=dict(
            round=[
                dict(role="HUMAN", begin="<|im_start|>user\n", end="<|im_end|>\n"),
                dict(role="BOT", begin="<|im_start|>assistant\n", end="<|im_end|>\n", generate=True),
            ],
            reserved_roles=[dict(role="SYSTEM", begin="<|im_start|>system\n", end="<|im_end|>\n")],
        ),
    ),
    dict(
        abbr="api-chat",
        type="OpenAICompatModel",
        kind="api",
        base_url="http://127.0.0.1:8000/v1",
        model="served-model-name",
        meta_template=dict(
            round=[
                dict(role="HUMAN", api_role="HUMAN"),
                dict(role="BOT", api_role="BOT", generate=True),
            ],
            reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")],
        ),
    ),
]
