"""An AtomEval tables run's files have names and a schema of their own (not an attack run's summary.json and
records.jsonl), and the committed runs of schema 0 are read through the one upgrade path."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bodega.atomeval import run_files
from bodega.errors import BodegaError, MissingFileError
from bodega.layout import ATOMEVAL_RECORDS, ATOMEVAL_SCHEMA, ATOMEVAL_SUMMARY, RECORDS, REWRITES, SUMMARY

COMMITTED = Path(__file__).resolve().parents[1] / "results" / "atomeval" / "tables"
RECORD = {"id": "c1", "family": "omission", "claim": "a", "rewrite": "b", "flip": True, "valid": True}


def test_its_names_are_not_an_attack_runs():
    assert {ATOMEVAL_SUMMARY, ATOMEVAL_RECORDS}.isdisjoint({SUMMARY, RECORDS}) and ATOMEVAL_SCHEMA >= 1


def test_a_family_is_written_under_its_own_names_with_the_schema(tmp_path):
    run_files.write_family(tmp_path, "omission", {"rewriter": "rules", "verifier": "v"}, [RECORD],
                           [{k: RECORD[k] for k in ("id", "family", "claim", "rewrite")}])
    folder = tmp_path / "omission"
    assert sorted(p.name for p in folder.iterdir()) == sorted([ATOMEVAL_SUMMARY, ATOMEVAL_RECORDS, REWRITES])
    assert json.loads((folder / ATOMEVAL_SUMMARY).read_text())["schema"] == ATOMEVAL_SCHEMA
    run = run_files.read_run(tmp_path)["omission"]
    assert run.records == [RECORD] and run.summary["rewriter"] == "rules"
    assert run_files.is_complete(tmp_path, "omission")


def test_a_run_of_schema_0_is_upgraded_on_reading(tmp_path):
    folder = tmp_path / "advadd"
    folder.mkdir()
    (folder / RECORDS).write_text(json.dumps(RECORD) + "\n")
    (folder / SUMMARY).write_text(json.dumps({"rewriter": "rules", "verifier": "v"}))
    assert run_files.families(tmp_path) == ["advadd"]
    assert run_files.read_summary(tmp_path, "advadd") == {"rewriter": "rules", "verifier": "v", "schema": 1}
    assert run_files.read_rewrites(tmp_path, "advadd") == [RECORD]  # no rewrites.jsonl: the records


def test_a_newer_schema_or_a_missing_run_is_one_line_naming_the_file(tmp_path):
    run_files.write_family(tmp_path, "omission", {"rewriter": "rules"}, [RECORD], [])
    path = tmp_path / "omission" / ATOMEVAL_SUMMARY
    path.write_text(json.dumps({"schema": ATOMEVAL_SCHEMA + 1, "rewriter": "rules"}))
    with pytest.raises(BodegaError, match=f"{path}: AtomEval schema {ATOMEVAL_SCHEMA + 1} is newer"):
        run_files.read_summary(tmp_path, "omission")
    with pytest.raises(MissingFileError, match="run `bodega atomeval tables` first"):
        run_files.read_run(tmp_path / "absent")


def test_the_committed_runs_read_through_the_upgrade():
    runs = sorted({p.parent.parent for p in COMMITTED.glob(f"*/*/*/{SUMMARY}")})
    assert len(runs) >= 4
    for run_dir in runs:
        for family, run in run_files.read_run(run_dir).items():
            assert run.summary["schema"] == ATOMEVAL_SCHEMA and run.summary["family"] == family
            assert len(run.records) == run.summary["claims"] and run.records[0]["family"] == family
