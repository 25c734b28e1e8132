"""Moving a corpus's bytes: a bounded download, a bounded extraction of the listed files, a copy by rename.

Every limit is an error naming the option that raises it, never a silent cut: a download
stops past ``max_bytes``, after ``timeout`` seconds without an answer, and after ``deadline`` seconds in all
(a server trickling a byte at a time never falls silent); only the archive's
members that are corpus files (their path ends with a listed file's) are extracted, as
regular files, and the bytes written stop at ``max_bytes``; a copy goes to a hidden temporary
name beside its destination and is renamed over it, so a kill leaves the old file or the new
one, never a part, and a destination that is a symbolic link is replaced, not written through.
"""
from __future__ import annotations

import errno
import http.client
import shutil
import tarfile
import time
import urllib.parse
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Iterable

from bodega.errors import BodegaError
from bodega.io import replacing

MIB = 1 << 20
BLOCK = MIB


@dataclass(frozen=True)
class Limits:
    """How far a fetch may go: bytes downloaded, bytes extracted, seconds waiting for a server, seconds a
    download may take in all."""

    max_download_bytes: int = 2048 * MIB
    max_extract_bytes: int = 2048 * MIB
    timeout: float = 60.0
    deadline: float = 1800.0


def _copy_bounded(source: BinaryIO, handle: BinaryIO, left: int, what: str, option: str) -> int:
    """Copy blocks until the source ends; more than ``left`` bytes is an error naming ``option``."""
    written = 0
    while block := source.read(BLOCK):
        written += len(block)
        if written > left:
            raise BodegaError(f"{what}: more than {option}'s limit ({(left + MIB - 1) // MIB} MiB left); "
                              f"raise {option} if the corpus really is that large")
        handle.write(block)
    return written


def shown_url(url: str) -> str:
    """``url`` as messages and logs may show it: without a password in it (``user:secret@``) or the values of
    its query (a signed link's token), which would otherwise be written to the terminal and any log kept of it."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<a URL that cannot be read>"
    netloc = parts.netloc.rpartition("@")[2]
    if parts.username:
        netloc = f"{parts.username}:***@{netloc}" if parts.password is not None else f"{parts.username}@{netloc}"
    query = "&".join(f"{name}=***" for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _download_body(response, handle: BinaryIO, url: str, limits: Limits) -> None:
    """Copy a response's body as it comes (each read returns what has arrived, so a trickle is seen), stopping
    past ``--max-download-mb`` or once ``--deadline`` seconds have gone since the download began (``url`` as
    :func:`shown_url` shows it)."""
    ends = time.monotonic() + limits.deadline
    read = getattr(response, "read1", response.read)
    written = 0
    while block := read(BLOCK):
        written += len(block)
        if written > limits.max_download_bytes:
            raise BodegaError(f"--from {url}: more than --max-download-mb's limit "
                              f"({limits.max_download_bytes // MIB} MiB); raise --max-download-mb if the corpus "
                              "really is that large")
        handle.write(block)
        if time.monotonic() > ends:
            raise BodegaError(f"--from {url}: not downloaded within --deadline's {limits.deadline:g} seconds "
                              f"({written:,} bytes came); raise --deadline for a slow server, or download it by "
                              "hand and pass the file")


def download(url: str, into: Path, limits: Limits) -> Path:
    """Download ``url`` into ``into``, refusing a body past the limit and a server silent past the timeout."""
    name = Path(urllib.parse.urlparse(url).path).name or "download"
    target = into / name
    shown = shown_url(url)
    try:
        with urllib.request.urlopen(url, timeout=limits.timeout) as response, \
                open(target, "wb") as handle:  # noqa: S310 - the user's URL
            _download_body(response, handle, shown, limits)
    except (OSError, ValueError, http.client.HTTPException) as error:
        reason = str(error or type(error).__name__).replace(url, shown)
        raise BodegaError(f"--from {shown}: cannot download it ({reason}); check the URL "
                          "(or --timeout), or download it by hand and pass the file or folder") from None
    return target


def _corpus_member(name: str, wanted: Iterable[str]) -> str | None:
    """The relative path ``name`` extracts to when it is a corpus file and a plain relative path, else None."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    text = path.as_posix()
    return text if any(text == rel or text.endswith("/" + rel) for rel in wanted) else None


def _members(handle) -> Iterable[tuple[str, int, object]]:
    """(name, size, member) of each regular file in an open zip or tar archive."""
    if isinstance(handle, zipfile.ZipFile):
        return [(info.filename, info.file_size, info) for info in handle.infolist() if not info.is_dir()]
    return [(member.name, member.size, member) for member in handle.getmembers() if member.isfile()]


def extract(archive: Path, into: Path, wanted: Iterable[str], limits: Limits) -> Path:
    """Extract the corpus files of a zip or tar ``archive`` (paths ending with one of ``wanted``) into ``into``."""
    wanted = list(wanted)
    try:
        if zipfile.is_zipfile(archive):
            handle = zipfile.ZipFile(archive)
        elif tarfile.is_tarfile(archive):
            handle = tarfile.open(archive)
        else:
            raise BodegaError(f"{archive}: neither a folder nor a zip or tar archive; give the corpus's folder, "
                              "archive or its download URL")
        with handle:
            left = limits.max_extract_bytes
            for name, size, member in _members(handle):
                relative = _corpus_member(name, wanted)
                if relative is None:
                    continue
                if size > left:
                    raise BodegaError(f"{archive}: member {name} is {size} bytes, more than --max-extract-mb's "
                                      f"limit ({left // MIB} MiB left); raise --max-extract-mb if the corpus "
                                      "really is that large")
                target = into / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                opened = handle.open(member) if isinstance(handle, zipfile.ZipFile) else handle.extractfile(member)
                with opened as source, open(target, "wb") as out:
                    left -= _copy_bounded(source, out, left, f"{archive}: member {name}", "--max-extract-mb")
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise BodegaError(f"{archive}: no room to extract it into {into} ({error.strerror}); free space there "
                              "or point TMPDIR at a larger disk") from None
        raise BodegaError(f"{archive}: cannot read it ({error.strerror or error}); download it again") from None
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError) as error:
        raise BodegaError(f"{archive}: a damaged or unreadable archive ({error or type(error).__name__}); "
                          "download it again") from None
    return into


def copy_replacing(source: Path, destination: Path) -> None:
    """Copy ``source`` to a temporary name beside ``destination``, fsync, and rename it over ``destination``."""
    with replacing(destination) as out, open(source, "rb") as handle:
        shutil.copyfileobj(handle, out, BLOCK)
