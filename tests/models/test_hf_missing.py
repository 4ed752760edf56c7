import pytest

from promptweave.errors import ModelError


def test_missing_local_model_folder_is_a_clear_error(tmp_path):
    from promptweave.models.hf import HFModel

    with pytest.raises(ModelError, match="no model folder at"):
        HFModel(str(tmp_path / "nowhere" / "model"))
    with pytest.raises(ModelError, match="no model folder at"):
        HFModel("path/to/a/local/model")
