"""``model_dataset_combinations``: which dataset × model pairs a config runs; any malformed value is a typed error."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.config.loader import Config
from promptweave.config.pairs import allowed_pairs, paired
from promptweave.errors import ConfigError
from tests.outcome import value_or_error

DATASETS = [{"abbr": "gen"}, {"abbr": "mc"}]
MODELS = [{"abbr": "lm"}, {"abbr": "api"}]


def _cfg(groups) -> Config:
    return Config(Path("cfg.py"), [dict(d) for d in DATASETS], [dict(m) for m in MODELS],
                  {} if groups is None else {"model_dataset_combinations": groups})


def test_no_combinations_runs_every_pair() -> None:
    assert allowed_pairs(_cfg(None)) is None
    assert paired(None, 1, [0, 1], ["a", "b"]) == ([0, 1], ["a", "b"])


def test_groups_pair_their_own_datasets_and_models() -> None:
    groups = [{"models": [MODELS[0]], "datasets": DATASETS}, {"models": [MODELS[1]], "datasets": [DATASETS[0]]}]
    allowed = allowed_pairs(_cfg(groups))
    assert allowed == {(0, 0), (1, 0), (0, 1)}
    assert paired(allowed, 1, [0, 1], ["lm", "api"]) == ([0], ["lm"])
    assert allowed_pairs(_cfg([{"models": ["api"], "datasets": ["mc"]}])) == {(1, 1)}  # abbrs work too


def test_an_unknown_entry_names_its_place() -> None:
    with pytest.raises(ConfigError, match=r"model_dataset_combinations\[0\]\.datasets\[0\].*one of gen, mc"):
        allowed_pairs(_cfg([{"models": ["lm"], "datasets": ["nope"]}]))


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(
                         ["models", "datasets", "abbr", "x"]), kids, max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_any_value_is_pairs_or_a_typed_error(groups) -> None:
    allowed, exc = value_or_error(allowed_pairs, _cfg(groups), expected=ConfigError)
    if exc is not None:
        assert "model_dataset_combinations" in str(exc)
        return
    assert allowed is None or allowed <= {(i, j) for i in range(2) for j in range(2)}
