"""FC (fact checking) as ``evidence ~ claim`` pairs; label 1 = REFUTES (non-credible), 0 = SUPPORTS.

FEVER claims labelled NOT ENOUGH INFO are skipped and counted, as in BODEGA. Penn-Treebank bracket tokens
(``-LRB-`` ...) become brackets and text is NFC-normalised, as BODEGA does for Wikipedia.

* ``fever`` (BODEGA's source): ``train.jsonl`` forms train, ``shared_task_dev.jsonl`` the
  test pool; the Wikipedia dump is ``wiki-pages/wiki-pages/wiki-NNN.jsonl`` (or
  ``wiki-pages/wiki-NNN.jsonl``). Each distinct evidence set of a claim gives one row: the
  page title (underscores as spaces) plus ``.`` whenever the page changes, then the
  sentences, joined by spaces; the id is ``Wikipedia:`` + the titles joined by ``/``. As in
  BODEGA, an evidence set stops at its first sentence missing from the dump and is kept if
  anything was found. Evidence sets keep their order of first appearance (BODEGA iterated
  over a Python set, whose order changes between runs). Only the pages that some claim cites
  are held in memory.
* ``feversymmetric`` (the FEVER-derived set this project's corpora hold): train =
  ``symmetric_v0.2/fever_symmetric_dev.jsonl``, pool = ``symmetric_v0.2/fever_symmetric_test.jsonl``
  (under 800 rows: small-pool rule). Train rows whose claim also occurs in the pool are
  dropped. The v0.1 files are not read: their pairs are the same FEVER pairs released
  again in v0.2 dev and test, so using them would leak pool pairs into train. There is no
  page title, so the evidence is the sentence alone; the id is ``FeverSymmetric:<id>``.
"""
from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

from tqdm import tqdm

from bodega.data.converters.common import RawDataError, drop_tabs, field, read_jsonl_strict, require_files
from bodega.data.splits import Splits, split_attack_dev
from bodega.data.tsv import Example
from bodega.tasks import join_pair

log = logging.getLogger(__name__)

LABELS = {"REFUTES": 1, "SUPPORTS": 0}
SKIPPED_LABELS = {"NOT ENOUGH INFO"}
_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]"}

FEVER_CORPUS = ("FEVER 1.0: train.jsonl, shared_task_dev.jsonl and the wiki-pages/ dump, published at "
                "https://fever.ai/dataset/fever.html")
SYMMETRIC_CORPUS = ("FEVER Symmetric (symmetric_v0.2/fever_symmetric_dev.jsonl and _test.jsonl), published at "
                    "https://github.com/TalSchuster/FeverSymmetric")
SYMMETRIC_TRAIN = "symmetric_v0.2/fever_symmetric_dev.jsonl"
SYMMETRIC_POOL = "symmetric_v0.2/fever_symmetric_test.jsonl"


def normalise(text: str) -> str:
    """FEVER's bracket tokens (``-LRB-`` ...) as brackets, NFC-normalised, so that claims, evidence and titles
    compare.
    """
    for token, bracket in _BRACKETS.items():
        text = text.replace(token, bracket)
    return unicodedata.normalize("NFC", text)


def _label(record: dict, where: str) -> int | None:
    value = field(record, "label", where)
    if value in SKIPPED_LABELS:
        return None
    if value not in LABELS:
        raise RawDataError(f"{where}: label {value!r} is not one of SUPPORTS, REFUTES, NOT ENOUGH INFO")
    return LABELS[value]


def _text(record: dict, key: str, where: str) -> str:
    value = field(record, key, where)
    if not isinstance(value, str):
        raise RawDataError(f"{where}: field {key!r} must be a string")
    return value


# --- FeverSymmetric --------------------------------------------------------------------------

def _symmetric_rows(path: Path) -> list[tuple[str, Example]]:
    """(claim, row) pairs; the claim is kept apart because evidence may itself contain ``' ~ '``."""
    rows = []
    for number, record in read_jsonl_strict(path):
        where = f"{path}:{number}"
        label = _label(record, where)
        if label is None:
            raise RawDataError(f"{where}: FEVER Symmetric has only SUPPORTS and REFUTES pairs")
        evidence_key = "evidence_sentence" if "evidence_sentence" in record else "evidence"
        evidence = normalise(_text(record, evidence_key, where))
        claim = normalise(_text(record, "claim", where))
        rows.append((claim, Example(label, f"FeverSymmetric:{field(record, 'id', where)}",
                                    join_pair(drop_tabs(evidence), drop_tabs(claim)))))
    return rows


def convert_feversymmetric(raw: Path) -> Splits:
    """FC from FEVER Symmetric: train from its dev file less claims in the pool, pool from its test file."""
    raw = Path(raw)
    require_files(raw, [SYMMETRIC_TRAIN, SYMMETRIC_POOL], SYMMETRIC_CORPUS)
    pool_pairs = _symmetric_rows(raw / SYMMETRIC_POOL)
    pool = [row for _, row in pool_pairs]
    pool_claims = {claim for claim, _ in pool_pairs}
    candidates = _symmetric_rows(raw / SYMMETRIC_TRAIN)
    train = [row for claim, row in candidates if claim not in pool_claims]
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [
        f"train = {SYMMETRIC_TRAIN} ({len(candidates)} pairs, {len(candidates) - len(train)} dropped because "
        f"their claim is in the pool); pool = {SYMMETRIC_POOL} ({len(pool)} pairs)", note])


