"""Data stays home in safe mode: a config reads data only under the data roots (its folder, ``./data``, the
OpenCompass / AISBench / Hugging Face caches) or under a path the user names with ``--allow-data``.

Each attack is a config that names a file outside the roots (an absolute path, ``~/.dotfolder``, a link in the
config's folder, ``data_files``, a loader class's path argument): refused with ``[PW260]`` naming the config, the
field and the value, with nothing sent to the model server; the same config runs with ``--allow-data`` naming it.
"""
from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.data import load_dataset
from promptweave.data.roots import check_read, data_policy, data_roots, data_scope, root_for
from promptweave.errors import DataOutsideRootsError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from header_recorder import HeaderRecorder  # noqa: E402

SECRET_ROW = {"q": "the private text 5c1d", "a": "x"}
READER = {"input_columns": ["q"], "output_column": "a"}


@pytest.fixture
def recorder():
    with HeaderRecorder() as server:
        yield server


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """A home with a config folder, a folder outside every root, and a dot-folder; run from an empty folder."""
    home = tmp_path / "home"
    (home / "cfg").mkdir(parents=True)
    (home / "elsewhere").mkdir()
    (home / ".dotfolder").mkdir()
    for p in (home / "elsewhere" / "x.jsonl", home / ".dotfolder" / "x.jsonl", home / "cfg" / "own.jsonl"):
        p.write_text(json.dumps(SECRET_ROW) + "\n", encoding="utf-8")
    run_dir = tmp_path / "cwd"
    run_dir.mkdir()
    for var in ("COMPASS_DATA_CACHE", "AIS_BENCH_DATASETS_CACHE", "HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE",
                "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(run_dir)
    return home


def _config(folder: Path, url: str, dataset: str) -> Path:
    cfg = folder / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', {dataset},
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{url}', key='EMPTY')]
    """), encoding="utf-8")
    return cfg


def _attacks(home: Path) -> dict[str, tuple[str, str, Path]]:
    """name -> (dataset fields, the field the refusal names, the path --allow-data must name)."""
    elsewhere = home / "elsewhere" / "x.jsonl"
    (home / "cfg" / "link.jsonl").symlink_to(elsewhere)
    return {
        "absolute path": (f"path={str(elsewhere)!r}", "path", elsewhere),
        "~/.dotfolder": ("path='~/.dotfolder/x.jsonl'", "path", home / ".dotfolder"),
        "link out of the config folder": ("path='link.jsonl'", "path", elsewhere),
        "data_files": (f"data_files=[{str(elsewhere)!r}]", "data_files", home / "elsewhere"),
        "loader path argument": (f"type='JsonlDataset', path={str(elsewhere)!r}", "path", elsewhere),
        "HFDataset data_files": (f"type='HFDataset', path='json', split='train', data_files={str(elsewhere)!r}", "data_files",
                                 elsewhere),
    }


@pytest.mark.parametrize("attack", ["absolute path", "~/.dotfolder", "link out of the config folder", "data_files",
                                    "loader path argument", "HFDataset data_files"])
def test_each_attack_is_refused_and_allowed_by_name(layout, recorder, attack):
    fields, field, allow = _attacks(layout)[attack]
    cfg = _config(layout / "cfg", recorder.url, fields)
    work = layout.parent / "w"
    for argv in (["run", str(cfg), "-w", str(work), "--no-progress"],
                 ["run", str(cfg), "-w", str(work), "--dry-run"],
                 ["lint", str(cfg)], ["lint", str(cfg), "--no-data"]):
        res = CliRunner().invoke(app, argv)
        out = " ".join(res.output.split())
        assert res.exit_code == 2, (argv, res.output)
        assert "[PW260]" in out and f"{cfg}" in out and f"datasets[0].{field}" in out, out
        assert "--allow-data" in out and "Traceback" not in out, out
    assert recorder.seen == []  # nothing was sent
    assert not (work / "predictions").exists()
    allowed = ["--allow-data", str(allow)]
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--dry-run", *allowed])
    assert dry.exit_code == 0, dry.output
    assert "(present)" in dry.output and "data: d:" in dry.output
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress", *allowed])
    assert res.exit_code == 0, res.output
    assert len(recorder.seen) == 1


def test_data_under_the_roots_runs_without_a_flag(layout, recorder, monkeypatch):
    cache = layout.parent / "cache"
    (cache / "sets").mkdir(parents=True)
    (cache / "sets" / "c.jsonl").write_text(json.dumps(SECRET_ROW) + "\n", encoding="utf-8")
    (Path.cwd() / "data").mkdir()
    (Path.cwd() / "data" / "w.jsonl").write_text(json.dumps(SECRET_ROW) + "\n", encoding="utf-8")
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    for fields in ("path='own.jsonl'", "type='JsonlDataset', path='sets/c.jsonl'"):
        cfg = _config(layout / "cfg", recorder.url, fields)
        dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(layout.parent / "w"), "--dry-run"])
        assert dry.exit_code == 0, (fields, dry.output)
        assert "(present)" in dry.output
    monkeypatch.delenv("COMPASS_DATA_CACHE")  # OpenCompass's ./data/<name> under the working directory
    with data_policy():
        assert data_roots(layout / "cfg")[1].what == "./data"
        got = load_dataset({"type": "JsonlDataset", "path": "data/w.jsonl", "reader_cfg": READER},
                           base_dir=layout / "cfg")
    assert got.test[0]["q"] == SECRET_ROW["q"]


def test_lint_and_dry_run_list_every_source_with_presence(layout, recorder):
    cfg = _config(layout / "cfg", recorder.url, "data_files=['own.jsonl', 'gone.jsonl']")
    res = CliRunner().invoke(app, ["lint", str(cfg), "--no-data"])
    assert f"data: d: data_files[0]='own.jsonl' -> {layout / 'cfg' / 'own.jsonl'} (present)" in res.output
    assert f"data: d: data_files[1]='gone.jsonl' -> {layout / 'cfg' / 'gone.jsonl'} (missing)" in res.output
    cfg = _config(layout / "cfg", recorder.url, "path='own.jsonl'")
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(layout.parent / "w"), "--dry-run"])
    assert f"data: d: path='own.jsonl' -> {layout / 'cfg' / 'own.jsonl'} (present)" in dry.output, dry.output


def test_trust_config_lifts_the_rule(layout):
    outside = layout / "elsewhere" / "x.jsonl"
    with data_policy(), pytest.raises(DataOutsideRootsError):
        load_dataset({"path": str(outside), "reader_cfg": READER}, base_dir=layout / "cfg")
    with data_policy(trusted=True):
        assert load_dataset({"path": str(outside), "reader_cfg": READER}, base_dir=layout / "cfg").test


def test_a_data_row_naming_an_image_outside_is_refused(layout):
    """A multimodal row's own file path is read (base64) only under the roots too."""
    img = layout / "elsewhere" / "i.png"
    img.write_bytes(b"\x89PNG not really")
    rows = layout / "cfg" / "mm.jsonl"
    rows.write_text(json.dumps({"question_id": 1, "question": "?", "image": str(img)}) + "\n", encoding="utf-8")
    (layout / "cfg" / "mm_annotations.json").write_text(
        json.dumps({"annotations": [{"question_id": 1, "answers": ["a"]}]}), encoding="utf-8")
    cfg = {"type": "TEXTVQADataset", "path": str(rows), "image_type": "image_base64",
           "reader_cfg": {"input_columns": ["question"], "output_column": "answer"}}
    with data_policy(), pytest.raises(DataOutsideRootsError) as err:
        load_dataset(cfg, base_dir=layout / "cfg")
    assert str(img) in str(err.value)


# -- the root check over path spellings ------------------------------------------------------------------------

_PARTS = ["sub", "..", ".", "", "link_out", "link_in", "link_up", "cfg", "elsewhere", ".hidden", "link_hidden"]
_NAMES = ["in.jsonl", "x.jsonl", "h.jsonl"]


def _tree(home: Path) -> Path:
    cfg = home / "cfg"
    (cfg / "sub").mkdir(parents=True, exist_ok=True)
    (cfg / ".hidden").mkdir(exist_ok=True)
    for p in (cfg / "in.jsonl", cfg / "sub" / "in.jsonl", cfg / ".hidden" / "h.jsonl", home / "elsewhere" / "in.jsonl"):
        p.write_text("{}\n", encoding="utf-8")
    for link, target in (("link_out", "../elsewhere"), ("link_in", "sub"), ("sub/link_up", ".."),
                         ("link_hidden", ".hidden")):
        if not (cfg / link).is_symlink():
            (cfg / link).symlink_to(target)
    return cfg


def _inside_by_identity(target: str, cfg: Path) -> bool:
    """The oracle: the file is one of the non-hidden files of the config folder, found without following links
    (compared by device and inode, never by spelling)."""
    want = os.stat(target)
    for folder, dirs, files in os.walk(cfg, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            p = os.path.join(folder, f)
            if not f.startswith(".") and not os.path.islink(p):
                st_ = os.stat(p)
                if (st_.st_dev, st_.st_ino) == (want.st_dev, want.st_ino):
                    return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(["", "./", "~/cfg/", "~/", "ABS_CFG/", "ABS_CFG//", "ABS_HOME/", "../cfg/", "/..ABS_CFG/"]),
       parts=st.lists(st.sampled_from(_PARTS), max_size=4), sep=st.sampled_from(["/", "//", "/./"]),
       name=st.sampled_from(_NAMES))
def test_root_check_agrees_with_file_identity_over_spellings(layout, prefix, parts, sep, name):
    cfg = _tree(layout)
    os.chdir(cfg)
    spelling = (prefix.replace("ABS_CFG", str(cfg)).replace("ABS_HOME", str(layout))
                + sep.join([*parts, name]))
    target = os.path.expanduser(spelling)
    if not os.path.isfile(target):
        return  # a spelling that names no file: nothing to compare
    with data_policy():
        roots = [r for r in data_roots(cfg) if r.what == "the config's folder"]
        inside = root_for(spelling, roots) is not None
    assert inside == _inside_by_identity(target, cfg), spelling
    with data_policy(), data_scope(cfg):
        if inside:
            check_read(spelling)
        elif not any(root_for(spelling, [r]) for r in data_roots(cfg)):
            with pytest.raises(DataOutsideRootsError):
                check_read(spelling)


@pytest.mark.parametrize("command", [["view"], ["spread", "--dry-run", "-n", "2", "-w", "SPREAD"]])
def test_view_and_spread_take_the_same_rule_and_flag(layout, recorder, command):
    elsewhere = layout / "elsewhere"
    cfg = _config(layout / "cfg", recorder.url, f"path={str(elsewhere / 'x.jsonl')!r}")
    argv = [c.replace("SPREAD", str(layout.parent / "s")) for c in command] + [str(cfg)]
    res = CliRunner().invoke(app, argv)
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "[PW260]" in out and "datasets[0].path" in out, out
    res = CliRunner().invoke(app, [*argv, "--allow-data", str(elsewhere)])
    assert res.exit_code == 0, res.output
    assert "[PW260]" not in res.output
    assert recorder.seen == []


def test_the_library_call_takes_allow_data_as_an_option(layout, recorder):
    from promptweave.run.options import RunOptions
    from promptweave.run.pipeline import evaluate_config

    elsewhere = layout / "elsewhere"
    cfg = _config(layout / "cfg", recorder.url, f"path={str(elsewhere / 'x.jsonl')!r}")
    with pytest.raises(DataOutsideRootsError) as err:
        evaluate_config(cfg, RunOptions(workdir=layout.parent / "w", dry_run=True))
    assert err.value.field == "datasets[0].path" and err.value.file == str(cfg)
    result = evaluate_config(cfg, RunOptions(workdir=layout.parent / "w", dry_run=True, allow_data=[elsewhere]))
    assert result.tasks and result.tasks[0].rows == 1
    assert recorder.seen == []
