"""AISBench's audio and video sets whose rows name media files: VocalSound (a folder of ``.wav`` files, the label
in each name) and Video-MME (a Parquet of questions, videos in a folder by ``videoID``)."""
from __future__ import annotations

import base64
import os
from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, rows
from promptweave.data.sources import check_regular
from promptweave.prompt.multimodal import build_content

_VOCALSOUND_QUESTION = ("In this audio, what kind of sound can you hear? "
                        "A: Laughter, B: Sigh, C: Cough, D: Throat clearing, E: Sneeze, F: Sniff, "
                        "Please select the one closest to the correct answer. ASSISTANT:")


def vocalsound(ctx: LoadContext, path: str, audio_type: str) -> Splits:
    """Every ``*.wav`` in the folder, in the folder's listing order (as the reference globs it): the audio (its
    path, or its base64 with ``audio_type='audio_base64'``) then the fixed question; ``answer`` is what follows
    the last ``_`` of the file's path without its extension (``00001_cough.wav`` -> ``cough``)."""
    if audio_type not in ("audio_path", "audio_base64"):
        raise ctx.fail("audio_type must be 'audio_path' or 'audio_base64'", where="audio_type", value=audio_type)
    folder = ctx.find(path, local_mode=True)
    if not folder.is_dir():
        raise ctx.fail("path must be a folder of .wav files", file=folder, where="path", value=path)
    items = []
    for f in Path(folder).glob("*.wav"):
        url = str(f) if audio_type == "audio_path" else base64.b64encode(check_regular(f).read_bytes()).decode("ascii")
        items.append((f.name, {"audio_url": url,
                               "content": build_content([("audio", url), ("text", _VOCALSOUND_QUESTION)]),
                               "answer": os.path.splitext(str(f))[0].split("_")[-1]}))
    if not items:
        raise ctx.fail(f"no .wav files in {folder}", file=folder, where="path", value=path)
    return rows(items, folder)


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
