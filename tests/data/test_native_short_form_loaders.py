"""Native loaders of the short-form families read the reference's on-disk layout into the reference's rows.

Each case writes stand-in files in the layout the OpenCompass loader reads and compares the native rows (per
split) with the rows OpenCompass 0.5.4's own class returned on the same files. Those rows were dumped once in the
full environment (``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``, the script in :data:`REFERENCE`) and are written here; where
``$PROMPTWEAVE_OC_FULL_VENV`` names that environment the dump runs again and must agree.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from promptweave.data.loaders import load
from promptweave.data.sources import Split


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _adv_qqp(root: Path) -> dict:
    f = root / "adv.json"
    f.write_text(json.dumps({"qqp": [
        {"question1": "q1", "question2": "q2", "label": 1, "idx": 0, "original_question2": "o2"},
        {"question1": "r1", "question2": "r2", "label": 0, "idx": 1},
        {"question1": "s1", "question2": "s2", "label": 0, "idx": 2, "original_question1": "p1",
         "original_question2": "p2", "extra": "dropped: not a key of the first row"},
    ]}), encoding="utf-8")
    return {"type": "AdvQqpDataset", "path": str(f)}


def _adv_sst2(root: Path) -> dict:
    f = root / "adv.json"
    f.write_text(json.dumps({"sst2": [
        {"sentence": "bad", "label": 0, "idx": 0, "original_sentence": "good"},
        {"sentence": "fine", "label": 1, "idx": 1, "original_sentence": ""},
    ]}), encoding="utf-8")
    return {"type": "AdvSst2Dataset", "path": str(f)}


def _wsc_v1(root: Path) -> dict:
    _jsonl(root / "val.jsonl", [
        {"text": "Mark told Pete many lies about himself .", "label": "false", "idx": 0,
         "target": {"span1_text": "Pete", "span1_index": 2, "span2_text": "himself", "span2_index": 6}}])
    return {"type": "WSCDataset", "path": "json", "data_files": str(root / "val.jsonl"), "split": "train"}


def _wsc_v3(root: Path) -> dict:
    _jsonl(root / "val.jsonl", [
        {"text": "The big trophy does not fit because it is too big .", "label": "true", "idx": 0,
         "target": {"span1_text": "The big trophy", "span1_index": 0, "span2_text": "it", "span2_index": 6}}])
    return {"type": "WSCDatasetV3", "path": str(root / "val.jsonl")}


def _tnews_v1(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"sentence": "s", "label": "103", "label_desc": "news_sports", "keywords": ""}])
    return {"type": "TNewsDataset", "path": "json", "data_files": str(root / "dev.json"), "split": "train"}


def _storycloze_v1(root: Path) -> dict:
    for split in ("train", "eval"):
        _jsonl(root / f"zh_{split}.jsonl", [{"story_id": split, "input_sentence_1": "一", "input_sentence_2": "二",
                                             "input_sentence_3": "三", "input_sentence_4": "四",
                                             "sentence_quiz1": "甲", "sentence_quiz2": "乙",
                                             "answer_right_ending": 2}])
    return {"type": "StoryClozeDataset", "path": str(root), "lang": "zh"}


def _pmmeval(root: Path) -> dict:
    _jsonl(root / "mmmlu" / "easy" / "test" / "mmlu_EN-US.jsonl", [{"id": "e", "question": "q", "answer": "A"}])
    _jsonl(root / "mmmlu" / "hard" / "test" / "mmlu_EN-US.jsonl",
           [{"id": "h", "question": "q2", "answer": "B", "subject": "later rows' extra keys are dropped"}])
    return {"type": "PMMEvalMMMLUDataset", "path": str(root), "lang": "EN-US", "difficulty": "all"}


def _pmmeval_humanevalxl(root: Path) -> dict:
    _jsonl(root / "humaneval-xl" / "test" / "python" / "English.jsonl",
           [{"task_id": "python/0", "prompt": "def f():", "test": "assert f()"}])
    return {"type": "PMMEvalHumanEvalXLDataset", "path": str(root), "lang": "English", "program_lang": "python"}


def _medmcqa(root: Path) -> dict:
    _jsonl(root / "validation.jsonl", [
        {"id": "m0", "question": "Which vitamin?", "opa": "A1", "opb": "B12", "opc": "C", "opd": "D3", "cop": 1,
         "choice_type": "single", "exp": "", "subject_name": "Social_Preventive Medicine", "topic_name": "t"}])
    return {"type": "MedmcqaDataset", "path": str(root)}


def _climaqa(root: Path) -> dict:
    _jsonl(root / "mcq" / "train.jsonl", [
        {"Question": "Why is the sky blue?", "Options": "a) dust\nb) scattering", "Answer": "b"},
        {"Question": "Is CO2 a gas?", "Options": None, "Answer": "yes"}])
    return {"type": "ClimaQADataset", "path": str(root), "task": "mcq"}


def _afqmc(root: Path) -> dict:
    _jsonl(root / "dev.json", [{"sentence1": "a", "sentence2": "b", "label": "1"}])
    return {"type": "AFQMCDatasetV2", "path": str(root / "dev.json"), "local_mode": True}


def _persona(root: Path) -> dict:
    _jsonl(root / "p.jsonl", [{"question": "Is it?", "statement": "s", "answer_matching_behavior": " Yes",
                               "answer_not_matching_behavior": " No"},
                              {"question": "Is it not?", "statement": "t", "answer_matching_behavior": " No",
                               "answer_not_matching_behavior": " Yes"}])
    return {"type": "PersonaDataset", "path": str(root / "p.jsonl")}


def _chem_exam(root: Path) -> dict:
    _jsonl(root / "chem.jsonl", [
        {"id": 1, "question": "Water?", "answer": "H2O", "qa_type": 1, "has_img": False},
        {"id": 2, "question": "Salts:", "has_img": True, "sub_question": [
            {"question": "NaCl?", "answer": "table salt", "qa_type": 2},
            {"question": "KCl:", "sub_question": [{"question": "colour?", "answer": "white", "qa_type": 3}]}]}])
    return {"type": "ChemExamDataset", "path": str(root / "chem.jsonl")}


def _livestembench(root: Path) -> dict:
    (root / "v1.json").write_text(json.dumps(
        [{"question": f"q{i}", "options": ["A. x", "B. y"] if i % 2 else [], "answer": str(i)} for i in range(6)]),
        encoding="utf-8")
    return {"type": "LiveStemBenchDataset", "path": str(root), "version": "v1", "num_examples": 3}


def _mmlu_cf(root: Path) -> dict:
    # the hub repository names its splits <subject>_<dev|val> in its README's YAML header; a local copy does too
    (root / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                    "  - split: Law_dev\n    path: Law_dev.jsonl\n"
                                    "  - split: Law_val\n    path: Law_val.jsonl\n---\n", encoding="utf-8")
    for split in ("dev", "val"):
        _jsonl(root / f"Law_{split}.jsonl", [{"Question": f"{split} q", "A": "a", "B": "b", "C": "c", "D": "d",
                                               "Answer": "C", "Source": "s"}])
    return {"type": "MMLUCFDataset", "path": str(root), "name": "Law"}


def _musr(root: Path) -> dict:
    stories = [{"context": f"Story {i}.", "questions": [
        {"question": "Who did it?", "choices": ["Bob", "Cy"], "answer": i % 2,
         "intermediate_trees": [], "intermediate_data": [{"story_hash_id": "h" + str(i // 2)}]}]} for i in range(4)]
    for task in ("murder_mysteries", "object_placements"):
        (root / f"{task}.json").write_text(json.dumps(stories), encoding="utf-8")
    return {"type": "MusrDataset", "path": str(root), "name": "object_placements",
            "exclude_contrastive_examples": True, "offset": 0, "sample_size": 5}


def _musr_murder(root: Path) -> dict:
    return {**_musr(root), "name": "murder_mysteries", "exclude_contrastive_examples": False,
            "self_consistency_n": 2, "offset": 1, "sample_size": 2}


def _livemathbench(root: Path) -> dict:
    for split, lang in (("AMC", "cn"), ("AMC", "en")):
        _jsonl(root / "202412" / f"{split}_{lang}.jsonl", [{"question": f"{lang} 1+1?", "answer": "2"},
                                                            {"question": f"{lang} 2+2?", "answer": "4"}])
    return {"type": "LiveMathBenchDataset", "path": str(root), "dataset_splits": ["AMC"], "cot": False}


def _nejm(root: Path) -> dict:
    f = root / "nejm.csv"
    with f.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["Question", "Choices", "Answer", "Subject", "Year"],
                                  ["Which?", " A. One\nB.Two \n\n C. Three", "B", "Cardio", "2023"],
                                  ["Why?", "A. x", "A", "", "2024"]])
    return {"type": "NejmaibenchDataset", "path": str(f)}


def _medbullets(root: Path) -> dict:
    f = root / "mb.csv"
    with f.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["question", "answer", "answer_idx", "opa", "opb", "opc", "opd", "ope", "n"],
                                  ["Q1", "x", "A", "a", "b", "c", "d", "e", "1"],
                                  ["Q2", "y", "B", "a", "b", "c", "d", "", "2"]])
    return {"type": "MedbulletsDataset", "path": str(f)}


CASES = {
    "adv_qqp": _adv_qqp, "adv_sst2": _adv_sst2, "wsc_v1": _wsc_v1, "wsc_v3": _wsc_v3, "tnews_v1": _tnews_v1,
    "storycloze_v1": _storycloze_v1, "pmmeval_mmmlu": _pmmeval, "pmmeval_humanevalxl": _pmmeval_humanevalxl,
    "musr": _musr, "musr_murder": _musr_murder, "livemathbench": _livemathbench, "nejmaibench": _nejm,
    "medbullets": _medbullets,
    "medmcqa": _medmcqa, "chem_exam": _chem_exam, "livestembench": _livestembench, "mmlu_cf": _mmlu_cf, "climaqa": _climaqa, "afqmc_v2": _afqmc, "persona": _persona,
}

# rows OpenCompass's own classes returned on the same files: {split or "": rows}
EXPECTED: dict[str, dict[str, list[dict[str, Any]]]] = {'adv_qqp': {'': [{'question1': 'q1',
                       'question2': 'q2',
                       'label': 1,
                       'idx': 0,
                       'original_question2': 'o2',
                       'original_question1': None,
                       'type': None,
                       'label_option': 'B'},
                      {'question1': 's1',
                       'question2': 's2',
                       'label': 0,
                       'idx': 2,
                       'original_question2': 'p2',
                       'original_question1': 'p1',
                       'type': None,
                       'label_option': 'A'},
                      {'question1': 'q1',
                       'question2': 'o2',
                       'label': 1,
                       'idx': 0,
                       'original_question2': 'o2',
                       'original_question1': None,
                       'type': 'original',
                       'label_option': 'B'},
                      {'question1': 'p1',
                       'question2': 'p2',
                       'label': 0,
                       'idx': 2,
                       'original_question2': 'p2',
                       'original_question1': 'p1',
                       'type': 'original',
                       'label_option': 'A'}]},
     'adv_sst2': {'': [{'sentence': 'bad',
                        'label': 0,
                        'idx': 0,
                        'original_sentence': 'good',
                        'type': None,
                        'label_option': 'A'},
                       {'sentence': 'good',
                        'label': 0,
                        'idx': 0,
                        'original_sentence': 'good',
                        'type': 'original',
                        'label_option': 'A'}]},
     'afqmc_v2': {'': [{'sentence1': 'a', 'sentence2': 'b', 'label': 'B'}]},
     'chem_exam': {'': [{'id': 1, 'prompt': 'Water?', 'output': 'H2O', 'has_img': False, 'qa_type': ['1']},
                        {'id': 2,
                         'prompt': 'Salts:\nQ1: NaCl?\nQ2: KCl:\nQ2.1: colour?',
                         'output': '\nA1: table salt\nA2.1: white',
                         'has_img': True,
                         'qa_type': ['2', '3']}]},
     'climaqa': {'': [{'Question': 'Why is the sky blue?',
                       'Options': 'a) dust\nb) scattering',
                       'target': 'b',
                       'input': 'Why is the sky blue?\na) dust\nb) scattering'},
                      {'Question': 'Is CO2 a gas?', 'Options': None, 'target': 'yes', 'input': 'Is CO2 a gas?'}]},
     'livemathbench': {'': [{'question': 'cn 1+1?',
                             'answer': '2',
                             'subdivision': 'livemathbench_202412_AMC_cn',
                             'idx': '0',
                             'prompt': '下面是一个数学问题，并把最终答案放置于\\boxed{}中。\ncn 1+1?\n'},
                            {'question': 'cn 2+2?',
                             'answer': '4',
                             'subdivision': 'livemathbench_202412_AMC_cn',
                             'idx': '1',
                             'prompt': '下面是一个数学问题，并把最终答案放置于\\boxed{}中。\ncn 2+2?\n'},
                            {'question': 'en 1+1?',
                             'answer': '2',
                             'subdivision': 'livemathbench_202412_AMC_en',
                             'idx': '0',
                             'prompt': 'Here is a math question, and put your answer in \\boxed{}.\nen 1+1?\n'},
                            {'question': 'en 2+2?',
                             'answer': '4',
                             'subdivision': 'livemathbench_202412_AMC_en',
                             'idx': '1',
                             'prompt': 'Here is a math question, and put your answer in \\boxed{}.\nen 2+2?\n'}]},
     'livestembench': {'train': [{'question': 'q3\nA. x\nB. y', 'answer': '3'},
                                 {'question': 'q5\nA. x\nB. y', 'answer': '5'},
                                 {'question': 'q0', 'answer': '0'}],
                       'test': [{'question': 'q3\nA. x\nB. y', 'answer': '3'},
                                {'question': 'q5\nA. x\nB. y', 'answer': '5'},
                                {'question': 'q0', 'answer': '0'}]},
     'medbullets': {'': [{'question': 'Q1\nA. a\nB. b\nC. c\nD. d\nE. e',
                          'answer': 'x',
                          'answer_idx': 'A',
                          'opa': 'a',
                          'opb': 'b',
                          'opc': 'c',
                          'opd': 'd',
                          'ope': 'e',
                          'n': 1,
                          'options': ['a', 'b', 'c', 'd', 'e'],
                          'label': 'A',
                          'prompt_mode': 'zero-shot',
                          'start': 'A',
                          'end': 'E'},
                         {'question': 'Q2\nA. a\nB. b\nC. c\nD. d',
                          'answer': 'y',
                          'answer_idx': 'B',
                          'opa': 'a',
                          'opb': 'b',
                          'opc': 'c',
                          'opd': 'd',
                          'ope': '',
                          'n': 2,
                          'options': ['a', 'b', 'c', 'd'],
                          'label': 'B',
                          'prompt_mode': 'zero-shot',
                          'start': 'A',
                          'end': 'D'}]},
     'medmcqa': {'': [{'id': 'm0',
                       'question': 'Which vitamin?\nA. A1\nB. B12\nC. C\nD. D3',
                       'opa': 'A1',
                       'opb': 'B12',
                       'opc': 'C',
                       'opd': 'D3',
                       'cop': 1,
                       'choice_type': 'single',
                       'exp': '',
                       'subject_name': 'Social Preventive Medicine',
                       'topic_name': 't',
                       'options': ['A1', 'B12', 'C', 'D3'],
                       'label': 'B',
                       'prompt_mode': 'zero-shot',
                       'start': 'A',
                       'end': 'D'}]},
     'mmlu_cf': {'dev': [{'Question': 'dev q',
                          'A': 'a',
                          'B': 'b',
                          'C': 'c',
                          'D': 'd',
                          'Answer': 'C',
                          'Source': 's',
                          'input': 'dev q',
                          'target': 'C'}],
                 'test': [{'Question': 'val q',
                           'A': 'a',
                           'B': 'b',
                           'C': 'c',
                           'D': 'd',
                           'Answer': 'C',
                           'Source': 's',
                           'input': 'val q',
                           'target': 'C'}]},
     'musr': {'': [{'context': 'Story 0.',
                    'question_text': 'Who did it?',
                    'question': {'answer': 0,
                                 'choices': ['Bob', 'Cy'],
                                 'intermediate_data': [{'story_hash_id': 'h0'}],
                                 'intermediate_trees': [],
                                 'question': 'Who did it?'},
                    'answer': 0,
                    'choices': ['Bob', 'Cy'],
                    'choices_str': '1 - Bob\n2 - Cy',
                    'intermediate_trees': [],
                    'intermediate_data': [{'story_hash_id': 'h0'}],
                    'prompt': 'Story 0.\n'
                              '\n'
                              'Based on this story, we want to identify where someone believes that a certain object '
                              'is at the end of the story. In order to do that, you need to read the story and keep '
                              'track of where they think the object is at each point. When an object is moved, the '
                              'person may observe its new location if they saw it move.\n'
                              '\n'
                              'To see where an object ends up, they must be able to see the location that it moves '
                              'to and not be too distracted by what they are doing. If they do not observe the '
                              'object moving, then they will still believe it to be in the last location where they '
                              'observed it.\n'
                              '\n'
                              'Who did it?\n'
                              '\n'
                              'Pick one of the following choices:\n'
                              '1 - Bob\n'
                              '2 - Cy\n'
                              '\n'
                              'You must pick one option. Explain your reasoning step by step before you answer. '
                              'Finally, the last thing you generate should be "ANSWER: (your answer here, including '
                              'the choice number)"',
                    'system_prompt': 'You are a helpful assistant that will answer the questions given by the user.',
                    'gold_answer': 1,
                    'scidx': 0,
                    'self_consistency_n': 1,
                    'ablation_name': 'cot+'},
                   {'context': 'Story 2.',
                    'question_text': 'Who did it?',
                    'question': {'answer': 0,
                                 'choices': ['Bob', 'Cy'],
                                 'intermediate_data': [{'story_hash_id': 'h1'}],
                                 'intermediate_trees': [],
                                 'question': 'Who did it?'},
                    'answer': 0,
                    'choices': ['Bob', 'Cy'],
                    'choices_str': '1 - Bob\n2 - Cy',
                    'intermediate_trees': [],
                    'intermediate_data': [{'story_hash_id': 'h1'}],
                    'prompt': 'Story 2.\n'
                              '\n'
                              'Based on this story, we want to identify where someone believes that a certain object '
                              'is at the end of the story. In order to do that, you need to read the story and keep '
                              'track of where they think the object is at each point. When an object is moved, the '
                              'person may observe its new location if they saw it move.\n'
                              '\n'
                              'To see where an object ends up, they must be able to see the location that it moves '
                              'to and not be too distracted by what they are doing. If they do not observe the '
                              'object moving, then they will still believe it to be in the last location where they '
                              'observed it.\n'
                              '\n'
                              'Who did it?\n'
                              '\n'
                              'Pick one of the following choices:\n'
                              '1 - Bob\n'
                              '2 - Cy\n'
                              '\n'
                              'You must pick one option. Explain your reasoning step by step before you answer. '
                              'Finally, the last thing you generate should be "ANSWER: (your answer here, including '
                              'the choice number)"',
                    'system_prompt': 'You are a helpful assistant that will answer the questions given by the user.',
                    'gold_answer': 1,
                    'scidx': 0,
                    'self_consistency_n': 1,
                    'ablation_name': 'cot+'}]},
     'musr_murder': {'': [{'context': 'Story 1.',
                           'question_text': 'Who did it?',
                           'question': {'answer': 1,
                                        'choices': ['Bob', 'Cy'],
                                        'intermediate_data': [{'story_hash_id': 'h0'}],
                                        'intermediate_trees': [],
                                        'question': 'Who did it?'},
                           'answer': 1,
                           'choices': ['Bob', 'Cy'],
                           'choices_str': '1 - Bob\n2 - Cy',
                           'intermediate_trees': [],
                           'intermediate_data': [{'story_hash_id': 'h0'}],
                           'prompt': 'Story 1.\n'
                                     '\n'
                                     'Who did it?\n'
                                     '\n'
                                     'Pick one of the following choices:\n'
                                     '1 - Bob\n'
                                     '2 - Cy\n'
                                     '\n'
                                     'You must pick one option. Before selecting a choice, explain your reasoning '
                                     'step by step. The murderer needs to have a means (access to weapon), motive '
                                     '(reason to kill the victim), and opportunity (access to crime scene) in order '
                                     'to have killed the victim. Innocent suspects may have two of these proven, but '
                                     'not all three. An innocent suspect may be suspicious for some other reason, '
                                     'but they will not have all of motive, means, and opportunity established.\n'
                                     '\n'
                                     'If you believe that both suspects have motive, means, and opportunity, you '
                                     'should make an educated guess and pick the one for whom these are best '
                                     'established. If you believe that neither suspect has all three established, '
                                     'then choose the suspect where these are most clearly established. Explain your '
                                     'reasoning step by step before you answer. Finally, the last thing you generate '
                                     'should be "ANSWER: (your answer here, including the choice number)"',
                           'system_prompt': 'You are a helpful assistant that will answer the questions given by the '
                                            'user.',
                           'gold_answer': 2,
                           'scidx': 0,
                           'self_consistency_n': 2,
                           'ablation_name': 'cot+'},
                          {'context': 'Story 1.',
                           'question_text': 'Who did it?',
                           'question': {'answer': 1,
                                        'choices': ['Bob', 'Cy'],
                                        'intermediate_data': [{'story_hash_id': 'h0'}],
                                        'intermediate_trees': [],
                                        'question': 'Who did it?'},
                           'answer': 1,
                           'choices': ['Bob', 'Cy'],
                           'choices_str': '1 - Bob\n2 - Cy',
                           'intermediate_trees': [],
                           'intermediate_data': [{'story_hash_id': 'h0'}],
                           'prompt': 'Story 1.\n'
                                     '\n'
                                     'Who did it?\n'
                                     '\n'
                                     'Pick one of the following choices:\n'
                                     '1 - Bob\n'
                                     '2 - Cy\n'
                                     '\n'
                                     'You must pick one option. Before selecting a choice, explain your reasoning '
                                     'step by step. The murderer needs to have a means (access to weapon), motive '
                                     '(reason to kill the victim), and opportunity (access to crime scene) in order '
                                     'to have killed the victim. Innocent suspects may have two of these proven, but '
                                     'not all three. An innocent suspect may be suspicious for some other reason, '
                                     'but they will not have all of motive, means, and opportunity established.\n'
                                     '\n'
                                     'If you believe that both suspects have motive, means, and opportunity, you '
                                     'should make an educated guess and pick the one for whom these are best '
                                     'established. If you believe that neither suspect has all three established, '
                                     'then choose the suspect where these are most clearly established. Explain your '
                                     'reasoning step by step before you answer. Finally, the last thing you generate '
                                     'should be "ANSWER: (your answer here, including the choice number)"',
                           'system_prompt': 'You are a helpful assistant that will answer the questions given by the '
                                            'user.',
                           'gold_answer': 2,
                           'scidx': 1,
                           'self_consistency_n': 2,
                           'ablation_name': 'cot+'},
                          {'context': 'Story 2.',
                           'question_text': 'Who did it?',
                           'question': {'answer': 0,
                                        'choices': ['Bob', 'Cy'],
                                        'intermediate_data': [{'story_hash_id': 'h1'}],
                                        'intermediate_trees': [],
                                        'question': 'Who did it?'},
                           'answer': 0,
                           'choices': ['Bob', 'Cy'],
                           'choices_str': '1 - Bob\n2 - Cy',
                           'intermediate_trees': [],
                           'intermediate_data': [{'story_hash_id': 'h1'}],
                           'prompt': 'Story 2.\n'
                                     '\n'
                                     'Who did it?\n'
                                     '\n'
                                     'Pick one of the following choices:\n'
                                     '1 - Bob\n'
                                     '2 - Cy\n'
                                     '\n'
                                     'You must pick one option. Before selecting a choice, explain your reasoning '
                                     'step by step. The murderer needs to have a means (access to weapon), motive '
                                     '(reason to kill the victim), and opportunity (access to crime scene) in order '
                                     'to have killed the victim. Innocent suspects may have two of these proven, but '
                                     'not all three. An innocent suspect may be suspicious for some other reason, '
                                     'but they will not have all of motive, means, and opportunity established.\n'
                                     '\n'
                                     'If you believe that both suspects have motive, means, and opportunity, you '
                                     'should make an educated guess and pick the one for whom these are best '
                                     'established. If you believe that neither suspect has all three established, '
                                     'then choose the suspect where these are most clearly established. Explain your '
                                     'reasoning step by step before you answer. Finally, the last thing you generate '
                                     'should be "ANSWER: (your answer here, including the choice number)"',
                           'system_prompt': 'You are a helpful assistant that will answer the questions given by the '
                                            'user.',
                           'gold_answer': 1,
                           'scidx': 0,
                           'self_consistency_n': 2,
                           'ablation_name': 'cot+'},
                          {'context': 'Story 2.',
                           'question_text': 'Who did it?',
                           'question': {'answer': 0,
                                        'choices': ['Bob', 'Cy'],
                                        'intermediate_data': [{'story_hash_id': 'h1'}],
                                        'intermediate_trees': [],
                                        'question': 'Who did it?'},
                           'answer': 0,
                           'choices': ['Bob', 'Cy'],
                           'choices_str': '1 - Bob\n2 - Cy',
                           'intermediate_trees': [],
                           'intermediate_data': [{'story_hash_id': 'h1'}],
                           'prompt': 'Story 2.\n'
                                     '\n'
                                     'Who did it?\n'
                                     '\n'
                                     'Pick one of the following choices:\n'
                                     '1 - Bob\n'
                                     '2 - Cy\n'
                                     '\n'
                                     'You must pick one option. Before selecting a choice, explain your reasoning '
                                     'step by step. The murderer needs to have a means (access to weapon), motive '
                                     '(reason to kill the victim), and opportunity (access to crime scene) in order '
                                     'to have killed the victim. Innocent suspects may have two of these proven, but '
                                     'not all three. An innocent suspect may be suspicious for some other reason, '
                                     'but they will not have all of motive, means, and opportunity established.\n'
                                     '\n'
                                     'If you believe that both suspects have motive, means, and opportunity, you '
                                     'should make an educated guess and pick the one for whom these are best '
                                     'established. If you believe that neither suspect has all three established, '
                                     'then choose the suspect where these are most clearly established. Explain your '
                                     'reasoning step by step before you answer. Finally, the last thing you generate '
                                     'should be "ANSWER: (your answer here, including the choice number)"',
                           'system_prompt': 'You are a helpful assistant that will answer the questions given by the '
                                            'user.',
                           'gold_answer': 1,
                           'scidx': 1,
                           'self_consistency_n': 2,
                           'ablation_name': 'cot+'}]},
     'nejmaibench': {'': [{'Question': 'Which?',
                           'Choices': ' A. One\nB.Two \n\n C. Three',
                           'Answer': 'B',
                           'Subject': 'Cardio',
                           'Year': 2023,
                           'options': ['One', 'Two', 'Three'],
                           'question': 'Which?\nA. One\nB. Two\nC. Three',
                           'label': 'B',
                           'prompt_mode': 'zero-shot',
                           'start': 'A',
                           'end': 'C'},
                          {'Question': 'Why?',
                           'Choices': 'A. x',
                           'Answer': 'A',
                           'Subject': '',
                           'Year': 2024,
                           'options': ['x'],
                           'question': 'Why?\nA. x',
                           'label': 'A',
                           'prompt_mode': 'zero-shot',
                           'start': 'A',
                           'end': 'A'}]},
     'persona': {'train': [{'question': 'Is it?',
                            'statement': 's',
                            'answer_matching_behavior': 'A',
                            'answer_not_matching_behavior': ' No'},
                           {'question': 'Is it not?',
                            'statement': 't',
                            'answer_matching_behavior': 'B',
                            'answer_not_matching_behavior': ' Yes'}]},
     'pmmeval_humanevalxl': {'': [{'task_id': 'python/0', 'prompt': 'def f():', 'test': 'assert f()'}]},
     'pmmeval_mmmlu': {'': [{'id': 'e', 'question': 'q', 'answer': 'A'},
                            {'id': 'h', 'question': 'q2', 'answer': 'B'}]},
     'storycloze_v1': {'test': [{'story_id': 'train',
                                 'input_sentence_1': '一',
                                 'input_sentence_2': '二',
                                 'input_sentence_3': '三',
                                 'input_sentence_4': '四',
                                 'sentence_quiz1': '甲',
                                 'sentence_quiz2': '乙',
                                 'answer_right_ending': 2,
                                 'context': '一 二 三 四'},
                                {'story_id': 'eval',
                                 'input_sentence_1': '一',
                                 'input_sentence_2': '二',
                                 'input_sentence_3': '三',
                                 'input_sentence_4': '四',
                                 'sentence_quiz1': '甲',
                                 'sentence_quiz2': '乙',
                                 'answer_right_ending': 2,
                                 'context': '一 二 三 四'}]},
     'tnews_v1': {'': [{'sentence': 's',
                        'label': '103',
                        'label_desc': 'news_sports',
                        'keywords': '',
                        'label_desc2': '体育类别新闻'}]},
     'wsc_v1': {'': [{'text': 'Mark told Pete many lies about himself .',
                      'label': 'false',
                      'idx': 0,
                      'new_text': 'Mark told Pete many lies about Pete .',
                      'answer': 0,
                      'span1': 'Pete',
                      'span2': 'himself'}]},
     'wsc_v3': {'': [{'span1': 'The big trophy',
                      'span2': 'it',
                      'text': '* The big trophy * does not fit # it # it is too big .',
                      'label': 'A'}]}}

REFERENCE = """
    import opencompass.datasets as D
    from opencompass.utils import build_dataset_from_cfg
    from datasets import Dataset, DatasetDict
    import importlib
    cfg = dict(PAYLOAD["cfg"])
    cls = getattr(D, cfg["type"], None)
    if cls is None:
        for mod in ("opencompass.datasets.PMMEval", "opencompass.datasets.climaqa", "opencompass.datasets.medmcqa",
                    "opencompass.datasets.Medbullets", "opencompass.datasets.nejmaibench"):
            cls = getattr(importlib.import_module(mod), cfg["type"], None) or cls
    args = {k: v for k, v in cfg.items() if k != "type"}
    if cfg["type"].startswith("Adv"):  # AdvGLUE's load is an instance method: build the object, but keep the
        import opencompass.datasets.base as base  # loader's rows (BaseDataset adds subdivision / idx later)

        def loader_only(self, reader_cfg=None, k=1, n=1, **kw):
            kw.pop("abbr", None)
            self.dataset = self.load(**kw)

        base.BaseDataset.__init__ = loader_only
        got = cls(**args).dataset
    else:
        got = cls.load(**args)
    def rows(ds):
        return [dict(r) for r in ds]
    RESULT = {k: rows(v) for k, v in got.items()} if isinstance(got, (dict, DatasetDict)) else {"": rows(got)}
