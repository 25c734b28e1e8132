"""``bodega data fetch`` copies a corpus into place and checks every sha256; never against the network here."""
from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

import bodega.data.corpora as corpora
from bodega.cli import main
from bodega.data.corpora import Check, check_folder, fetch, folder_hashes, load_corpora
from bodega.errors import BodegaError, MissingFileError

ROOT = Path(__file__).resolve().parents[1]
RAW_ROOT = Path(os.environ.get("BODEGA_RAW", ROOT.parent / "shared" / "data" / "raw"))


@pytest.fixture()
def fake_corpus(tmp_path, monkeypatch) -> Path:
    """A two-file PR2 'release' and a manifest listing it, in place of the real one."""
    release = tmp_path / "download" / "ptc-v2"
    (release / "train-articles").mkdir(parents=True)
    (release / "train-articles" / "article1.txt").write_text("One sentence.\n")
    (release / "train-task1-SI.labels").write_text("1\t0\t3\n")
    manifest = tmp_path / "corpora.yaml"
    manifest.write_text(yaml.safe_dump({"PR2": {
        "source": "semeval2020", "folder": "PR2", "name": "a small stand-in", "url": "https://example.org/ptc",
        "licence": "test", "bodega": "test", "files": folder_hashes(release)}}))
    monkeypatch.setattr(corpora, "MANIFEST", manifest)
    monkeypatch.setattr(corpora, "load_corpora", lambda path=manifest: load_corpora(path))
    return release


def test_a_folder_is_copied_into_the_raw_root_and_checked(fake_corpus, tmp_path, capsys):
    raw_root = tmp_path / "raw"
    assert main(["data", "fetch", "--task", "pr2", "--from", str(fake_corpus.parent), "--raw-root",
                 str(raw_root)]) == 0
    assert (raw_root / "PR2" / "train-task1-SI.labels").read_text() == "1\t0\t3\n"
    out = capsys.readouterr().out
    assert "PR2: 2 files of a small stand-in" in out
    assert f"bodega data prepare --task PR2 --raw {raw_root / 'PR2'}" in out
    # again: the files in place are kept
    before = (raw_root / "PR2" / "train-task1-SI.labels").stat().st_mtime_ns
    fetch("PR2", fake_corpus, raw_root)
    assert (raw_root / "PR2" / "train-task1-SI.labels").stat().st_mtime_ns == before


def test_without_raw_root_the_commands_use_bodega_raw_and_else_say_how_to_name_one(fake_corpus, tmp_path,
                                                                                   monkeypatch, capsys):
    from bodega.paths import raw_root

    monkeypatch.setenv("BODEGA_RAW", str(tmp_path / "env-raw"))
    assert raw_root("explicit") == Path("explicit") and raw_root() == tmp_path / "env-raw"
    assert main(["data", "fetch", "--task", "PR2", "--from", str(fake_corpus.parent)]) == 0
    assert (tmp_path / "env-raw" / "PR2" / "train-task1-SI.labels").exists()
    monkeypatch.delenv("BODEGA_RAW")
    with pytest.raises(MissingFileError, match="pass --raw-root .* or set BODEGA_RAW"):
        raw_root()
    capsys.readouterr()
    assert main(["data", "prepare-missing", "--out-root", str(tmp_path / "data"), "--tasks", "PR2"]) == 2
    assert "set BODEGA_RAW" in capsys.readouterr().err


def test_an_archive_and_a_file_url_are_unpacked(fake_corpus, tmp_path):
    archive = tmp_path / "ptc.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in fake_corpus.rglob("*"):
            if path.is_file():
                handle.write(path, Path("ptc-v2") / path.relative_to(fake_corpus))
    assert check_folder(corpora.corpus("PR2"), fetch("PR2", archive, tmp_path / "a")).ok
    assert check_folder(corpora.corpus("PR2"), fetch("PR2", archive.as_uri(), tmp_path / "b")).ok


