"""SuperGPQA: its judge-output postprocessor (accuracy overall and per discipline, field and subfield)."""
from __future__ import annotations

from promptweave.evaluate.judge import grade_letter


def _post_supergpqa(outputs, rows, refs):
    """Accuracy overall and per discipline / field / subfield (``SuperGPQA-<d>[-<f>[-<s>]]``), two decimals."""
    grades = [grade_letter(o) for o in outputs]
    stats: dict[str, list[int]] = {}
    for g, row in zip(grades, list(rows) + [{}] * (len(grades) - len(rows))):
        d, f, sub = (str(row.get(k, "unknown")) for k in ("discipline", "field", "subfield"))
        for key in (f"SuperGPQA-{d}", f"SuperGPQA-{d}-{f}", f"SuperGPQA-{d}-{f}-{sub}"):
            hit = stats.setdefault(key, [0, 0])
            hit[0] += g == "A"
            hit[1] += 1
    right = grades.count("A")
    metrics: dict[str, float] = {"accuracy": round(right / len(grades) * 100, 2) if grades else 0.0,
                                 "total_correct": float(right), "total_count": float(len(grades))}
    for key, (c, t) in stats.items():
        metrics[key] = round(c / t * 100, 2)
    return metrics, grades, "A"


JUDGE_POSTPROCESSORS = {"supergpqa_llmjudge_postprocess": (_post_supergpqa, frozenset())}
