"""Multiple-choice benchmarks: per-subject CSV folders (MMLU, CMMLU, C-Eval, GPQA) and JSONL question files
(ARC, RACE, CommonsenseQA, SIQA, HellaSwag, AGIEval, MathBench, MMLU-Pro)."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    csv_records,
    json_file,
    jsonl,
    need,
    rows,
)
from promptweave.data.loaders.hub import read_folder
from promptweave.data.sources import Split

ABCD = "ABCD"


def _fields(ctx: LoadContext, rec: list[str], n: int, file: Path, where: str) -> list[str]:
    if len(rec) != n:
        raise ctx.fail(f"expected {n} CSV fields per record", file=file, where=where, value=len(rec))
    return rec


def mmlu(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/{dev,test}/<name>_<split>.csv``, no header: question, A-D, answer letter."""
    return _mmlu_csv(ctx, ctx.find(path), name)


def _mmlu_csv(ctx: LoadContext, root: Path, name: str) -> Splits:
    splits = ("dev", "test")
    out = {}
    for split, f in zip(splits, ctx.members(root, *[f"{s}/{name}_{s}.csv" for s in splits])):
        out[split] = rows(((loc, dict(zip(("input", "A", "B", "C", "D", "target"), _fields(ctx, r, 6, f, loc))))
                           for loc, r in csv_records(f)), f)
    return out


def mmlu_arabic(ctx: LoadContext, path: str, name: str) -> Splits:
    """MMLU's layout found as a local path (``local_mode``)."""
    return _mmlu_csv(ctx, ctx.find(path, local_mode=True), name)


