"""Where each task's raw corpus comes from, which files it has, and their sha256: fetch and check.

``corpora.yaml`` (shipped with the package) lists, per task, the source this project converts by
default: where it is published, its licence, what BODEGA used where that differs, and the sha256 of
every file. :func:`fetch` copies a corpus from a local folder or archive, or downloads it from a URL,
into a raw root laid out as the converters read it (``<raw root>/PR2/...``), and checks every hash, so
a partial or different download is found before any conversion.
"""
from __future__ import annotations

import hashlib
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import yaml

from bodega.errors import BodegaError, MissingFileError
from bodega.data.transfer import Limits, copy_replacing, download, extract, shown_url
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


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``'s real location (links followed) is under the real ``root``."""
    return path.resolve().is_relative_to(root.resolve())


def _put_in_place(entry: Corpus, found: Path, target: Path, raw_root: Path) -> None:
    """Copy each listed file of ``found`` to ``target`` by rename (a link there is replaced, never written
    through); files already there with their hash, and not links, are kept."""
    for rel in entry.files:
        destination = target / rel
        if not _inside(destination.parent, raw_root):
            raise BodegaError(f"{destination.parent} leads out of --raw-root {raw_root} (a symbolic link); "
                              "remove the link or give another --raw-root")
        if destination.is_symlink() or not destination.is_file() or file_sha256(destination) != entry.files[rel]:
            try:
                copy_replacing(found / rel, destination)
            except OSError as error:
                raise BodegaError(f"cannot write {destination} ({error.strerror or error}); free space, remove "
                                  "what is in the way or give another --raw-root") from None


def _is_url(text: str) -> bool:
    """Whether ``--from`` is an http(s) or file URL; a malformed one is a user error naming it."""
    try:
        return urllib.parse.urlparse(text).scheme in ("http", "https", "file")
    except ValueError as error:
        raise BodegaError(f"--from {text}: not a valid URL ({error}); give a folder, an archive or an "
                          "http(s) or file URL") from None


def fetch(task: str, source: str | Path, raw_root: str | Path, limits: Limits = Limits()) -> Path:
    """Copy (or download and unpack) ``task``'s corpus into ``<raw_root>/<folder>`` and check every sha256.

    ``source`` is the corpus's folder (or a raw root holding it), a zip or tar archive, or an
    ``http(s)://``/``file://`` URL of one. Files already in place with the right hash are kept;
    the call fails, naming the files, when any is missing or differs. Each file is written under a
    temporary name and renamed, so an interrupted fetch leaves no part of a file under its name;
    ``limits`` bound the download, the extracted bytes and the wait for a server.
    """
    entry = corpus(task)
    raw_root = Path(raw_root)
    target = raw_root / entry.folder
    with tempfile.TemporaryDirectory(prefix="bodega-fetch-") as scratch:
        text = str(source)
        if _is_url(text):
            origin = download(text, Path(scratch), limits)
            shown = shown_url(text)
        else:
            origin = shown = Path(text).expanduser()
            if not origin.exists():
                raise MissingFileError(f"--from {origin}: no such file or folder; give the {entry.task} corpus's "
                                       f"folder, archive or URL ({entry.url})")
        tree = origin if origin.is_dir() else extract(origin, Path(scratch) / "unpacked", entry.files, limits)
        try:
            found = _locate(entry, tree)
            check = check_folder(entry, found)
        except MissingFileError as error:
            raise MissingFileError(str(error).replace(str(tree), str(shown))) from None
        if not check.ok:
            raise BodegaError(_describe(check, entry, found).replace(str(tree), str(shown)))
        if found.resolve() != target.resolve():
            _put_in_place(entry, found, target, raw_root)
    check = check_folder(entry, target)
    if not check.ok:
        raise BodegaError(_describe(check, entry, target))
    return target


def verify_raw(task: str, source: str, raw: str | Path) -> None:
    """Refuse a raw folder of the manifest's source whose listed files are missing or differ (a fetch
    interrupted, a file damaged): converting it would give other rows without a word. Every listed file is
    checked, whichever of them is there: a copy without the corpus's top file (a licence file left out) is
    checked all the same, against the folder holding most of the listed files. A folder holding none of them is
    left to the converter, which names the file it needs first and where to get it."""
    entry = corpus(task)
    if source.lower() != entry.source.lower():
        return
    raw = Path(raw)
    candidates = (raw, raw / entry.folder, raw / Path(entry.folder).name)
    held = {candidate: sum((candidate / rel).is_file() for rel in entry.files) for candidate in candidates}
    folder = max(candidates, key=held.__getitem__)
    if not held[folder]:
        return
    check = check_folder(entry, folder)
    if not check.ok:
        raise BodegaError(f"{_describe(check, entry, folder)}, or fetch it again (bodega data fetch --task "
                          f"{entry.task} --from PATH_OR_URL); --skip-hash-check converts another copy on purpose")
