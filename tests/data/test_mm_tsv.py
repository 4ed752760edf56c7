"""AISBench's TSV image sets (DocVQA / InfoVQA / MMStar) and RealWorldQA's Parquet shards: the content column as
the reference builds it, and the image files it names written beside the data."""
from __future__ import annotations

import base64
import json

import pytest

from promptweave.data.loaders.base import LoadContext
from promptweave.errors import DataError
from promptweave.prompt.multimodal import split_content
from promptweave.suites.docvqa import docvqa
from promptweave.suites.infovqa import infovqa
from promptweave.suites.mmstar import mmstar
from promptweave.suites.realworldqa import realworldqa
from tests.data.mm_files import png, png_b64, tsv

S, T, IMG = "<AIS_CONTENT_TAG>", "<AIS_TEXT_START>", "<AIS_IMAGE_START>"


def _ctx(name, tmp_path):
    return LoadContext(loader=name, base_dir=tmp_path)


def test_docvqa_shares_images_by_index_and_skips_rows_without_one(tmp_path):
    f = tmp_path / "DocVQA" / "DocVQA_VAL.tsv"
    red, blue = png(), png(rgb=(0, 0, 255))
    tsv(f, ["index", "image", "question", "answer"],
        [["7", png_b64(), "What is red?", "['box']"],
         ["8", "7", "Same page?", "['yes']"],          # a short cell names another row's image
         ["9", "", "No image", "['x']"],               # skipped, as the reference skips it
         ["10", base64.b64encode(blue).decode(), "Blue?", "['b']"]])
    got = docvqa(_ctx("DocVQADataset", tmp_path), str(f))
    root = tmp_path / "DocVQA" / "DocVQA_images"
    assert [r["answer"] for r in got.rows] == ["['box']", "['yes']", "['b']"]
    assert got.rows[0]["content"] == (f"{IMG}{root / '7.jpg'}{S}{T}What is red?\n"
                                      f"Answer the question using a single word or phrase.{S}")
    assert split_content(got.rows[1]["content"])[0].payload == str(root / "8.jpg")
    assert (root / "7.jpg").read_bytes() == red and (root / "8.jpg").read_bytes() == red
    assert (root / "10.jpg").read_bytes() == blue


def test_infovqa_image_lists_are_written_per_image(tmp_path):
    f = tmp_path / "InfoVQA_VAL.tsv"
    a, b = png_b64(), png_b64(rgb=(1, 2, 3))
    tsv(f, ["index", "image", "question", "answer"], [["3", repr([a, b]), "Two?", "2"]])
    row = infovqa(_ctx("InfoVQADataset", tmp_path), str(f)).rows[0]
    segs = split_content(row["content"])
    assert [s.modality for s in segs] == ["image", "image", "text"]
    assert [s.payload for s in segs[:2]] == [str(tmp_path / "InfoVQA_images" / n) for n in ("3_0.png", "3_1.png")]
    assert (tmp_path / "InfoVQA_images" / "3_1.png").read_bytes() == png(rgb=(1, 2, 3))


def test_mmstar_prompt_options_hint_and_answer_record(tmp_path):
    f = tmp_path / "mmstar" / "MMStar.tsv"
    tsv(f, ["index", "question", "answer", "category", "l2-category", "A", "B", "C", "D", "hint", "image"],
        [["0", "Which colour?", "B", "perception", "color", "green", "red", "NA", "", "look closely", png_b64()],
         ["1", "Count?", "A", "reasoning", "count", "1", "2", "3", "4", "nan", png_b64()]])
    got = mmstar(_ctx("MMStarDataset", tmp_path), str(f))
    first, second = got.rows
    img = tmp_path / "mmstar" / "MMStar_images" / "0.jpg"
    assert first["content"] == (f"{IMG}{img}{S}{T}Hint: look closely\nWhich colour?Options:\nA. green\nB. red\n"
                                f"Please select the correct answer from the options above. \n{S}")
    assert json.loads(first["answer"]["choices"]) == {"A": "green", "B": "red"}
    assert first["answer"]["answer"] == "B" and first["answer"]["category"] == "perception"
    assert first["answer"]["split"] is None
    assert split_content(second["content"])[1].payload.startswith("Count?Options:\nA. 1\n")


def test_a_bad_image_reference_names_the_line(tmp_path):
    f = tmp_path / "DocVQA_VAL.tsv"
    tsv(f, ["index", "image", "question", "answer"], [["1", "42", "q", "a"]])
    with pytest.raises(DataError, match="names no row's index") as exc:
        docvqa(_ctx("DocVQADataset", tmp_path), str(f))
    assert "line 2" in str(exc.value)


def test_realworldqa_reads_every_shard_text_first(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    d = tmp_path / "RealworldQA" / "data"
    d.mkdir(parents=True)
    img = png()
    shards = [[("How many cars?", "3", img)], [("Is it day?", "Yes", None), ("Sky colour?", "Blue", img)]]
    for n, shard in enumerate(shards):
        table = pa.table({"question": [q for q, _, _ in shard], "answer": [a for _, a, _ in shard],
                          "image": [None if b is None else {"bytes": b, "path": "x.webp"} for _, _, b in shard]})
        pq.write_table(table, d / f"test-0000{n}-of-00002.parquet")
    got = realworldqa(_ctx("RealworldQADataset", tmp_path), str(d / "test-00000-of-00002.parquet"))
    assert [r["answer"] for r in got.rows] == ["3", "Blue"]  # the row without image bytes is skipped
    segs = split_content(got.rows[1]["content"])
    assert [s.modality for s in segs] == ["text", "image"]
    assert "\n\nSky colour?\n\n" in segs[0].payload and segs[0].payload.startswith("Read the picture")
    assert segs[1].payload == str(d / "RealworldQA_images" / "image_2.webp")  # numbered across shards
    assert (d / "RealworldQA_images" / "image_2.webp").read_bytes() == img
    b64 = realworldqa(_ctx("RealworldQADataset", tmp_path), str(d / "test-00001-of-00002.parquet"), image_type="image_base64")
    assert split_content(b64.rows[0]["content"])[1].payload == base64.b64encode(img).decode()
