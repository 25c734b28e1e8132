"""Where each task's raw corpus comes from, which files it has, and their sha256: fetch and check.

``corpora.yaml`` (shipped with the package) lists, per task, the source this project converts by
default: where it is published, its licence, what BODEGA used where that differs, and the sha256 of
every file. :func:`fetch` copies a corpus from a local folder or archive, or downloads it from a URL,
into a raw root laid out as the converters read it (``<raw root>/PR2/...``), and checks every hash, so
a partial or different download is found before any conversion.
"""
from __future__ import annotations

import hashlib
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from bodega.errors import BodegaError, MissingFileError
from bodega.io import file_sha256
from bodega.tasks import get_task

MANIFEST = Path(__file__).resolve().parent / "corpora.yaml"


@dataclass(frozen=True)
class Corpus:
    """One task's raw corpus as this project converts it by default."""

    task: str
    source: str
    """The converter's source name (``bodega data prepare --source``)."""
    folder: str
    """Its folder under a raw root (``FC/FeverSymmetric``)."""
    name: str
    url: str
    licence: str
    bodega: str
    """What BODEGA used, and how this corpus differs from it."""
    files: dict[str, str]
    """sha256 of every file, by path relative to ``folder``."""

    def digest(self) -> str:
        """One sha256 over the sorted ``path  sha256`` lines: the whole corpus in one value."""
        lines = "".join(f"{path}  {sha}\n" for path, sha in sorted(self.files.items()))
        return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def load_corpora(path: str | Path = MANIFEST) -> dict[str, Corpus]:
    """The corpora of the manifest, by task."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return {task: Corpus(task=task, **entry) for task, entry in data.items()}


def corpus(task: str) -> Corpus:
    """The raw corpus of ``task`` (HN, PR2, FC or RD)."""
    return load_corpora()[get_task(task).name]


def folder_hashes(folder: str | Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (hidden files left out), by relative POSIX path."""
    root = Path(folder)
    return {path.relative_to(root).as_posix(): file_sha256(path) for path in sorted(root.rglob("*"))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)}


@dataclass(frozen=True)
class Check:
    """What a folder holds against a corpus's manifest."""

    missing: list[str]
    different: list[str]

    @property
    def ok(self) -> bool:
        """Whether every listed file is there with its sha256."""
        return not self.missing and not self.different


def check_folder(entry: Corpus, folder: str | Path) -> Check:
    """Compare the files under ``folder`` with the manifest (extra files are allowed)."""
    folder = Path(folder)
    missing = [rel for rel in entry.files if not (folder / rel).is_file()]
    different = [rel for rel, sha in entry.files.items() if rel not in missing and file_sha256(folder / rel) != sha]
    return Check(missing, different)


def _describe(check: Check, entry: Corpus, folder: Path) -> str:
    parts = []
    if check.missing:
        parts.append(f"{len(check.missing)} file(s) missing ({', '.join(check.missing[:3])}"
                     f"{', ...' if len(check.missing) > 3 else ''})")
    if check.different:
        parts.append(f"{len(check.different)} file(s) with another sha256 ({', '.join(check.different[:3])}"
                     f"{', ...' if len(check.different) > 3 else ''})")
    return (f"{folder}: {'; '.join(parts)} against the {entry.task} corpus, {entry.name} ({entry.url}); "
            "get that release (see the book's 'Getting the data')")


def _locate(entry: Corpus, tree: Path) -> Path:
    """The folder under ``tree`` holding the corpus's files: the tree itself, ``<tree>/<folder>`` or any below."""
    marker = Path(min(entry.files, key=lambda rel: (rel.count("/"), rel)))  # a file near the corpus's top
    for candidate in (tree, tree / entry.folder):
        if (candidate / marker).is_file():
            return candidate
    for path in sorted(tree.rglob(marker.name)):
        base = path.parents[len(marker.parts) - 1]
        if (base / marker).is_file():
            return base
    raise MissingFileError(f"{tree}: no {marker} in it or below it; is it the {entry.task} corpus, {entry.name} "
                           f"({entry.url})?")


def _unpack(archive: Path, into: Path) -> Path:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(into)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as handle:
            handle.extractall(into, filter="data")
    else:
        raise BodegaError(f"{archive}: neither a folder nor a zip or tar archive; give the corpus's folder, "
                          "archive or its download URL")
    return into


def _download(url: str, into: Path) -> Path:
    name = Path(urllib.parse.urlparse(url).path).name or "download"
    target = into / name
    try:
        with urllib.request.urlopen(url) as response, open(target, "wb") as handle:  # noqa: S310 - user's URL
            shutil.copyfileobj(response, handle)
    except OSError as error:
        raise BodegaError(f"--from {url}: cannot download it ({error}); download it by hand and pass the "
                          "file or folder") from error
    return target


def fetch(task: str, source: str | Path, raw_root: str | Path) -> Path:
    """Copy (or download and unpack) ``task``'s corpus into ``<raw_root>/<folder>`` and check every sha256.

    ``source`` is the corpus's folder (or a raw root holding it), a zip or tar archive, or an
    ``http(s)://``/``file://`` URL of one. Files already in place with the right hash are kept;
    the call fails, naming the files, when any is missing or differs.
    """
    entry = corpus(task)
    target = Path(raw_root) / entry.folder
    with tempfile.TemporaryDirectory(prefix="bodega-fetch-") as scratch:
        text = str(source)
        if urllib.parse.urlparse(text).scheme in ("http", "https", "file"):
            origin = _download(text, Path(scratch))
        else:
            origin = Path(text).expanduser()
            if not origin.exists():
                raise MissingFileError(f"--from {origin}: no such file or folder; give the {entry.task} corpus's "
                                       f"folder, archive or URL ({entry.url})")
        tree = origin if origin.is_dir() else _unpack(origin, Path(scratch) / "unpacked")
        found = _locate(entry, tree)
        check = check_folder(entry, found)
        if not check.ok:
            raise BodegaError(_describe(check, entry, found))
        if found.resolve() != target.resolve():
            for rel in entry.files:
                destination = target / rel
                if destination.is_file() and file_sha256(destination) == entry.files[rel]:
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(found / rel, destination)
    check = check_folder(entry, target)
    if not check.ok:
        raise BodegaError(_describe(check, entry, target))
    return target
