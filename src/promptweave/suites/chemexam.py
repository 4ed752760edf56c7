"""ChemExam: its loader and its judge-output postprocessor (the judge's number is the row's score)."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need
from promptweave.data.loaders.classify import table


def chem_exam(ctx: LoadContext, path: str) -> Splits:
    """ChemExam JSONL: the question with each sub-question (and sub-sub-question) appended as ``Qi`` / ``Qi.j``
    lines into ``prompt``, their answers as ``Ai`` / ``Ai.j`` lines into ``output``; ``qa_type`` lists the leaves'
    types as text."""
    f = ctx.find(path)
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("id", "question", "has_img"), file=f, where=loc)
        prompt, output, types = r["question"], "", []
        if "sub_question" in r:
            for i, sub in enumerate(r["sub_question"], 1):
                need(ctx, sub, ("question",), file=f, where=f"{loc}.sub_question[{i - 1}]")
                prompt += f"\nQ{i}: {sub['question']}"
                if "sub_question" in sub:
                    for j, leaf in enumerate(sub["sub_question"], 1):
                        need(ctx, leaf, ("question", "answer", "qa_type"), file=f, where=f"{loc} Q{i}.{j}")
                        prompt += f"\nQ{i}.{j}: {leaf['question']}"
                        output += f"\nA{i}.{j}: {leaf['answer']}"
                        types.append(leaf["qa_type"])
                else:
                    need(ctx, sub, ("answer", "qa_type"), file=f, where=f"{loc} Q{i}")
                    output += f"\nA{i}: {sub['answer']}"
                    types.append(sub["qa_type"])
        else:
            need(ctx, r, ("answer", "qa_type"), file=f, where=loc)
            output = r["answer"]
            types.append(r["qa_type"])
        items.append((loc, {"id": r["id"], "prompt": prompt, "output": output, "has_img": r["has_img"],
                            "qa_type": [str(t) for t in types]}))
    return table(items, f)



_CHEM_NUMBER = re.compile(r"(?:<NUMBER>\s*|\\boxed\{)\s*(-?\d*\.?\d+)\s*(?:</NUMBER>|\})")


def _post_chem_exam(outputs, rows, refs):
    """The judge's last ``<NUMBER>x</NUMBER>`` / ``\\boxed{x}`` is the row's score; ``final_score`` their mean ×100."""
    scores = []
    for o in outputs:
        found = _CHEM_NUMBER.findall(o or "")
        scores.append(float(found[-1]) if found else 0.0)
    final = round(100 * sum(scores) / len(scores), 2) if scores else 0.0
    return {"final_score": final}, [str(s) for s in scores], "1.0"


LOADERS = {
    "ChemExamDataset": chem_exam,
}

JUDGE_POSTPROCESSORS = {"chem_exam_score_llmjudge_postprocess": (_post_chem_exam, frozenset())}
