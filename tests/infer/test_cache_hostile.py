"""A response cache file of any content or schema: opened as it is, or set aside and rebuilt with a warning,
or a typed error; never an untyped crash, and an answer stored after opening reads back."""
from __future__ import annotations

import sqlite3
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.errors import PromptweaveError, PromptweaveWarning
from promptweave.infer.cache import ResponseCache

COLUMNS = st.lists(st.sampled_from(["key", "model", "kind", "request", "response", "created", "value", "x"]),
                   min_size=1, max_size=7, unique=True)
VALUES = st.one_of(st.text(max_size=20), st.floats(allow_nan=True), st.integers(-(2**63), 2**63 - 1),
                   st.binary(max_size=20), st.none())


@st.composite
def cache_files(draw) -> tuple[str, object]:
    kind = draw(st.sampled_from(["bytes", "header", "schema", "rows"]))
    if kind == "bytes":
        return kind, draw(st.binary(max_size=3000))
    if kind == "header":
        return kind, b"SQLite format 3\x00" + draw(st.binary(min_size=0, max_size=3000))
    if kind == "schema":
        return kind, (draw(st.sampled_from(["responses", "memos", "other"])), draw(COLUMNS))
    return kind, draw(st.lists(st.tuples(VALUES, VALUES, VALUES), max_size=5))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cache_files())
def test_any_cache_file_opens_is_set_aside_or_is_a_typed_error(case) -> None:
    kind, content = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.sqlite"
        if kind in ("bytes", "header"):
            path.write_bytes(content)
        else:
            con = sqlite3.connect(path)
            if kind == "schema":
                table, cols = content
                con.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
            else:
                con.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, kind TEXT NOT NULL, "
                            "request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL)")
                for n, (resp, created, model) in enumerate(content):
                    con.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, 'gen', '{}', ?, ?)",
                                (f"k{n}", str(model), resp if resp is not None else "", created or 0))
            con.commit()
            con.close()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                cache = ResponseCache(path)
            except PromptweaveError:
                return
        set_aside = [p for p in Path(tmp).iterdir() if ".unusable-" in p.name]
        warned = [w for w in caught if issubclass(w.category, PromptweaveWarning)]
        assert bool(set_aside) == bool(warned)
        with cache:
            cache.get_many([f"k{n}" for n in range(6)])  # odd stored answers are misses, never a crash
            cache.put("new", "m", "gen", {"q": 1}, {"a": [1, 2]})
            assert cache.get("new") == {"a": [1, 2]}
