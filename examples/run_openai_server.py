# promptweave run against an OpenAI-compatible server (vLLM, llama.cpp's llama-server, or the offline stand-in).
#
#   vllm serve Qwen/Qwen2.5-0.5B-Instruct --port 8000                       # or:
#   llama-server -m qwen2.5-0.5b-instruct-q4_k_m.gguf --port 8000           # or, offline:
#   python tests/servers/openai_stub.py --port 8000
#
#   promptweave run examples/run_openai_server.py -w outputs/demo --limit 20
#
# Kill it at any point and rerun the same command: answers already received come from
# outputs/demo/cache.sqlite and only the rest are sent.
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import FixKRetriever, ZeroRetriever
from opencompass.openicl.icl_inferencer import GenInferencer

_question = "Question: {question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer with the letter of the right option."
science = dict(
    abbr="science_mc",
    path="data/science_mc.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type=PromptTemplate, template=dict(round=[dict(role="HUMAN", prompt=_question)])),
        retriever=dict(type=ZeroRetriever),
        inferencer=dict(type=GenInferencer, max_out_len=32),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"),
                  pred_postprocessor=dict(type="first_option_postprocess", options="ABCD")),
)

arithmetic = dict(
    abbr="arithmetic",
    path="data/arithmetic.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer", test_range="[3:]", train_range="[0:3]"),
    infer_cfg=dict(
        ice_template=dict(
            type=PromptTemplate,
            template=dict(begin="</E>", round=[dict(role="HUMAN", prompt="Question: {question}\nAnswer with a number."),
                                               dict(role="BOT", prompt="{answer}")]),
            ice_token="</E>",
        ),
        retriever=dict(type=FixKRetriever, fix_id_list=[0, 1, 2]),
        inferencer=dict(type=GenInferencer, max_out_len=16),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"), pred_postprocessor=dict(type="last_number")),
)

datasets = [science, arithmetic]

models = [
    dict(
        abbr="served-chat",
        type="OpenAICompatModel",       # also accepted: OpenAISDK, OpenAI (OpenCompass names)
        kind="api",                     # chat messages to /v1/chat/completions; kind="lm" sends text to /v1/completions
        base_url="http://127.0.0.1:8000/v1",
        model="served-model-name",      # the name the server knows the model by (vLLM: the path you served)
        key="EMPTY",                    # or "ENV": OPENAI_API_KEY, sent only with --allow-env OPENAI_API_KEY
        batch_size=16,                  # concurrent requests
        query_per_second=None,          # optional rate limit (requests per second)
        retry=6,                        # retries on 429 / 5xx / timeouts, with backoff + jitter, honouring Retry-After
        max_out_len=64,
        meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                  dict(role="BOT", api_role="BOT", generate=True)]),
    ),
]
