"""How many tokens a request asks for where AISBench decides it per model or per row (work/out_len.py)."""
from __future__ import annotations

import pytest

from promptweave.errors import ConfigError
from promptweave.forms.base import Form
from promptweave.work.out_len import AISBENCH_SERVICE_DEFAULT, model_max_out_len, row_max_out_lens

SERVICE = {"type": "VLLMCustomAPIChat", "max_out_len": 512}


def test_an_aisbench_service_model_asks_for_its_own_length_whatever_the_inferencer_says():
    form = Form()
    assert form.params(SERVICE, {"max_out_len": 64}).max_out_len == 512
    assert form.params({"type": "VLLMCustomAPIStream"}, {"max_out_len": 64}).max_out_len == AISBENCH_SERVICE_DEFAULT
    # every other model: the inferencer's wins (OpenCompass's rule), as before
    assert form.params({"type": "OpenAISDK", "max_out_len": 512}, {"max_out_len": 64}).max_out_len == 64
    assert model_max_out_len({"type": "HuggingFaceCausalLM", "max_out_len": 9}) is None


def test_rows_that_set_their_own_length_and_rows_that_do_not():
    rows = [{"q": "a", "max_out_len": 16}, {"q": "b", "max_out_len": None}, {"q": "c", "max_out_len": 0},
            {"q": "d", "max_out_len": ""}, {"q": "e", "max_out_len": 7}, {"q": "f"}]
    cols = ("q", "max_out_len")
    assert row_max_out_lens(SERVICE, cols, rows, range(6)) == {0: 16, 4: 7}
    assert row_max_out_lens(SERVICE, cols, rows, [1, 4]) == {4: 7}  # one shard's rows
    # only when the reader names the column, and only for AISBench's service models
    assert row_max_out_lens(SERVICE, ("q",), rows, range(6)) == {}
    assert row_max_out_lens({"type": "OpenAISDK"}, cols, rows, range(6)) == {}


@pytest.mark.parametrize("bad", ["32", 3.5, True, -1, [8, 16]])
def test_a_length_that_is_not_a_token_count_is_refused_naming_the_row(bad):
    with pytest.raises(ConfigError) as err:
        row_max_out_lens(SERVICE, ("max_out_len",), [{"max_out_len": 8}, {"max_out_len": bad}], range(2),
                         file="eval.py", where="datasets[0].test")
    assert err.value.field == "datasets[0].test[1].max_out_len" and err.value.file == "eval.py"


def test_the_dry_run_note_says_which_length_wins():
    from promptweave.run.estimate import max_out_len_note

    assert "from the model is used" in max_out_len_note({"max_out_len": 64}, SERVICE)
    assert max_out_len_note({"max_out_len": 512}, SERVICE) is None
    assert "from the inferencer is used" in max_out_len_note({"max_out_len": 64}, {"type": "OpenAISDK",
                                                                                  "max_out_len": 512})
