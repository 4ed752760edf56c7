"""AISBench's VocalSound (a folder of .wav files) and Video-MME (Parquet + video folder) loaders."""
from __future__ import annotations

import base64
import os

import pytest

from promptweave.data.loaders.base import LoadContext
from promptweave.errors import LoaderError
from promptweave.prompt.multimodal import split_content
from promptweave.suites.videomme import videomme
from promptweave.suites.vocalsound import vocalsound


def _wav() -> bytes:  # a real, silent 8 kHz mono WAV header with 4 samples
    import struct

    data = b"\x00\x00" * 4
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000,
            16000, 2, 16) + b"data" + struct.pack("<I", len(data)) + data)


def test_vocalsound_label_from_the_file_name_and_both_audio_forms(tmp_path):
    d = tmp_path / "vocalsound"
    d.mkdir()
    for name in ("f1_laughter.wav", "m2_cough.wav"):
        (d / name).write_bytes(_wav())
    (d / "notes.txt").write_text("ignored")
    ctx = LoadContext(loader="VocalSoundDataset", base_dir=tmp_path)
    got = vocalsound(ctx, str(d), "audio_path")
    assert sorted(r["answer"] for r in got.rows) == ["cough", "laughter"]
    row = next(r for r in got.rows if r["answer"] == "cough")
    segs = split_content(row["content"])
    assert [(s.modality, s.payload) for s in segs][0] == ("audio", str(d / "m2_cough.wav"))
    assert segs[1].payload.startswith("In this audio, what kind of sound can you hear? A: Laughter")
    b64 = vocalsound(ctx, str(d), "audio_base64").rows[0]
    assert base64.b64decode(b64["audio_url"]) == _wav()
    with pytest.raises(LoaderError, match="audio_type"):
        vocalsound(ctx, str(d), "wav")


def test_videomme_video_then_instruction_then_question(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "videomme" / "test.parquet"
    f.parent.mkdir()
    pq.write_table(pa.table({"videoID": ["abc"], "question": ["What happens?"],
                             "options": [["A. run", "B. jump"]], "answer": ["B"], "duration": ["short"],
                             "domain": ["Sports"], "sub_category": ["x"], "task_type": ["Action"]}), f)
    row = videomme(LoadContext(loader="VideoMMEDataset", base_dir=tmp_path), str(f), "video").rows[0]
    segs = split_content(row["content"])
    assert [s.modality for s in segs] == ["video", "text", "text"]
    assert segs[0].payload == os.path.join(str(tmp_path), "video", "abc.mp4")
    assert segs[1].payload.startswith("\nThese are the frames of a video. Select the best answer")
    assert segs[2].payload == "Question: What happens?\nA. run\nB. jump\nAnswer: "
    assert row["answer"] == {"duration": "short", "domain": "Sports", "sub_category": "x", "task_type": "Action",
                             "answer": "B"}
