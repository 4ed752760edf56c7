"""Where dataset files are looked for: OpenCompass ids and ./data paths, AISBench paths, and the PW210 error."""
from pathlib import Path

import pytest

from promptweave.compat.data_ids import DATA_IDS
from promptweave.data import load_dataset
from promptweave.data.locate import candidates, locate
from promptweave.errors import DataNotFoundError
from tests.outcome import value_or_error

GSM = {"abbr": "gsm8k", "type": "GSM8KDataset", "path": "opencompass/gsm8k",
       "reader_cfg": {"input_columns": ["question"], "output_column": "answer"}}


def _gsm8k(root: Path) -> None:
    d = root / "data" / "gsm8k"
    d.mkdir(parents=True)
    (d / "train.jsonl").write_text('{"question": "t", "answer": "#### 1"}\n', encoding="utf-8")
    (d / "test.jsonl").write_text('{"question": "q", "answer": "#### 2"}\n', encoding="utf-8")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("COMPASS_DATA_CACHE", raising=False)
    monkeypatch.delenv("AIS_BENCH_DATASETS_CACHE", raising=False)
    monkeypatch.chdir(work)
    return tmp_path


def test_the_id_table_holds_the_reference_mapping():
    assert DATA_IDS["opencompass/gsm8k"] == "./data/gsm8k/"
    assert DATA_IDS["opencompass/mmlu"] == "./data/mmlu/"
    assert len(DATA_IDS) > 100


def test_generated_table_is_up_to_date():
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("opencompass") is None:
        pytest.skip("needs opencompass's dataset table: pip install --no-deps opencompass==0.5.4 (.ci/run does)")
    script = Path(__file__).resolve().parents[2] / "tools" / "gen_data_ids.py"
    res = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, check=False)
    if res.returncode not in (0, 1):
        pytest.skip("opencompass is not installed: " + res.stderr.decode()[-200:])
    assert res.returncode == 0, "src/promptweave/compat/data_ids.py is stale: run tools/gen_data_ids.py"


def test_env_cache_comes_first(isolated, monkeypatch):
    cache = isolated / "cache"
    _gsm8k(cache)
    _gsm8k(isolated / "work")  # also in the working directory: the env var wins
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    got = locate("opencompass/gsm8k")
    assert got.path == cache / "data" / "gsm8k"
    assert got.rule == "opencompass"


def test_without_env_the_working_directory_then_home_cache(isolated):
    _gsm8k(isolated / "home" / ".cache" / "opencompass")
    got = locate("opencompass/gsm8k")
    assert got.path == isolated / "home" / ".cache" / "opencompass" / "data" / "gsm8k"
    assert got.tried == (isolated / "work" / "data" / "gsm8k",)
    _gsm8k(isolated / "work")
    assert locate("opencompass/gsm8k").path == isolated / "work" / "data" / "gsm8k"


def test_dot_data_paths_try_the_working_directory_before_the_config_folder(isolated):
    cfg_dir = isolated / "configs"
    _gsm8k(cfg_dir)
    got = locate("./data/gsm8k", base_dir=cfg_dir)
    assert got.path == cfg_dir / "data" / "gsm8k"
    _gsm8k(isolated / "work")
    assert locate("./data/gsm8k", base_dir=cfg_dir).path == isolated / "work" / "data" / "gsm8k"


def test_local_mode_does_not_map_ids(isolated):
    _rule, cands = candidates("opencompass/gsm8k", local_mode=True)
    assert cands[0] == isolated / "work" / "opencompass" / "gsm8k"


def test_absolute_paths_are_used_as_written(isolated):
    target = isolated / "abs" / "x.jsonl"
    target.parent.mkdir()
    target.write_text("{}\n", encoding="utf-8")
    assert locate(str(target)).path == target


def test_aisbench_paths(isolated, monkeypatch):
    rel = "ais_bench/datasets/gsm8k"
    (isolated / "work" / rel).mkdir(parents=True)
    assert locate(rel).path == isolated / "work" / rel
    other = isolated / "aiscache"
    (other / rel).mkdir(parents=True)
    monkeypatch.setenv("AIS_BENCH_DATASETS_CACHE", str(other))
    got = locate(rel)
    assert got.path == other / rel and got.rule == "aisbench"


def test_missing_data_is_one_typed_error_naming_everything(isolated):
    cfg = isolated / "configs" / "eval_x.py"
    with pytest.raises(DataNotFoundError) as err:
        load_dataset(GSM, base_dir=cfg.parent, file=str(cfg))
    e = err.value
    text = str(e)
    assert e.code == "PW210"
    assert text.startswith(f"[PW210] {cfg}: path: ")
    assert "'gsm8k'" in text and "GSM8KDataset" in text
    tried = [str(isolated / "work" / "data" / "gsm8k"), str(isolated / "home" / ".cache" / "opencompass"),
             str(isolated / "configs" / "data" / "gsm8k")]
    positions = [text.index(t) for t in tried]
    assert positions == sorted(positions)  # in the order they were tried
    assert "COMPASS_DATA_CACHE" in text and "never downloads" in text


def test_missing_aisbench_data_names_its_env_var(isolated):
    with pytest.raises(DataNotFoundError) as err:
        locate("ais_bench/datasets/nope", abbr="nope")
    assert "AIS_BENCH_DATASETS_CACHE" in str(err.value) and "'nope'" in str(err.value)


def test_loading_through_the_id_with_env(isolated, monkeypatch):
    _gsm8k(isolated / "cache")
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(isolated / "cache"))
    got = load_dataset(GSM, base_dir=isolated)
    assert got.test == [{"question": "q", "answer": "#### 2"}]
    assert got.train == [{"question": "t", "answer": "#### 1"}]
    assert got.loader == "GSM8KDataset (native)"


def test_any_path_string_gives_a_location_or_a_typed_error(isolated):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st


    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.one_of(st.text(max_size=60), st.sampled_from(sorted(DATA_IDS)), st.none(), st.integers()))
    def probe(path):
        got, exc = value_or_error(locate, path, base_dir=isolated / "configs")
        if exc is not None:
            assert exc.code in ("PW200", "PW210")
        else:
            assert got.path.exists()

    probe()
