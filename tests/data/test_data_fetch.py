"""``promptweave data fetch`` against a real loopback mirror serving archives built here.

The URLs and md5s are the reference's own table (``compat/data_urls.py``); the mirror keeps each URL's path, as
``--mirror`` promises. Stand-in archives have other md5s, so the tests that unpack them pass ``--md5-table``.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.cli.app import run_cli
from promptweave.compat.data_urls import ARCHIVES
from promptweave.data.archive import UnpackLimits, unpack
from promptweave.errors import DataFetchError

GSM8K_URL_PATH = "/datasets/data/gsm8k.zip"
ARC_URL_PATH = "/datasets/data/ARC.zip"


class Mirror:
    """A loopback HTTP server: ``files`` by URL path; ``cut`` serves only the first N bytes of a body (then closes)
    on the first request of a path; ``ranges`` honours ``Range`` requests."""

    def __init__(self, files: dict[str, bytes], *, cut: int | None = None, ranges: bool = True) -> None:
        self.files, self.cut, self.ranges = files, cut, ranges
        self.log: list[tuple[str, str | None]] = []
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                rng = self.headers.get("Range")
                mirror.log.append((self.path, rng))
                body = mirror.files.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = 0
                if rng and mirror.ranges:
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                first = sum(1 for p, _ in mirror.log if p == self.path) == 1
                if mirror.cut is not None and first:
                    self.wfile.write(body[start:mirror.cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body[start:])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self) -> "Mirror":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def zip_of(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, target)
    return buf.getvalue()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


GSM8K_ROWS = [{"question": "1+1?", "answer": "so #### 2"}, {"question": "2+3?", "answer": "so #### 5"}]


def gsm8k_zip() -> bytes:
    lines = "".join(json.dumps(r) + "\n" for r in GSM8K_ROWS).encode()
    return zip_of({"gsm8k/train.jsonl": lines, "gsm8k/test.jsonl": lines})


def arc_zip() -> bytes:
    row = json.dumps({"id": "1", "question": {"stem": "?", "choices": []}, "answerKey": "A"}).encode() + b"\n"
    return zip_of({"ARC/ARC-c/ARC-Challenge-Dev.jsonl": row, "ARC/ARC-e/ARC-Easy-Dev.jsonl": row})


def config(tmp_path: Path, *paths: str) -> Path:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"datasets": [{"abbr": p.split("/")[-1], "path": p} for p in paths], "models": []}))
    return cfg


def table(tmp_path: Path, **archives: bytes) -> Path:
    keys = {"gsm8k": "/gsm8k/", "arc": "/ARC"}
    out = {keys[k]: {"url": ARCHIVES[keys[k]][0], "md5": md5(v)} for k, v in archives.items()}
    p = tmp_path / "md5.json"
    p.write_text(json.dumps(out))
    return p


def cli(*args: object) -> int:
    return run_cli([str(a) for a in args])


def test_the_table_is_the_references_own() -> None:
    assert ARCHIVES["/gsm8k/"] == ("http://opencompass.oss-cn-shanghai.aliyuncs.com/datasets/data/gsm8k.zip",
                                   "901e5dc93a2889789a469da9850cdca8")
    assert ARCHIVES["/ARC"][0].endswith(ARC_URL_PATH)


def test_fetch_unpacks_each_archive_once_and_a_refetch_sends_nothing(tmp_path: Path, capsys) -> None:
    gz, az = gsm8k_zip(), arc_zip()
    root = tmp_path / "root"
    cfg = config(tmp_path, "opencompass/gsm8k", "opencompass/ai2_arc-dev", "opencompass/ai2_arc-easy-dev")
    with Mirror({GSM8K_URL_PATH: gz, ARC_URL_PATH: az}) as m:
        assert cli("data", "fetch", cfg, "--data-root", root, "--mirror", m.url,
                   "--md5-table", table(tmp_path, gsm8k=gz, arc=az)) == 0
        assert sorted(p for p, _ in m.log) == [ARC_URL_PATH, GSM8K_URL_PATH]  # ARC once for two datasets
        assert (root / "data/gsm8k/test.jsonl").read_bytes().count(b"\n") == 2
        assert (root / "data/ARC/ARC-e/ARC-Easy-Dev.jsonl").is_file()
        n = len(m.log)
        assert cli("data", "fetch", cfg, "--data-root", root, "--mirror", m.url) == 0
        assert len(m.log) == n  # present data: not even a HEAD
    out = capsys.readouterr().out
    assert "0 archive(s) fetched, 3 dataset(s) already present" in out


def test_without_an_override_the_stand_in_is_refused_naming_the_tables_md5(tmp_path: Path, capsys) -> None:
    root = tmp_path / "root"
    with Mirror({GSM8K_URL_PATH: gsm8k_zip()}) as m:
        code = cli("data", "fetch", config(tmp_path, "opencompass/gsm8k"), "--data-root", root, "--mirror", m.url)
    err = capsys.readouterr().err
    assert code != 0 and "[PW271]" in err and "901e5dc93a2889789a469da9850cdca8" in err
    assert not (root / "data").exists()
    assert not list((root / ".promptweave-fetch").glob("*.part"))


@pytest.mark.parametrize("ranges", [True, False])
def test_a_cut_transfer_resumes_or_restarts(tmp_path: Path, ranges: bool) -> None:
    gz = gsm8k_zip()
    root = tmp_path / "root"
    with Mirror({GSM8K_URL_PATH: gz}, cut=len(gz) // 2, ranges=ranges) as m:
        assert cli("data", "fetch", config(tmp_path, "opencompass/gsm8k"), "--data-root", root, "--mirror", m.url,
                   "--md5-table", table(tmp_path, gsm8k=gz)) == 0
        assert len(m.log) == 2
        assert (m.log[1][1] == f"bytes={len(gz) // 2}-") if ranges else True
    assert (root / "data/gsm8k/train.jsonl").is_file()


@pytest.mark.parametrize("hostile", ["dotdot", "absolute", "link_out", "link_abs"])
def test_hostile_members_refuse_the_whole_archive_and_leave_nothing(tmp_path: Path, hostile: str, capsys) -> None:
    members = {"gsm8k/test.jsonl": b"{}\n"}
    links = {}
    if hostile == "dotdot":
        members["gsm8k/../../escaped.txt"] = b"x"
    elif hostile == "absolute":
        members["/tmp/escaped.txt"] = b"x"
    elif hostile == "link_out":
        links["gsm8k/out"] = "../../.."
    else:
        links["gsm8k/etc"] = "/etc"
    bad = zip_of(members, links)
    root = tmp_path / "root"
    with Mirror({GSM8K_URL_PATH: bad}) as m:
        code = cli("data", "fetch", config(tmp_path, "opencompass/gsm8k"), "--data-root", root, "--mirror", m.url,
                   "--md5-table", table(tmp_path, gsm8k=bad))
    assert code != 0 and "[PW270]" in capsys.readouterr().err
    assert not (root / "data").exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert [p.name for p in (root / ".promptweave-fetch").iterdir()] == []


def test_a_tar_with_a_device_or_fifo_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("d/fifo")
        info.type = tarfile.FIFOTYPE
        tf.addfile(info)
    arc = tmp_path / "a.tar.gz"
    arc.write_bytes(buf.getvalue())
    with pytest.raises(DataFetchError, match="special file"):
        unpack(arc, tmp_path / "out")
    assert not any((tmp_path / "out").iterdir())


def test_an_archive_past_the_bounds_is_refused(tmp_path: Path) -> None:
    arc = tmp_path / "a.zip"
    arc.write_bytes(zip_of({f"f{i}": b"0" * 100 for i in range(20)}))
    with pytest.raises(DataFetchError, match="members"):
        unpack(arc, tmp_path / "o1", UnpackLimits(max_members=10))
    with pytest.raises(DataFetchError, match="unpacks to"):
        unpack(arc, tmp_path / "o2", UnpackLimits(max_bytes=1000))


def test_a_dataset_without_a_known_archive_is_named(tmp_path: Path, capsys) -> None:
    assert cli("data", "fetch", config(tmp_path, "my/own/thing"), "--data-root", tmp_path / "r") == 0
    assert "not in OpenCompass's download table" in capsys.readouterr().err


_NAMES = st.lists(st.text(alphabet="ab./\\", min_size=1, max_size=12), min_size=1, max_size=6)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=_NAMES, links=st.lists(st.tuples(st.text(alphabet="ab", min_size=1, max_size=3),
                                                st.text(alphabet="ab./", min_size=1, max_size=10)), max_size=3))
def test_whatever_the_member_names_nothing_lands_outside(tmp_path_factory, names: list[str],
                                                          links: list[tuple[str, str]]) -> None:
    base = tmp_path_factory.mktemp("u")
    arc = base / "a.zip"
    try:
        arc.write_bytes(zip_of({n: b"x" for n in names}, {f"l/{a}": t for a, t in links}))
    except (ValueError, OSError):
        return
    out = base / "box" / "out"
    try:
        unpack(arc, out)
    except DataFetchError:
        pass
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            assert os.path.realpath(os.path.join(dirpath, name)).startswith(str(base.resolve()))


@pytest.mark.parametrize("args,needle", [
    (["--mirror", "ftp://x"], "--mirror"),
    (["--md5-table", "TABLE_NOT_JSON"], "not JSON"),
    (["--md5-table", "TABLE_BAD_MD5"], "32-hex-digit"),
])
def test_bad_options_are_one_typed_line(tmp_path: Path, capsys, args: list[str], needle: str) -> None:
    (tmp_path / "TABLE_NOT_JSON").write_text("{")
    (tmp_path / "TABLE_BAD_MD5").write_text(json.dumps({"/gsm8k/": {"url": "http://x/y.zip", "md5": "zz"}}))
    args = [str(tmp_path / a) if a.startswith("TABLE_") else a for a in args]
    code = cli("data", "fetch", config(tmp_path, "opencompass/gsm8k"), "--data-root", tmp_path / "r", *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and err[0].startswith("error: [PW270]") and needle in err[0]
