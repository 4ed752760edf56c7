"""Reference dataset loader classes (the dataset dict's ``type=``) -> promptweave's native loaders.

Each native loader reads the reference's on-disk layout and yields the same columns, splits and row
transformations (``data/loaders/``, one module per family of layouts). A name not here is looked up in an
installed reference's registry (``compat.bridge``), else it is a typed ``LoaderError``.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry

_NATIVE: dict[str, str] = {
    # multiple choice
    # maths
    "MATHDataset": "promptweave.data.loaders.math_qa:math",
    # code
    # question answering
    # plain rows and relabelled classifiers
    "CustomDataset": "promptweave.data.loaders.generic:custom",
    "JsonlDataset": "promptweave.data.loaders.generic:jsonl_rows",
    "Aime2025Dataset": "promptweave.data.loaders.generic:plain_jsonl",
    "Aime2026Dataset": "promptweave.data.loaders.generic:plain_jsonl",
    # datasets-library layouts
    "HFDataset": "promptweave.data.loaders.hub:hf_dataset",
    # AISBench multimodal (rows with a content column)
    "MMCustomDataset": "promptweave.data.loaders.multimodal:mm_custom",
    # function calling (AISBench BFCL v3, single-turn categories)
    # open-ended sets judged by an LLM
    "SubjectiveCmpDataset": "promptweave.data.loaders.subjective:subjective_cmp",
    # summarisation and exam papers
    # long context
    # corpora of the corpus-loss forms, and MBPP+ (data/loaders/corpus.py)
    "InferencePPLDataset": "promptweave.data.loaders.corpus:inference_ppl",
    "LLMCompressionDataset": "promptweave.data.loaders.corpus:llm_compression",
    # short-form classifiers and multiple choice that relabel a gold column (AdvGLUE, ANLI, TNEWS, WSC, ...)
    # question sets reshaped once per record (CMO, ChemExam, LiveStemBench, QASPER, MMLU-CF)
    # sets read as stored, columns renamed (Xiezhi, CSL v2, CrowS-Pairs, Jigsaw, FLORES, HumanEval-X)
}

# every name above, then the benchmark suites' own (compat/suites.py), looked up on first use of a name not above
LOADERS: Registry = Registry(_NATIVE, "LOADERS")
