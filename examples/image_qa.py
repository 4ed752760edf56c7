# Image question answering in the AISBench config shape (MMPromptTemplate).
#
# Each row's `content` column lists the parts of the question in order, each opened by a marker
# and closed by <AIS_CONTENT_TAG>: <AIS_TEXT_START>text, <AIS_IMAGE_START>image, and likewise
# <AIS_VIDEO_START> / <AIS_AUDIO_START>. Every part is built from the matching prompt_mm entry:
# {question} takes the text, {image} the image payload. Here the payload is the base64 of the tiny
# PNGs in data/images/ (made with promptweave.prompt.multimodal.build_content and file_as_base64);
# a template "file://{image}" or "{image}" takes file paths or URLs instead.
#
# Chat API models receive OpenAI-style content lists. A text-only model cannot see images: by
# default each image is written as the placeholder "<image>" (with a warning); set
# media_placeholders on the model to change the text.
#
# `promptweave view examples/image_qa.py` shows the prompts, with images as short labels.
# Configs are read safely: this file is evaluated as data, no code in it runs.
from ais_bench.benchmark.openicl.icl_prompt_template import MMPromptTemplate
from ais_bench.benchmark.openicl.icl_retriever import ZeroRetriever
from ais_bench.benchmark.openicl.icl_inferencer import GenInferencer

image_qa = dict(
    abbr="image_qa",
    path="data/image_qa.jsonl",
    reader_cfg=dict(input_columns=["content"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(
            type=MMPromptTemplate,
            template=dict(
                round=[
                    dict(
                        role="HUMAN",
                        prompt_mm=dict(
                            text=dict(type="text", text="{question} Answer in a few words."),
                            image=dict(type="image_url", image_url=dict(url="data:image/png;base64,{image}")),
                        ),
                    ),
                ],
            ),
        ),
        retriever=dict(type=ZeroRetriever),
        inferencer=dict(type=GenInferencer, max_out_len=32),
    ),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)

datasets = [image_qa]

models = [
    dict(
        abbr="vision-api",
        type="OpenAICompatModel",
        kind="api",
        base_url="http://127.0.0.1:8000/v1",
        model="served-vision-model",
        meta_template=dict(
            round=[
                dict(role="HUMAN", api_role="HUMAN"),
                dict(role="BOT", api_role="BOT", generate=True),
            ],
        ),
    ),
    dict(
        abbr="text-only-lm",
        type="TransformersModel",
        path="path/to/a/local/model",
        media_placeholders=dict(image="<image>"),
        meta_template=dict(
            round=[
                dict(role="HUMAN", begin="<|im_start|>user\n", end="<|im_end|>\n"),
                dict(role="BOT", begin="<|im_start|>assistant\n", end="<|im_end|>\n", generate=True),
            ],
        ),
    ),
]
