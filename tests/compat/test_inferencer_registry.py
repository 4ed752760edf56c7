"""Every inferencer the reference config trees use is a form or a typed PW160 naming file and field."""
from __future__ import annotations

import pytest

from promptweave.compat.inferencers import (
    INFERENCERS,
    UNSUPPORTED_INFERENCERS,
    resolve_inferencer,
)
from promptweave.errors import UnsupportedError

USED_IN_REFERENCE_CONFIGS = ["GenInferencer", "PPLInferencer", "ChatInferencer", "AgentInferencer",
                             "PPLOnlyInferencer", "CLPInferencer", "AttackInferencer", "LLInferencer",
                             "ToTInferencer", "SWCELossInferencer", "SCInferencer", "InferencePPLOnlyInferencer",
                             "MultiTurnGenInferencer", "LMMGenInferencer", "BFCLV3FunctionCallInferencer"]


@pytest.mark.parametrize("name", USED_IN_REFERENCE_CONFIGS)
def test_each_reference_inferencer_is_a_form_or_named_unsupported(name) -> None:
    assert (name in INFERENCERS) != (name in UNSUPPORTED_INFERENCERS)
    if name in UNSUPPORTED_INFERENCERS:
        with pytest.raises(UnsupportedError) as exc:
            resolve_inferencer(name, {}, file="x.py", field="datasets[2].infer_cfg.inferencer")
        assert str(exc.value).startswith(f"[PW160] x.py: datasets[2].infer_cfg.inferencer.type: {name}")


@pytest.mark.parametrize("name, mode", [("GenInferencer", "gen"), ("PPLInferencer", "ppl"), ("SCInferencer", "sc"),
                                        ("LLInferencer", "ll"), ("PPLOnlyInferencer", "ppl_only"),
                                        ("CLPInferencer", "clp"), ("ChatInferencer", "gen"),
                                        ("AgentInferencer", "gen"), ("MultiTurnGenInferencer", "multiturn")])
def test_forms(name, mode) -> None:
    assert resolve_inferencer(name, {})[0].mode == mode


def test_unknown_inferencer_is_never_generation() -> None:
    with pytest.raises(UnsupportedError, match=r"a\.py: infer_cfg\.inferencer\.type: unknown inferencer"):
        resolve_inferencer("MysteryInferencer", {}, file="a.py")


def test_kwargs_are_honoured_or_named_as_ignored() -> None:
    form, notes = resolve_inferencer("GenInferencer", {"max_out_len": 5, "batch_size": 8, "save_every": 1,
                                                       "frobnicate": 1}, field="f")
    assert form.mode == "gen"
    assert any(n.startswith("f.batch_size is ignored") for n in notes)
    assert any(n.startswith("f.save_every is ignored") for n in notes)
    assert any("f.frobnicate is not a setting" in n for n in notes)
    assert not any("max_out_len" in n for n in notes)


def test_chat_and_agent_modes() -> None:
    assert resolve_inferencer("ChatInferencer", {"infer_mode": "last"})[0].mode == "gen"
    assert resolve_inferencer("ChatInferencer", {"infer_mode": "every"})[0].mode == "chat"
    assert resolve_inferencer("ParallelChatInferencer", {"infer_mode": "every_with_gt"})[0].mode == "chat"
    with pytest.raises(UnsupportedError, match="infer_mode"):
        resolve_inferencer("ChatInferencer", {"infer_mode": "each"})
    for mode in ("every", "every_with_gt"):  # the ReAct code agent (forms/agent_loop.py); run needs --allow-code-exec
        form, notes = resolve_inferencer("AgentInferencer", {"infer_mode": mode, "max_out_len": 9})
        assert form.mode == "agent"
        assert any("--allow-code-exec" in n for n in notes)
        assert any("max_out_len is ignored" in n for n in notes)
    with pytest.raises(UnsupportedError, match="infer_mode"):
        resolve_inferencer("AgentInferencer", {"infer_mode": "each"})
    _, notes = resolve_inferencer("AgentInferencer", {})
    assert any("tool-free" in n for n in notes)


@pytest.mark.parametrize("bad", [0, -1, "3", 2.5, True])
def test_sc_size_must_be_a_positive_int(bad) -> None:
    with pytest.raises(UnsupportedError, match="sc_size"):
        resolve_inferencer("SCInferencer", {"sc_size": bad})