def chembench(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{dev,test}/<name>_benchmark.json``: lists of {question, A-D, answer} -> input, A-D, target."""
    root = ctx.find(path)
    out = {}
    for split in ("dev", "test"):
        f = ctx.member(root, split, f"{name}_benchmark.json")
        data = json_file(f)
        if not isinstance(data, list):
            raise ctx.fail("expected a JSON list of questions", file=f)
        items = []
        for i, item in enumerate(data):
            need(ctx, item, ("question", "A", "B", "C", "D", "answer"), file=f, where=f"[{i}]")
            items.append((f"[{i}]", {"input": item["question"], **{k: item[k] for k in ABCD},
                                     "target": item["answer"]}))
        out[split] = rows(items, f)
    return out


def earth_silver_mcq(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """The ``multiple_choice`` split of the Earth-Silver dataset (question, answer kept as they are)."""
    if prompt_mode != "zero-shot":
        raise ctx.fail("only prompt_mode='zero-shot' exists (the reference has no few-shot form either)",
                       where="prompt_mode", value=prompt_mode)
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "multiple_choice" not in got:
        raise ctx.fail("the dataset needs a 'multiple_choice' split", file=ctx.find(path))
    return got["multiple_choice"]


def cmmlu(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/{dev,test}/<name>.csv`` with a header: index, question, A-D, answer."""
    splits = ("dev", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}.csv" for s in splits])):
        recs = csv_records(f)[1:]
        out[split] = rows(((loc, dict(zip(("question", "A", "B", "C", "D", "answer"),
                                          _fields(ctx, r, 7, f, loc)[1:]))) for loc, r in recs), f)
    return out


def ceval(ctx: LoadContext, path: str, name: str, local_mode: bool = False) -> Splits:
    """``<path>/{dev,val,test}/<name>_<split>.csv`` with a header; ``explanation``/``answer`` default to ''."""
    splits = ("dev", "val", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}_{s}.csv" for s in splits], local_mode=local_mode)):
        recs = csv_records(f)
        header = recs[0][1] if recs else []
        items = []
        for loc, r in recs[1:]:
            item = dict(zip(header, r))
            item.setdefault("explanation", "")
            item.setdefault("answer", "")
            items.append((loc, item))
        out[split] = rows(items, f)
    return out


def gpqa(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/<name>`` (the GPQA CSV): the correct answer (column 8) is rotated through A-D, one pattern per
    question in turn, exactly as the reference places it."""
    f = ctx.member(ctx.find(path, local_mode=True), name)
    patterns = ("ABCD", "BCDA", "CDAB", "DABC")
    items, count = [], 0
    for loc, r in csv_records(f):
        if len(r) < 12:
            raise ctx.fail("a GPQA record needs at least 12 fields", file=f, where=loc, value=len(r))
        if r[7] == "Question":
            continue
        count += 1
        options = r[8:12]
        order = patterns[count % 4]
        line: dict[str, Any] = {"question": r[7]}
        for i in range(4):
            line[ABCD[i]] = options[ord(order[i]) - ord("A")]
        for i in range(4):
            if line[ABCD[i]] == options[0]:
                line["answer"] = ABCD[i]
                break
        items.append((loc, line))
    return rows(items, f)


def arc(ctx: LoadContext, path: str, name: str | None = None) -> Splits:
    """OpenCompass: one JSONL file (``name`` unused). AISBench: a folder of ``<name>-Dev.jsonl`` and
    ``<name>-Test.jsonl`` (splits Dev / Test). Questions without exactly 4 choices are dropped; the answer key
    becomes a letter A-D."""
    found = ctx.find(path)
    if found.is_dir():
        if not name:
            raise ctx.fail("ARCDataset over a folder needs name (e.g. 'ARC-c')", where="name")
        splits = ("Dev", "Test")
        return {split: _arc_file(ctx, f)
                for split, f in zip(splits, ctx.members(found, *[f"{name}-{s}.jsonl" for s in splits]))}
    return _arc_file(ctx, found)


def _arc_file(ctx: LoadContext, f: Path) -> Split:
    items = []
    for loc, item in jsonl(f, errors="ignore"):
        need(ctx, item, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, item["question"], ("stem", "choices"), file=f, where=loc + ".question")
        choices = q["choices"]
        if len(choices) != 4:
            continue
        labels = [c["label"] for c in choices]
        if item["answerKey"] not in labels:
            raise ctx.fail("answerKey is not one of the choice labels", file=f, where=loc, value=item["answerKey"])
        items.append((loc, {"question": q["stem"], "answerKey": ABCD[labels.index(item["answerKey"])],
                            **{f"text{ABCD[i]}": choices[i]["text"] for i in range(4)}}))
    return rows(items, f)


def race(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{validation,test}/<name>.jsonl`` (name: ``high`` / ``middle``)."""
    splits = ("validation", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}.jsonl" for s in splits])):
        items = []
        for loc, line in jsonl(f):
            need(ctx, line, ("article", "question", "options", "answer"), file=f, where=loc)
            opts = line["options"]
            items.append((loc, {"article": line["article"], "question": line["question"],
                                **{ABCD[i]: opts[i] for i in range(4)}, "answer": line["answer"]}))
        out[split] = rows(items, f)
    return out


def commonsenseqa(ctx: LoadContext, path: str) -> Splits:
    """``train_rand_split.jsonl`` -> train, ``dev_rand_split.jsonl`` -> validation; five choices A-E."""
    out = {}
    for split, f in zip(("train", "validation"), ctx.files(path, ["train_rand_split.jsonl", "dev_rand_split.jsonl"])):
        items = []
        for loc, line in jsonl(f):
            need(ctx, line, ("question", "answerKey"), file=f, where=loc)
            q = need(ctx, line["question"], ("stem", "choices"), file=f, where=loc + ".question")
            items.append((loc, {"question": q["stem"], **{"ABCDE"[i]: q["choices"][i]["text"] for i in range(5)},
                                "answerKey": line["answerKey"]}))
        out[split] = rows(items, f)
    return out


def _labelled(ctx: LoadContext, root: Path, stem: str) -> tuple[Path, list[tuple[str, dict[str, Any], int]]]:
    """``<stem>.jsonl`` beside ``<stem>-labels.lst`` (one integer label per line), zipped."""
    data_f, label_f = ctx.members(root, f"{stem}.jsonl", f"{stem}-labels.lst")
    data = jsonl(data_f)
    labels = [ln for ln in _lines(label_f) if ln.strip()]
    if len(data) != len(labels):
        raise ctx.fail(f"{len(data)} questions but {len(labels)} labels", file=label_f)
    out = []
    for (loc, item), label in zip(data, labels):
        try:
            value = int(label.strip())
        except ValueError:
            raise ctx.fail("a label must be an integer", file=label_f, value=label) from None
        out.append((loc, dict(need(ctx, item, (), file=data_f, where=loc)), value))
    return data_f, out



def _labelled_splits(ctx: LoadContext, path: str, convert) -> Splits:
    """train/dev ``.jsonl`` + ``-labels.lst`` pairs (dev -> validation), each row made by ``convert(f, loc, row, label)``."""
    names = [f"{stem}{end}" for stem in ("train", "dev") for end in (".jsonl", "-labels.lst")]
    root = ctx.files(path, names)[0].parent  # all four named at once when some are missing
    out = {}
    for split, stem in (("train", "train"), ("validation", "dev")):
        f, items = _labelled(ctx, root, stem)
        out[split] = rows([(loc, convert(f, loc, row, label)) for loc, row, label in items], f)
    return out


def siqa(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` with labels one per line in ``{train,dev}-labels.lst`` (dev -> validation)."""
    return _labelled_splits(ctx, path, lambda f, loc, row, label: {**row, "label": label})


def siqa_v2(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, the label as a letter (1-3 -> A-C) and ``all_labels`` listing the lettered candidates."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not 1 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        row["all_labels"] = {"candidates": [[f"{k}. {row['answer' + k]}", k, row["answer" + k]] for k in "ABC"],
                             "label": label - 1}
        row["label"] = " ABC"[label]
        return row

    return _labelled_splits(ctx, path, convert)


def siqa_v3(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, ``answerA/B/C`` renamed ``A/B/C`` (moved after the other fields, as the reference pops and
    re-adds them) and ``answer`` the label as a letter (``'ABC'[label - 1]``, the reference's indexing)."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not -2 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        for k in "ABC":
            row[k] = row.pop("answer" + k)
        row["answer"] = "ABC"[label - 1]
        return row

    return _labelled_splits(ctx, path, convert)


def piqa(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` + labels: ``label`` the integer as written, ``id`` dropped."""

    def convert(f, loc, row, label):
        row["label"] = label
        row.pop("id", None)
        return row

    return _labelled_splits(ctx, path, convert)


def _first(text: str, upper: bool) -> str:
    return (text[:1].upper() if upper else text[:1].lower()) + text[1:]


def piqa_v3(ctx: LoadContext, path: str) -> Splits:
    """As PIQADataset, with the reference's casing: ``goal`` capitalised; both solutions capitalised when the goal
    ends in ``?`` or ``.``, else lower-cased at their first letter."""

    def convert(f, loc, row, label):
        need(ctx, row, ("goal", "sol1", "sol2"), file=f, where=loc)
        if not all(isinstance(row[k], str) and row[k] for k in ("goal", "sol1", "sol2")):
            raise ctx.fail("goal, sol1 and sol2 must be non-empty strings", file=f, where=loc)
        row["label"] = label
        row["goal"] = _first(row["goal"], True)
        upper = row["goal"].endswith(("?", "."))
        row["sol1"], row["sol2"] = _first(row["sol1"], upper), _first(row["sol2"], upper)
        row.pop("id", None)
        return row

    return _labelled_splits(ctx, path, convert)


def piqa_v2(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` + labels: ``answer`` A/B (NULL for a negative label), ``id`` dropped."""

    def convert(f, loc, row, label):
        row["answer"] = "NULL" if label < 0 else "AB"[label]
        row.pop("id", None)
        return row

    return _labelled_splits(ctx, path, convert)


def _lines(f: Path) -> list[str]:
    from promptweave.data.sources import text_lines

    return text_lines(f)


def _hellaswag(ctx: LoadContext, path: str, *, splits: int, letter: bool) -> Splits:
    return _hellaswag_rows(ctx, ctx.find(path), splits=splits, letter=letter)


def _hellaswag_rows(ctx: LoadContext, f: Path, *, splits: int, letter: bool) -> Split:
    items = []
    for loc, data in jsonl(f):
        need(ctx, data, ("query", "choices", "gold"), file=f, where=loc)
        gold = data["gold"]
        items.append((loc, {"ctx": data["query"].split(": ", splits)[-1],
                            **{ABCD[i]: data["choices"][i] for i in range(4)},
                            "label": ABCD[gold] if letter else gold}))
    return rows(items, f)


def hellaswag(ctx: LoadContext, path: str) -> Splits:
    """JSONL of ``query`` / ``choices`` / ``gold`` (the query's first two ``": "``-separated prefixes dropped)."""
    return _hellaswag(ctx, path, splits=2, letter=False)


def hellaswag_v2(ctx: LoadContext, path: str) -> Splits:
    """As HellaswagDataset, one prefix dropped and the gold index as a letter."""
    return _hellaswag(ctx, path, splits=1, letter=True)


def obqa(ctx: LoadContext, path: str, name: str = "main") -> Splits:
    """OpenBookQA JSONL: A-D choice texts, ``question_stem``, ``answerKey``, and ``fact1`` when present."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, line["question"], ("stem", "choices"), file=f, where=loc + ".question")
        item = {**{ABCD[i]: q["choices"][i]["text"] for i in range(4)}, "question_stem": q["stem"],
                "answerKey": line["answerKey"]}
        if "fact1" in line:
            item["fact1"] = line["fact1"]
        items.append((loc, item))
    return rows(items, f)


def wsc_v2(ctx: LoadContext, path: str) -> Splits:
    """WSC JSONL (a local path): span1 / span2 from ``target``, text, label true/false -> A/B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("target", "text", "label"), file=f, where=loc)
        t = need(ctx, line["target"], ("span1_text", "span2_text"), file=f, where=loc + ".target")
        if line["label"] not in ("true", "false"):
            raise ctx.fail("label must be 'true' or 'false'", file=f, where=loc, value=line["label"])
        items.append((loc, {"span1": t["span1_text"], "span2": t["span2_text"], "text": line["text"],
                            "label": {"true": "A", "false": "B"}[line["label"]]}))
    return rows(items, f)


def hellaswag_with_ice(ctx: LoadContext, path: str) -> Splits:
    """``hellaswag_train_sampled25.jsonl`` (train, for in-context examples) and ``hellaswag.jsonl`` (val), each
    read as HellaswagDataset_V2 reads its file."""
    root = ctx.find(path)
    out = {}
    for split, name in (("train", "hellaswag_train_sampled25.jsonl"), ("val", "hellaswag.jsonl")):
        f = ctx.member(root, name)
        out[split] = _hellaswag_rows(ctx, f, splits=1, letter=True)
    return out


def _winogrande(ctx: LoadContext, path: str, *, letter: bool) -> Splits:
    return _winogrande_file(ctx, ctx.member(ctx.find(path), "dev.jsonl"), letter=letter)


def _winogrande_file(ctx: LoadContext, f: Path, *, letter: bool) -> Split:
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("sentence", "option1", "option2", "answer"), file=f, where=loc)
        prompt = line["sentence"]
        answer = line["answer"]
        if letter:
            answer = " AB"[int(answer)] if answer != "" else "NULL"
        items.append((loc, {"prompt": prompt, "only_option1": line["option1"], "only_option2": line["option2"],
                            "opt1": prompt.replace("_", line["option1"]), "opt2": prompt.replace("_", line["option2"]),
                            "answer": answer, "cont": prompt.split("_")[1]}))
    return rows(items, f)


def winogrande(ctx: LoadContext, path: str) -> Splits:
    """``<path>/dev.jsonl``: the sentence with its blank filled by each option (opt1 / opt2), the text after the
    blank (cont), the answer as stored."""
    return _winogrande(ctx, path, letter=False)


def winogrande_v2(ctx: LoadContext, path: str) -> Splits:
    """As WinograndeDataset, the answer 1 / 2 as A / B ('' -> NULL)."""
    return _winogrande(ctx, path, letter=True)


def winogrande_v3(ctx: LoadContext, path: str) -> Splits:
    """As WinograndeDatasetV2 over two splits: ``train_xs.jsonl`` (in-context examples) and ``dev.jsonl``."""
    splits = ("train_xs", "dev")
    return {split: _winogrande_file(ctx, f, letter=True)
            for split, f in zip(splits, ctx.files(path, [f"{s}.jsonl" for s in splits]))}


def c3(ctx: LoadContext, path: str) -> Splits:
    """C3 JSON: one row per question with its passage, the choices padded to four with the first, and the
    answer's index as label. (The reference opens ``path`` as written; the usual search finds it there too.)"""
    f = ctx.find(path, local_mode=True)
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list of [paragraphs, questions] pairs", file=f)
    items = []
    for i, doc in enumerate(data):
        content = " ".join("".join(p) for p in doc[0])
        for j, q in enumerate(doc[1]):
            where = f"[{i}][1][{j}]"
            need(ctx, q, ("question", "choice", "answer"), file=f, where=where)
            choices = list(q["choice"])
            if q["answer"] not in choices:
                raise ctx.fail("the answer is not one of the choices", file=f, where=where, value=q["answer"])
            label = choices.index(q["answer"])
            choices += [choices[0]] * max(0, 4 - len(choices))
            items.append((where, {"content": content, "question": q["question"],
                                  **{f"choice{k}": choices[k] for k in range(4)}, "choices": choices,
                                  "label": label}))
    return rows(items, f)


def _agieval_label(label: Any) -> Any:
    if isinstance(label, list):
        return "".join(map(str, label))
    return label if label is None else str(label)


def agieval_v2(ctx: LoadContext, path: str, name: str, setting_name: str) -> Splits:
    """``<path>/<name>.jsonl``: passage + question, options joined by newlines, label (or answer)."""
    if setting_name not in "zero-shot":
        raise ctx.fail("only the zero-shot setting exists", where="setting_name", value=setting_name)
    f = ctx.member(ctx.find(path), f"{name}.jsonl")
    items = []
    for loc, item in jsonl(f):
        need(ctx, item, ("passage", "question", "options", "label"), file=f, where=loc)
        label = item["label"] if item["label"] else item.get("answer")
        items.append((loc, {"question": (item["passage"] or "") + item["question"],
                            "options": "\n".join(item["options"]) if item["options"] else "",
                            "label": _agieval_label(label)}))
    return rows(items, f)


def wikibench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (joined by plain concatenation, as the reference does): cloze rows keep
    question/answer, ``circular`` ones become four rotated copies, others get numbered options appended."""
    f = ctx.concat(path, filename)
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif "circular" in name:
            items.extend(_circular(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            row = dict(entry)
            row["question"] = entry["question"].strip() + "\n" + _numbered(entry["options"])
            items.append((loc, row))
    return rows(items, f)


def _circular(ctx: LoadContext, entry: Any, n: int, f: Path, loc: str) -> list[tuple[str, dict[str, Any]]]:
    need(ctx, entry, ("options",), file=f, where=loc)
    out = []
    for pattern in ("ABCD", "BCDA", "CDAB", "DABC"):
        line = copy.deepcopy(entry)
        line["options"] = [entry["options"][ord(pattern[i]) - ord("A")] for i in range(4)]
        letter = {pattern[i]: ABCD[i] for i in range(4)}.get(entry["answer"])
        if letter is None:
            raise ctx.fail("a circular single-choice answer must be one of A-D", file=f, where=loc,
                           value=entry["answer"])
        line["answer"] = f"{n}--{letter}--{pattern}"
        line["question"] = entry["question"].strip() + "\n" + _numbered(line["options"])
        out.append((f"{loc} ({pattern})", line))
    return out


def _numbered(options: list[Any]) -> str:
    return "".join(f"{chr(ord('A') + i)}. {opt}\n" for i, opt in enumerate(options))


def mathbench(ctx: LoadContext, path: str, name: str, with_circular: bool = True) -> Splits:
    """``<path>/<name>.jsonl``. Cloze subsets keep question/answer; single-choice ones become four rotated
    copies (answer ``<id>--<letter>--<pattern>``) with ``with_circular``, else one row with numbered options."""
    f = ctx.member(ctx.find(path, local_mode=True), f"{name}.jsonl")
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif with_circular:
            items.extend(_circular(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            items.append((loc, {"question": entry["question"].strip() + "\n" + _numbered(entry["options"]),
                                "answer": entry["answer"].strip()}))
    return rows(items, f)


_CHOICES = "ABCDEFGHIJKLMNOP"


def mmlu_pro(ctx: LoadContext, path: str, category: str) -> Splits:
    """The MMLU-Pro dataset folder (a ``datasets`` layout), rows of one ``category``, with ``options_str``
    (lettered options, ``N/A`` skipped) and ``answer_string`` (the answer's lettered line) added."""
    got = read_folder(ctx, ctx.find(path))
    parts = got if isinstance(got, dict) else {"train": got}
    out = {}
    for split, part in parts.items():
        items = []
        for i, item in enumerate(part.rows):
            if item.get("category") != category:
                continue
            row = dict(item)
            text, row["answer_string"] = "", ""
            for k, opt in enumerate(row.get("options") or []):
                if opt == "N/A":
                    continue
                option = f"{_CHOICES[k]}. {opt}\n"
                text += option
                if row.get("answer") == _CHOICES[k]:
                    row["answer_string"] = option
            row["options_str"] = text.strip()
            items.append((part.locate(i), row))
        out[split] = rows(items, part.file)
    return out if isinstance(got, dict) else out["train"]


__all__ = [
    "Split",
    "agieval_v2",
    "arc",
    "ceval",
    "cmmlu",
    "commonsenseqa",
    "gpqa",
    "hellaswag",
    "hellaswag_v2",
    "mathbench",
    "mmlu",
    "mmlu_pro",
    "race",
    "siqa",
    "wikibench",
]