"""


def _native(cfg: dict) -> dict[str, list[dict[str, Any]]]:
    got = load(cfg, base_dir=None, file=None).splits
    return {"": got.rows} if isinstance(got, Split) else {k: v.rows for k, v in got.items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_native_rows_equal_the_reference_rows(case, tmp_path, monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    monkeypatch.chdir(tmp_path)
    cfg = CASES[case](tmp_path)
    got = _native(cfg)
    assert json.loads(json.dumps(got, ensure_ascii=False)) == EXPECTED[case]

    from tests.e2e import oc_full

    ref = oc_full.run_reference(REFERENCE, {"cfg": cfg}, cwd=tmp_path)
    assert ref == EXPECTED[case]


def test_a_row_missing_the_gold_column_names_file_and_row(tmp_path, monkeypatch):
    from promptweave.errors import LoaderError

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    _jsonl(tmp_path / "dev.jsonl", [{"context": "c", "hypothesis": "h", "label": "e"}, {"context": "c2"}])
    with pytest.raises(LoaderError) as exc:
        load({"type": "AnliDataset", "path": str(tmp_path / "dev.jsonl")}, base_dir=None, file="cfg.py")
    assert "line 2" in str(exc.value) and "label" in str(exc.value)


def test_an_unknown_label_is_a_typed_error(tmp_path, monkeypatch):
    from promptweave.errors import LoaderError

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    _jsonl(tmp_path / "dev.jsonl", [{"context": "c", "hypothesis": "h", "label": "x"}])
    with pytest.raises(LoaderError) as exc:
        load({"type": "AnliDataset", "path": str(tmp_path / "dev.jsonl")}, base_dir=None, file="cfg.py")
    assert "'c', 'e', 'n'" in str(exc.value)


def test_financeiq_row_of_the_wrong_width_is_refused(tmp_path, monkeypatch):
    from promptweave.errors import LoaderError

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    for split in ("dev", "test"):
        f = tmp_path / split / "x.csv"
        f.parent.mkdir()
        with f.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([["", "question", "A", "B", "C", "D", "answer"], ["0", "q", "a", "b"]])
    with pytest.raises(LoaderError) as exc:
        load({"type": "FinanceIQDataset", "path": str(tmp_path), "name": "x"}, base_dir=None, file="cfg.py")
    assert "seven columns" in str(exc.value)


def test_omni_math_without_its_cached_copy_is_a_typed_error_naming_it(tmp_path, monkeypatch):
    from promptweave.errors import PromptweaveError

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty Hugging Face cache: nothing to read offline
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    with pytest.raises(PromptweaveError) as exc:
        load({"type": "OmniMathDataset"}, base_dir=None, file="cfg.py")
    assert "KbsdJames/Omni-MATH" in str(exc.value)
