"""Reference dataset loader classes (the dataset dict's ``type=``) -> promptweave's native loaders.

Each native loader reads the reference's on-disk layout and yields the same columns, splits and row
transformations (``data/loaders/``, one module per family of layouts). A name not here is looked up in an
installed reference's registry (``compat.bridge``), else it is a typed ``LoaderError``.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry
from promptweave.data.loaders import (
    choice,
    classify,
    code,
    corpus,
    generic,
    hub,
    infinitebench,
    math_qa,
    mm_media,
    mm_tsv,
    multimodal,
    plain_sets,
    qa,
    reshaped_qa,
    subjective,
)

_NATIVE = {
    # multiple choice
    "ARCDataset": choice.arc,
    "RaceDataset": choice.race,
    "MathBenchDataset": choice.mathbench,
    "WikiBenchDataset": choice.wikibench,
    "OBQADataset": choice.obqa,
    "ChemBenchDataset": choice.chembench,
    "Earth_Silver_MCQDataset": choice.earth_silver_mcq,
    # maths
    "MATHDataset": math_qa.math,
    "Aime2024Dataset": math_qa.aime2024,
    "TheoremQADataset": math_qa.theoremqa,
    "OlympiadBenchDataset": math_qa.olympiadbench,
    "TheoremQADatasetV3": math_qa.theoremqa_v3,
    "MatbenchDataset": math_qa.matbench,
    "PhyBenchDataset": math_qa.phybench,
    # code
    "LCDataset": code.lc,
    # question answering
    "CharmDataset": qa.charm,
    "BBEHDataset": qa.bbeh,
    "ReCoRDDataset": qa.record,
    # plain rows and relabelled classifiers
    "CustomDataset": generic.custom,
    "JsonlDataset": generic.jsonl_rows,
    "MGSMSDataset": generic.mgsm,
    "StrategyQADataset": generic.strategyqa,
    "Aime2025Dataset": generic.plain_jsonl,
    "Aime2026Dataset": generic.plain_jsonl,
    # datasets-library layouts
    "HFDataset": hub.hf_dataset,
    "HLEDataset": hub.hle,
    "IWSLT2017Dataset": hub.iwslt2017,
    "WiCDataset": hub.wic,
    "SimpleQADataset": hub.simpleqa,
    "OlymMATHDataset": hub.olymmath,
    "SmolInstructDataset": hub.smolinstruct,
    "MRCRDataset": hub.mrcr,
    # AISBench multimodal (rows with a content column)
    "MMCustomDataset": multimodal.mm_custom,
    "InfoVQADataset": mm_tsv.infovqa,
    "RealworldQADataset": mm_tsv.realworldqa,
    "VocalSoundDataset": mm_media.vocalsound,
    "VideoMMEDataset": mm_media.videomme,
    # function calling (AISBench BFCL v3, single-turn categories)
    # open-ended sets judged by an LLM
    "FofoDataset": subjective.fofo,
    "SubjectiveCmpDataset": subjective.subjective_cmp,
    # summarisation and exam papers
    # long context
    "InfiniteBenchcodedebugDataset": infinitebench.codedebug,
    # corpora of the corpus-loss forms, and MBPP+ (data/loaders/corpus.py)
    "InferencePPLDataset": corpus.inference_ppl,
    "LLMCompressionDataset": corpus.llm_compression,
    # short-form classifiers and multiple choice that relabel a gold column (AdvGLUE, ANLI, TNEWS, WSC, ...)
    **classify.CLASSES,
    # question sets reshaped once per record (CMO, ChemExam, LiveStemBench, QASPER, MMLU-CF)
    **reshaped_qa.CLASSES,
    # sets read as stored, columns renamed (Xiezhi, CSL v2, CrowS-Pairs, Jigsaw, FLORES, HumanEval-X)
    **plain_sets.CLASSES,
}

# every name above, then the benchmark suites' own (compat/suites.py), looked up on first use of a name not above
LOADERS: Registry = Registry(_NATIVE, "LOADERS")
