"""Every user mistake in ``bodega atomeval`` is one line naming the file or option, exit 2, no traceback; every
count is validated (``--n-claims -1`` once judged one claim)."""
from __future__ import annotations

import json

import pytest

from bodega.cli import main

EVIDENCE = "Savages is a 2012 American crime thriller film directed by Oliver Stone ."


@pytest.fixture
def fc(tmp_path):
    """A prepared FC folder with two refuted claims and a verifier folder holding only its metadata."""
    data = tmp_path / "FC"
    data.mkdir()
    (data / "attack.tsv").write_text(f"1\tc0\t{EVIDENCE} ~ Savages is a French film .\n"
                                     f"1\tc1\t{EVIDENCE} ~ Savages is a German film .\n")
    verifier = tmp_path / "FC-KW"
    verifier.mkdir()
    (verifier / "victim.json").write_text(json.dumps({"name": "FC-KW", "kind": "BERT", "task": "FC",
                                                      "weights_hash": "kw", "precision": "fp32", "n_params": 1}))
    return data, verifier


def _mistakes(tmp_path, data, verifier) -> dict[str, tuple[list[str], str]]:
    """Each mistake: its arguments and what its one line must name."""
    missing = str(tmp_path / "nowhere")
    tables = ["tables", "--data", str(data), "--verifier", str(verifier), "--verdicts", str(tmp_path / "v"),
              "--out", str(tmp_path / "out")]
    return {
        "unknown extractor": (["gold-accuracy", "--extractor", "foo"], "'foo'"),
        "missing extractor model": (["gold-accuracy", "--extractor", f"transformers:{missing}"], missing),
        "missing data": (["tables", "--data", missing, "--verifier", str(verifier)], f"{missing}/attack.tsv"),
        "rules have no cache": (["rewrite", "--rewriter", "rules", "--data", str(data), "--cost",
                                 str(tmp_path / "c.json")], "--rewriter rules"),
        "missing saved rewrites": ([*tables, "--rewriter", f"saved:{missing}"], f"saved:{missing}"),
        "missing runs to compare": (["compare-rewriters", "--runs", missing], f"--runs {missing}"),
        "a label twice": (["compare-rewriters", "--runs", "a=/x", "a=/y"], "--runs: label 'a'"),
        "no tables run": (["main-table", "--tables", missing, "--verifiers", str(verifier), "--rewriters", "rules",
                           "--out", str(tmp_path / "m.json")], f"--tables {missing}"),
        "missing attack runs": (["attack-vasr", "--runs", missing], f"--runs {missing}"),
        "unknown decode-speed model": (["decode-speed", "--rewriter", "foo", "--data", str(data)], "'foo'"),
        "an endpoint to time": (["decode-speed", "--rewriter", "openai:m", "--data", str(data)],
                                "--rewriter openai:m"),
        "pairs without their columns": (["agreement", "--pairs", _csv(tmp_path / "a.csv", "a,b\n1,2\n"),
                                         "--no-semantic"], "a.csv: no column original_samples"),
        "pairs without rows": (["agreement", "--pairs", _csv(tmp_path / "h.csv", ",".join(COLUMNS) + "\n"),
                                "--no-semantic"], "h.csv: no pairs"),
        "a verifier of another task": (["tables", "--data", str(data), "--verifier", _victim(tmp_path, "PR2"),
                                        "--rewriter", "rules"], "a victim trained for PR2"),
    }


COLUMNS = ("original_samples", "adversarial_samples", "agreed_labels")


def _csv(path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def _victim(tmp_path, task: str) -> str:
    """A victim folder of ``task`` holding only its metadata."""
    folder = tmp_path / f"{task}-KW"
    folder.mkdir()
    (folder / "victim.json").write_text(json.dumps({"name": f"{task}-KW", "kind": "BERT", "task": task,
                                                    "weights_hash": "kw", "precision": "fp32", "n_params": 1}))
    return str(folder)


MISTAKES = ["unknown extractor", "missing extractor model", "missing data", "rules have no cache",
            "missing saved rewrites", "missing runs to compare", "a label twice", "no tables run",
            "missing attack runs", "unknown decode-speed model", "an endpoint to time", "pairs without their columns",
            "pairs without rows", "a verifier of another task"]


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_is_one_line_naming_the_file_or_option(mistake, fc, tmp_path, capsys):
    arguments, named = _mistakes(tmp_path, *fc)[mistake]
    code = main(["atomeval", *arguments])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("bodega atomeval: error: ") and named in err, err


@pytest.mark.parametrize("arguments, option", [
    (["tables", "--n-claims", "-1"], "--n-claims"),
    (["rewrite", "--rewriter", "rules", "--cost", "c.json", "--n-claims", "-1"], "--n-claims"),
    (["experiment", "--rewriters", "rules", "--verifiers", "v", "--out", "o", "--n-claims", "-1"], "--n-claims"),
    (["tables", "--batch-size", "0"], "--batch-size"),
    (["tables", "--threads", "-2"], "--threads"),
    (["agreement", "--pairs", "p.csv", "--sample", "-3"], "--sample"),
    (["gold-accuracy", "--per-split", "-1"], "--per-split"),
    (["decode-speed", "--new-tokens", "0"], "--new-tokens"),
    (["compare-rewriters", "--runs", "r", "--cases", "-1"], "--cases"),
    (["tables", "--families", "omission,nosuch"], "--families"),
    (["tables", "--split", "nosuch"], "--split"),
])
def test_every_count_and_name_is_checked_when_parsed(arguments, option, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["atomeval", *arguments])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and option in err[-1] and "Traceback" not in "\n".join(err), err


def test_the_library_refuses_a_negative_number_of_claims(fc):
    from bodega.atomeval.fever import refuted_claims
    from bodega.errors import BodegaError

    data, _ = fc
    assert len(refuted_claims(data, "attack", None)) == 2 and len(refuted_claims(data, "attack", 1)) == 1
    with pytest.raises(BodegaError, match="--n-claims -1"):
        refuted_claims(data, "attack", -1)
