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
