# promptweave quickstart: two datasets x two models, in the OpenCompass config shape.
# `promptweave view examples/quickstart.py` shows the exact prompt each model receives.
# Configs are read safely: this file is evaluated as data, no code in it runs.
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import FixKRetriever, ZeroRetriever
from opencompass.openicl.icl_inferencer import GenInferencer, PPLInferencer

# A generation task with 3 fixed in-context examples, as a dialogue.
arithmetic = dict(
    abbr="arithmetic",
    path="data/arithmetic.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer", test_range="[3:]", train_range="[0:3]"),
    infer_cfg=dict(
        ice_template=dict(
            type=PromptTemplate,
            template=dict(
                begin="</E>",
                round=[
                    dict(role="HUMAN", prompt="Question: {question}\nAnswer with a number."),
                    dict(role="BOT", prompt="{answer}"),
                ],
            ),
            ice_token="</E>",
        ),
        retriever=dict(type=FixKRetriever, fix_id_list=[0, 1, 2]),
        inferencer=dict(type=GenInferencer, max_out_len=16),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"), pred_postprocessor=dict(type="first_number")),
)

# A multiple-choice task scored by perplexity: one prompt per label, the lowest wins.
_question = "Question: {question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer:"
science = dict(
    abbr="science_mc",
    path="data/science_mc.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(
            type=PromptTemplate,
            template={
                label: dict(round=[dict(role="HUMAN", prompt=_question), dict(role="BOT", prompt=f"{label}")])
                for label in ["A", "B", "C", "D"]
            },
        ),
        retriever=dict(type=ZeroRetriever),
        inferencer=dict(type=PPLInferencer),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)

datasets = [arithmetic, science]

# A local chat LM (ChatML-style meta template) and an OpenAI-compatible chat API model.
models = [
    dict(
        abbr="local-chatml",
        type="TransformersModel",
        path="path/to/a/local/model",
        meta_template=dict(
            begin="<|im_start|>system\nYou are a careful assistant.<|im_end|>\n",
            round=[
                dict(role="HUMAN", begin="<|im_start|>user\n", end="<|im_end|>\n"),
                dict(role="BOT", begin="<|im_start|>assistant\n", end="<|im_end|>\n", generate=True),
            ],
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
        ),
    ),
]

# Which datasets each model runs (OpenCompass's model_dataset_combinations): perplexity scoring needs the
# log-probability of every prompt token, which a chat API does not return, so science_mc goes to the local LM only.
model_dataset_combinations = [
    dict(models=[models[0]], datasets=[arithmetic, science]),
    dict(models=[models[1]], datasets=[arithmetic]),
]
