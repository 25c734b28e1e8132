"""RD (rumour detection); label 1 = rumour. The Charlie Hebdo event is held out, as in BODEGA.

Tweets are cleaned as BODEGA does (:func:`~bodega.data.converters.common.clean_tweet`);
the row id is ``https://twitter.com/twitter/status/<first tweet id>`` (BODEGA's ids keep the
file's ``.json`` suffix after the tweet id; here it is dropped so that the URL is valid). Rows are ordered
rumours first, then non-rumours, each by tweet or thread id (BODEGA's sorted folder names).

* ``augmented`` (BODEGA's source, the augmented rumour data set): ``<event>/rumours|non-rumours/
  <thread>/source-tweets|reactions/<tweet>.json``. A row is a whole thread: the source
  tweets then the reactions, each sorted by file name, one tweet per line (``full_text``
  when present, else ``text``). Threads of ``charliehebdo`` form the test pool, the other
  events (sorted by name) train; attack = every ``len(pool)//400``-th pool row.
* ``rpdnn`` (the RPDNN leave-one-event-out folds this project's corpora hold): CSV files
  ``<event>/all_rnr_{train,heldout,test}_set_combined.csv`` with ``tweet_id, created_at,
  text, label, ...``. A row is one source tweet (no replies). The ``charliehebdo`` fold is
  used: its test file forms the pool (under 800 rows: small-pool rule); its train and
  heldout files form train, keeping the first row of a repeated tweet id and dropping every
  tweet whose id or cleaned text also occurs in the pool (the folds share some tweets).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from bodega.data.converters.common import RawDataError, clean_tweet, drop_tabs, require_files
from bodega.data.splits import Splits, split_attack_dev
from bodega.data.tsv import Example

TEST_EVENT = "charliehebdo"
STATUS_URL = "https://twitter.com/twitter/status/"
AUGMENTED_CORPUS = ("the augmented rumour data set (aug-rnr-data_filtered: <event>/rumours|non-rumours/<thread>/"
                    "source-tweets|reactions/*.json), published at https://zenodo.org/record/3249977")
RPDNN_CORPUS = ("the RPDNN leave-one-event-out folds (loocv_set_20191002/<event>/all_rnr_*_set_combined.csv), "
                "published at https://github.com/jerrygaoLondon/RPDNN")
RPDNN_COLUMNS = ("tweet_id", "text", "label")
KINDS = (("rumours", 1), ("non-rumours", 0))


def _ordered(rows: list[tuple[int, str, Example]]) -> list[Example]:
    """Rumours first, then non-rumours, each sorted by id string (BODEGA's sorted folder names)."""
    return [row for _, _, row in sorted(rows, key=lambda r: (-r[0], r[1]))]


# --- RPDNN CSV folds -------------------------------------------------------------------------

def _read_csv(path: Path) -> list[tuple[str, Example]]:
    """(cleaned text, row) for every tweet; a malformed row raises with file:line."""
    rows = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in RPDNN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise RawDataError(f"{path}:1: header lacks column(s) {', '.join(missing)}")
        start = reader.line_num + 1
        for record in reader:
            where = f"{path}:{start}"
            start = reader.line_num + 1
            if None in record or any(record[c] is None for c in RPDNN_COLUMNS):
                raise RawDataError(f"{where}: expected {len(reader.fieldnames)} fields")
            ident, label = record["tweet_id"].strip(), record["label"].strip()
            if not ident.isdigit():
                raise RawDataError(f"{where}: tweet_id {ident!r} is not a number")
            if label not in ("0", "1"):
                raise RawDataError(f"{where}: label must be 0 or 1, found {label!r}")
            text = drop_tabs(clean_tweet(record["text"]))
            rows.append((text, Example(int(label), STATUS_URL + ident, text)))
    return rows


def convert_rpdnn(raw: Path, event: str = TEST_EVENT) -> Splits:
    """RD from the RPDNN fold of ``event``: its train + heldout files (less repeats and pool tweets) for
    train, its test file as the pool."""
    raw = Path(raw)
    names = [f"{event}/all_rnr_{part}_set_combined.csv" for part in ("train", "heldout", "test")]
    require_files(raw, names, RPDNN_CORPUS)
    pool_rows = _read_csv(raw / names[2])
    pool = _ordered([(row.label, row.id, row) for _, row in pool_rows])
    pool_ids, pool_texts = {row.id for row in pool}, {text for text, _ in pool_rows}
    seen: set[str] = set()
    candidates, dropped, repeated = [], 0, 0
    for name in names[:2]:
        for text, row in _read_csv(raw / name):
            if row.id in seen:
                repeated += 1
                continue
            seen.add(row.id)
            if row.id in pool_ids or text in pool_texts:
                dropped += 1
                continue
            candidates.append((row.label, row.id, row))
    train = _ordered(candidates)
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [
        f"RPDNN fold {event}: train = its train + heldout files ({len(train)} tweets, after skipping {repeated} "
        f"repeated tweet ids and dropping {dropped} tweets that also occur in the pool); pool = its test file "
        f"({len(pool)} tweets of {event}); "
        "one source tweet per row, no replies", note])


# --- augmented rumour threads ----------------------------------------------------------------

def _visible(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir() if not p.name.startswith(".")), key=lambda p: p.name)


def _tweet_text(path: Path) -> str:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RawDataError(f"{path}:{error.lineno}: invalid JSON ({error.msg})") from error
    text = record.get("full_text", record.get("text")) if isinstance(record, dict) else None
    if not isinstance(text, str):
        raise RawDataError(f"{path}:1: a tweet needs a 'full_text' or 'text' string")
    return clean_tweet(text)


def _thread(folder: Path, label: int) -> tuple[int, str, Example]:
    sources = folder / "source-tweets"
    if not sources.is_dir() or not _visible(sources):
        raise RawDataError(f"{folder}: thread has no source-tweets/*.json")
    tweets = _visible(sources)
    if (folder / "reactions").is_dir():
        tweets += _visible(folder / "reactions")
    text = "\n".join(_tweet_text(path) for path in tweets)
    return label, folder.name, Example(label, STATUS_URL + tweets[0].stem, drop_tabs(text))


def convert_augmented(raw: Path, test_event: str = TEST_EVENT) -> Splits:
    """RD from the augmented rumour threads: each thread's source tweet and reactions as one row;
    ``test_event``'s threads are the pool."""
    raw = Path(raw)
    require_files(raw, [test_event], AUGMENTED_CORPUS)
    train: list[Example] = []
    pool: list[Example] = []
    events = [e for e in _visible(raw) if e.is_dir()]
    for event in events:
        threads = []
        for kind, label in KINDS:
            if not (event / kind).is_dir():
                raise RawDataError(f"{event} lacks the {kind}/ folder. Needed: {AUGMENTED_CORPUS}")
            threads += [_thread(folder, label) for folder in _visible(event / kind) if folder.is_dir()]
        (pool if event.name == test_event else train).extend(_ordered(threads))
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [
        f"train = threads of {', '.join(e.name for e in events if e.name != test_event)}; "
        f"pool = the {len(pool)} threads of {test_event}", note])
