"""VocalSound (audio classification, AISBench): its loader."""
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


LOADERS = {
    "VocalSoundDataset": vocalsound,
}