# --- FEVER + Wikipedia -----------------------------------------------------------------------

def _wiki_files(raw: Path) -> list[Path]:
    for folder in (raw / "wiki-pages" / "wiki-pages", raw / "wiki-pages"):
        files = sorted(folder.glob("wiki-*.jsonl"))
        if files:
            return files
    raise RawDataError(f"{raw / 'wiki-pages'} holds no wiki-NNN.jsonl files. Needed: {FEVER_CORPUS}")


def _claims(path: Path) -> tuple[list[tuple[str, int, str, list]], int]:
    """(where, label, claim, evidence sets) of every SUPPORTS/REFUTES claim, and the number skipped."""
    claims, skipped = [], 0
    for number, record in read_jsonl_strict(path):
        where = f"{path}:{number}"
        label = _label(record, where)
        if label is None:
            skipped += 1
            continue
        evidence = field(record, "evidence", where)
        if not isinstance(evidence, list) or not all(isinstance(s, list) for s in evidence):
            raise RawDataError(f"{where}: 'evidence' must be a list of evidence sets")
        for evidence_set in evidence:
            for item in evidence_set:
                if not (isinstance(item, list) and len(item) == 4 and isinstance(item[2], str)
                        and isinstance(item[3], int)):
                    raise RawDataError(f"{where}: evidence item {item!r} is not "
                                       "[annotation id, evidence id, page title, sentence number]")
        claims.append((where, label, _text(record, "claim", where), evidence))
    return claims, skipped


def _wiki_sentences(files: list[Path], titles: set[str]) -> dict[str, dict[int, str]]:
    """Sentences of the cited pages only, keyed by normalised title and sentence number."""
    pages: dict[str, dict[int, str]] = {}
    for path in tqdm(files, desc="wiki-pages", unit="file"):
        for number, record in read_jsonl_strict(path):
            where = f"{path}:{number}"
            page, lines = field(record, "id", where), field(record, "lines", where)
            if page == "" or lines == "":
                continue
            title = normalise(page)
            if title not in titles:
                continue
            sentences = {}
            for line in lines.split("\n"):
                parts = line.split("\t")
                if parts[0].isdigit() and len(parts) > 1:
                    sentences[int(parts[0])] = normalise(parts[1])
            pages[title] = sentences
    return pages


def _evidence_rows(claims, pages: dict[str, dict[int, str]]) -> tuple[list[Example], int]:
    rows, incomplete = [], 0
    for _, label, claim, evidence in claims:
        sets: dict[str, str] = {}  # evidence text -> source titles, first appearance order
        for evidence_set in evidence:
            parts, titles, previous = [], [], ""
            for _, _, page, sentence in evidence_set:
                title = normalise(page)
                if sentence not in pages.get(title, {}):
                    incomplete += 1
                    break
                if title != previous:
                    titles.append(title)
                    parts.append(title.replace("_", " ") + ".")
                parts.append(pages[title][sentence])
                previous = title
            if parts:
                sets.setdefault(" ".join(parts), "/".join(titles))
        for text, titles in sets.items():
            rows.append(Example(label, f"Wikipedia:{titles}", join_pair(drop_tabs(text), drop_tabs(claim))))
    return rows, incomplete


def convert_fever(raw: Path) -> Splits:
    """FC from FEVER 1.0: claims with their evidence sentences from the wiki dump; the pool from shared_task_dev."""
    raw = Path(raw)
    require_files(raw, ["train.jsonl", "shared_task_dev.jsonl", "wiki-pages"], FEVER_CORPUS)
    train_claims, train_skipped = _claims(raw / "train.jsonl")
    pool_claims, pool_skipped = _claims(raw / "shared_task_dev.jsonl")
    cited = {normalise(item[2]) for _, _, _, evidence in train_claims + pool_claims
             for evidence_set in evidence for item in evidence_set}
    pages = _wiki_sentences(_wiki_files(raw), cited)
    train, missing_train = _evidence_rows(train_claims, pages)
    pool, missing_pool = _evidence_rows(pool_claims, pages)
    attack, dev, note = split_attack_dev(pool)
    notes = [f"train = train.jsonl ({len(train_claims)} claims, {len(train)} evidence rows); pool = "
             f"shared_task_dev.jsonl ({len(pool_claims)} claims, {len(pool)} rows); NOT ENOUGH INFO claims "
             f"skipped: {train_skipped} in train, {pool_skipped} in the pool", note]
    if missing_train + missing_pool:
        notes.append(f"{missing_train + missing_pool} evidence sets cite a sentence missing from the dump and "
                     "were cut before it (BODEGA's rule)")
        log.warning(notes[-1])
    return Splits(train, attack, dev, notes)
