"""Video-MME (video questions, AISBench): its loader."""
from __future__ import annotations

import os

from promptweave.data.loaders.base import LoadContext, Splits, rows
from promptweave.prompt.multimodal import build_content

_VIDEOMME_FRAMES = ("\nThese are the frames of a video. "
                    "Select the best answer to the following multiple-choice question based on the video. "
                    "Respond with only the letter (A, B, C, or D) of the correct option.\n")


def videomme(ctx: LoadContext, path: str, video_path: str) -> Splits:
    """Video-MME Parquet rows: the video ``<video_path>/<videoID>.mp4`` (absolute, from the working directory as
    the reference makes it), the frames instruction, then ``Question: <question + options>\\nAnswer: ``;
    ``answer`` holds the letter with duration, domain, sub_category and task_type."""
    from promptweave.data.sources import read_parquet

    if not isinstance(video_path, str) or not video_path:
        raise ctx.fail("video_path must name the folder of .mp4 files", where="video_path", value=video_path)
    f = ctx.find(path)
    split = read_parquet(f)
    items = []
    for loc, r in zip(split.where, split.rows):
        for key in ("videoID", "question", "options", "answer"):
            if key not in r:
                raise ctx.fail(f"record has no {key!r} field", file=f, where=loc, value=sorted(r)[:12])
        url = os.path.abspath(os.path.join(video_path, str(r["videoID"]) + ".mp4"))
        question = str(r["question"]) + "\n" + "\n".join(str(o) for o in (r["options"] or []))
        prompt = f"Question: {question}\nAnswer: "
        content = build_content([("video", url), ("text", _VIDEOMME_FRAMES), ("text", prompt)])
        answer = {k: r.get(k) for k in ("duration", "domain", "sub_category", "task_type", "answer")}
        items.append((loc, {"content": content, "answer": answer}))
    return rows(items, f)


LOADERS = {
    "VideoMMEDataset": videomme,
}