def test_a_different_or_partial_copy_is_refused_naming_the_files(fake_corpus, tmp_path, capsys):
    (fake_corpus / "train-articles" / "article1.txt").write_text("Another sentence.\n")
    with pytest.raises(BodegaError, match=r"1 file\(s\) with another sha256 \(train-articles/article1.txt\)"
                                          r".*https://example.org/ptc"):
        fetch("PR2", fake_corpus, tmp_path / "raw")
    assert not (tmp_path / "raw" / "PR2").exists()
    (fake_corpus / "train-articles" / "article1.txt").unlink()
    with pytest.raises(BodegaError, match=r"1 file\(s\) missing \(train-articles/article1.txt\)"):
        fetch("PR2", fake_corpus, tmp_path / "raw")
    with pytest.raises(MissingFileError, match="no such file or folder"):
        fetch("PR2", tmp_path / "nowhere", tmp_path / "raw")
    assert main(["data", "fetch", "--task", "PR2", "--from", str(tmp_path / "empty.zip"),
                 "--raw-root", str(tmp_path / "raw")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_prepare_names_the_missing_file_where_to_get_it_and_the_fetch_command(tmp_path, capsys):
    raw = tmp_path / "PR2"
    (raw / "train-articles").mkdir(parents=True)
    assert main(["data", "prepare", "--task", "PR2", "--raw", str(raw), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "lacks train-task1-SI.labels" in err and "https://propaganda.qcri.org/semeval2020-task11/" in err
    assert "bodega data fetch --task PR2 --from PATH_OR_URL" in err and err.count("\n") == 1


def test_the_manifest_covers_every_task_with_source_licence_and_hashes():
    entries = load_corpora()
    assert set(entries) == {"HN", "PR2", "FC", "RD"}
    for entry in entries.values():
        assert entry.url.startswith("https://") and entry.licence and entry.bodega and entry.files
        assert all(len(sha) == 64 for sha in entry.files.values())
    assert Check([], []).ok and not Check(["a"], []).ok


@pytest.mark.parametrize("task", ["HN", "PR2", "FC", "RD"])
def test_the_real_corpora_match_the_manifest(task, tmp_path):
    entry = load_corpora()[task]
    if not (RAW_ROOT / entry.folder).is_dir():
        pytest.skip(f"the raw {task} corpus is not at {RAW_ROOT / entry.folder} (set BODEGA_RAW)")
    copy = tmp_path / "copy"
    shutil.copytree(RAW_ROOT / entry.folder, copy)
    assert fetch(task, copy, tmp_path / "raw") == tmp_path / "raw" / entry.folder


def test_the_readme_and_the_book_page_state_the_manifest_hashes():
    entries = load_corpora()
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Getting the data\n", 1)[1].split("\n## ")[0]
    page = (ROOT / "book" / "getting_data.md").read_text(encoding="utf-8")
    for task, entry in entries.items():
        assert f"`{entry.digest()[:16]}`" in readme and f"<{entry.url}>" in readme, task
        assert f"`{entry.digest()}`" in page and entry.licence in page, task
        assert all(f"| `{path}` | `{sha}` |" in page for path, sha in entry.files.items()), task


def _zip(archive: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for name, data in members.items():
            handle.writestr(name, data)
    return archive


def test_an_interrupted_copy_leaves_no_part_of_a_file_under_its_name(fake_corpus, tmp_path, monkeypatch):
    import bodega.data.transfer as transfer

    def killed(source, out, length=0):
        out.write(source.read(2))
        raise KeyboardInterrupt  # as a kill would stop it mid-copy

    monkeypatch.setattr(transfer.shutil, "copyfileobj", killed)
    with pytest.raises(KeyboardInterrupt):
        fetch("PR2", fake_corpus, tmp_path / "raw")
    left = [p for p in (tmp_path / "raw").rglob("*") if p.is_file()]
    assert left == []  # neither a truncated file under its name nor a temporary one


def test_prepare_refuses_a_damaged_copy_naming_the_file(tmp_path, capsys):
    entry = load_corpora()["PR2"]
    if not (RAW_ROOT / entry.folder).is_dir():
        pytest.skip(f"the raw PR2 corpus is not at {RAW_ROOT / entry.folder} (set BODEGA_RAW)")
    raw = tmp_path / "PR2"
    shutil.copytree(RAW_ROOT / entry.folder, raw)
    labels = raw / "train-task1-SI.labels"
    labels.write_bytes(labels.read_bytes()[: labels.stat().st_size // 2])  # what a kill mid-copy left before
    assert main(["data", "prepare", "--task", "PR2", "--raw", str(raw), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "train-task1-SI.labels" in err and "bodega data fetch --task PR2" in err and err.count("\n") == 1
    assert not (tmp_path / "out" / "train.tsv").exists()


def test_fetch_replaces_a_link_in_the_raw_root_and_never_writes_through_it(fake_corpus, tmp_path, capsys):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not yours\n")
    target = tmp_path / "raw" / "PR2"
    target.mkdir(parents=True)
    (target / "train-task1-SI.labels").symlink_to(outside)
    fetch("PR2", fake_corpus, tmp_path / "raw")
    assert outside.read_text() == "not yours\n"
    assert not (target / "train-task1-SI.labels").is_symlink()
    (tmp_path / "away").mkdir()
    (tmp_path / "raw2").mkdir()
    (tmp_path / "raw2" / "PR2").symlink_to(tmp_path / "away", target_is_directory=True)
    assert main(["data", "fetch", "--task", "PR2", "--from", str(fake_corpus), "--raw-root",
                 str(tmp_path / "raw2")]) == 2
    assert "leads out of --raw-root" in capsys.readouterr().err
    assert list((tmp_path / "away").iterdir()) == []


def test_only_corpus_files_are_extracted_and_within_the_limit(fake_corpus, tmp_path, capsys):
    members = {f"ptc-v2/{p.relative_to(fake_corpus).as_posix()}": p.read_bytes()
               for p in fake_corpus.rglob("*") if p.is_file()}
    bomb = _zip(tmp_path / "bomb.zip", {**members, "ptc-v2/padding.bin": b"\0" * (3 << 20)})
    raw = tmp_path / "raw"
    assert main(["data", "fetch", "--task", "PR2", "--from", str(bomb), "--raw-root", str(raw),
                 "--max-extract-mb", "1"]) == 0  # the 3 MiB member is not a corpus file: never extracted
    big = _zip(tmp_path / "big.zip", {**members, "ptc-v2/train-task1-SI.labels": b"1\t0\t3\n" * (1 << 18)})
    assert main(["data", "fetch", "--task", "PR2", "--from", str(big), "--raw-root", str(tmp_path / "raw3"),
                 "--max-extract-mb", "1"]) == 2
    err = capsys.readouterr().err
    assert "--max-extract-mb" in err and err.count("\n") == 1


@pytest.mark.parametrize("damage", ["zip", "tar", "folder-in-the-way", "bad-url", "no-marker"])
def test_fetch_errors_are_one_line_naming_the_file(fake_corpus, tmp_path, capsys, damage):
    import tarfile

    raw = tmp_path / "raw"
    source = tmp_path / "corpus.zip"
    if damage == "zip":
        with zipfile.ZipFile(source, "w") as handle:  # stored, so that the damage reaches the member's bytes
            handle.writestr("ptc-v2/train-task1-SI.labels", b"x" * 5000)
        data = bytearray(source.read_bytes())
        data[200:300] = b"y" * 100
        source.write_bytes(bytes(data))
    elif damage == "tar":
        source = tmp_path / "corpus.tar"
        with tarfile.open(source, "w") as handle:
            handle.add(fake_corpus, arcname="ptc-v2")
        source.write_bytes(source.read_bytes()[:1200])
    elif damage == "folder-in-the-way":
        (raw / "PR2" / "train-task1-SI.labels").mkdir(parents=True)
        source = fake_corpus
    elif damage == "no-marker":
        _zip(source, {"ptc-v2/readme.txt": b"nothing here"})
    source_text = "http://[::1" if damage == "bad-url" else str(source)
    assert main(["data", "fetch", "--task", "PR2", "--from", source_text, "--raw-root", str(raw)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert ("train-task1-SI.labels" if damage == "folder-in-the-way" else source_text) in err
    assert "bodega-fetch-" not in err  # the archive is named, not a temporary folder


class _Server:
    """A local HTTP server whose answer the test chooses: silence, or a body without end."""

    def __init__(self, mode: str):
        import contextlib
        import http.server
        import threading
        import time

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                if mode == "silent":
                    threading.Event().wait(30)
                    return
                self.send_response(200)
                self.end_headers()
                if mode == "trickle":  # a byte at a time, never silent for long
                    with contextlib.suppress(OSError):
                        for _ in range(300):
                            self.wfile.write(b"\0")
                            self.wfile.flush()
                            time.sleep(0.1)
                    return
                try:
                    while True:
                        self.wfile.write(b"\0" * 65536)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/corpus.zip"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("mode", ["silent", "endless"])
def test_a_download_stops_at_its_timeout_and_size_limit(tmp_path, capsys, mode):
    import time

    server = _Server(mode)
    try:
        started = time.monotonic()
        assert main(["data", "fetch", "--task", "PR2", "--from", server.url, "--raw-root", str(tmp_path / "raw"),
                     "--timeout", "1", "--max-download-mb", "2"]) == 2
        assert time.monotonic() - started < 15
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and server.url in err
    assert ("--max-download-mb" if mode == "endless" else "timed out") in err


def test_a_trickling_download_stops_at_its_deadline(tmp_path, capsys):
    """Each byte reset the silence timeout: a server sending one byte at a time was never given up on."""
    import time

    server = _Server("trickle")
    try:
        started = time.monotonic()
        assert main(["data", "fetch", "--task", "PR2", "--from", server.url, "--raw-root", str(tmp_path / "raw"),
                     "--timeout", "1", "--deadline", "2"]) == 2
        assert time.monotonic() - started < 10
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not downloaded within --deadline's 2 seconds" in err


def test_a_password_or_token_in_a_download_url_is_never_shown(tmp_path, capsys):
    server = _Server("silent")
    host = server.url.split("//")[1]
    try:
        secret = server.url.replace("//", "//reader:s3cr3t-pass@") + "?X-Amz-Signature=t0ken-value&dl=1"
        assert main(["data", "fetch", "--task", "PR2", "--from", secret, "--raw-root", str(tmp_path / "raw"),
                     "--timeout", "1"]) == 2
    finally:
        server.close()
    err = capsys.readouterr().err
    assert "s3cr3t-pass" not in err and "t0ken-value" not in err and err.count("\n") == 1
    assert f"reader:***@{host}?X-Amz-Signature=***&dl=***" in err


def test_sigterm_during_a_download_removes_its_temporary_files(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    server = _Server("endless")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(ROOT / "lib")}
    try:
        process = subprocess.Popen([sys.executable, "-m", "bodega", "data", "fetch", "--task", "PR2", "--from",
                                    server.url, "--raw-root", str(tmp_path / "raw")], env=env, cwd=tmp_path,
                                   stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not any(scratch.rglob("corpus.zip")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any(scratch.rglob("corpus.zip"))
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        server.close()
    assert process.returncode != 0 and b"Traceback" not in err
    assert list(scratch.iterdir()) == []


def test_a_full_disk_while_extracting_or_copying_is_one_line(fake_corpus, tmp_path, monkeypatch, capsys):
    import errno

    import bodega.data.transfer as transfer

    members = {f"ptc-v2/{p.relative_to(fake_corpus).as_posix()}": p.read_bytes()
               for p in fake_corpus.rglob("*") if p.is_file()}
    archive = _zip(tmp_path / "ptc.zip", members)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(transfer, "_copy_bounded", full)
    assert main(["data", "fetch", "--task", "PR2", "--from", str(archive), "--raw-root", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "no room to extract it" in err and str(archive) in err and err.count("\n") == 1
    monkeypatch.setattr(transfer.shutil, "copyfileobj", full)
    assert main(["data", "fetch", "--task", "PR2", "--from", str(fake_corpus), "--raw-root", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left on device" in err and err.count("\n") == 1
    assert [p for p in (tmp_path / "b").rglob("*") if p.is_file()] == []
