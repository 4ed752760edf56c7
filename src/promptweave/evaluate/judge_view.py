"""The LLM judge's prompt and verdict for rows of a finished run (``promptweave view --judge WORKDIR``)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptweave.errors import JudgeError, WorkdirFileError
from promptweave.safe_files import confined


def safe_name(name: str) -> str:  # the run's file naming (promptweave/filenames.py)
    from promptweave.filenames import file_name

    return file_name(name)


def judge_records(workdir: Path, model: str, dataset: str, indices: Sequence[int] | None) -> list[dict[str, Any]]:
    """``{"dataset", "model", "index", "prediction", "gold", "judge"}`` for the judged rows among ``indices``."""
    path = Path(workdir) / "predictions" / safe_name(model) / f"{safe_name(dataset)}.jsonl"
    if not path.is_file():
        raise JudgeError("no predictions for this dataset × model in the work dir", file=str(path),
                         expected="the -w folder of a finished `promptweave run`")
    try:  # inside the work dir only: a predictions file linked from elsewhere is not read
        path = confined(path, workdir)
    except WorkdirFileError as exc:
        raise JudgeError(f"predictions {exc.message}", file=str(path)) from None
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise JudgeError("malformed predictions line", file=f"{path}:{n}") from None
            if "judge" in row and (indices is None or row.get("index") in indices):
                out.append({"dataset": dataset, "model": model, "index": row.get("index"),
                            "prediction": row.get("prediction"), "gold": row.get("gold"), "judge": row["judge"]})
    return out


def show_judge(console: Any, rec: dict[str, Any]) -> None:
    from rich.rule import Rule

    j = rec["judge"]
    console.print(Rule(f"{rec['dataset']} · {rec['model']} · row {rec['index']} · judge {j.get('model', '')}"))
    prompt = j.get("prompt")
    if isinstance(prompt, list):
        for turn in prompt:
            if isinstance(turn, dict):
                role = turn.get("role", "")
                console.print(f"[{role}]", style="bold cyan", markup=False)
                console.print(str(turn.get("prompt", turn.get("content", ""))), markup=False)
    else:
        console.print(str(prompt), markup=False)
    console.print(f"verdict: {j.get('output')!r} -> grade {j.get('grade')}", style="bold", markup=False)
