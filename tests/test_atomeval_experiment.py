"""``bodega atomeval experiment`` end to end on a tiny random chat model: rewrites and verdicts are kept, so a
second run judges again without generating and without the verifier's weights."""
from __future__ import annotations

import json

import numpy as np
import pytest

from atomeval_fakes import tiny_chat_model, word_piece_tokenizer

from bodega.errors import BodegaError
from bodega.tasks import split_pair

EVIDENCE = "Savages is a 2012 American crime thriller film directed by Oliver Stone ."
CLAIMS = ["Savages was exclusively a German film .", "Savages was directed by Oliver Stone in 2011 .",
          "Savages is a French thriller ."]


class KeywordVictim:
    """Refuted (1) unless the claim mentions 'American' or 'Stone'; counts the texts it is asked about."""

    name, task, weights_hash = "FC-KW", "FC", "kw-weights"

    def __init__(self):
        self.asked = 0

    def predict_proba(self, texts):
        self.asked += len(texts)
        refuted = [0.0 if any(w in split_pair(t)[1] for w in ("American", "Stone")) else 1.0 for t in texts]
        return np.array([[1 - p, p] for p in refuted])


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "FC"
    data.mkdir()
    rows = [f"1\tc{i}\t{EVIDENCE} ~ {claim}" for i, claim in enumerate(CLAIMS)]
    rows.append(f"0\ts0\t{EVIDENCE} ~ Savages is a film .")
    (data / "attack.tsv").write_text("\n".join(rows) + "\n")
    verifier = tmp_path / "models" / "FC-KW"
    verifier.mkdir(parents=True)
    (verifier / "victim.json").write_text(json.dumps({"name": "FC-KW", "kind": "BERT", "task": "FC",
                                                      "weights_hash": "kw-weights", "precision": "fp32",
                                                      "n_params": 1, "base_role": "keywords"}))
    (verifier / "metrics.json").write_text(json.dumps({"attack": {"accuracy": 0.75, "f1": 0.8},
                                                       "attack_quality": {"roc_auc": 0.9}}))
    _, tokenizer = word_piece_tokenizer(tmp_path / "tok")
    model = tiny_chat_model(tmp_path / "chat", tokenizer)
    return data, verifier, model


def _plan(tmp_path, data, verifier, model, **changes):
    from bodega.atomeval.pipeline import ExperimentPlan

    return ExperimentPlan(rewriters=["rules", f"transformers:{model}"], verifiers=[verifier], data=data,
                          families=("omission", "advadd"), tables=tmp_path / "tables",
                          rewrite_cache=tmp_path / "rewrites.jsonl", verdicts=tmp_path / "verdicts",
                          costs=tmp_path, precision="fp32", batch_size=4, with_surface=False, **changes)


def test_the_experiment_generates_judges_and_tabulates_then_resumes_without_the_model(setup, tmp_path):
    from bodega.atomeval.pipeline import run_experiment
    from bodega.report.atomeval_comparison import main_table

    data, verifier, model = setup
    victim = KeywordVictim()
    result = run_experiment(_plan(tmp_path, data, verifier, model), main_table, tmp_path / "main.json",
                            verifier_loader=lambda folder: victim)
    table = result["verifiers"]["FC-KW"]
    assert {(r["rewriter"], r["family"]) for r in table["metrics"]} == {
        (r, f) for r in ("rules", "chat") for f in ("omission", "advadd")}
    assert all(r["claims"] == 2 for r in table["metrics"])  # claim 1 mentions Stone: not first refuted
    assert (tmp_path / "cost-chat-fp32.json").exists() and json.loads((tmp_path / "main.json").read_text())["case"]
    cached = (tmp_path / "rewrites.jsonl").read_text()
    verdicts = (tmp_path / "verdicts" / "kw-weights-fp32.jsonl").read_text()
    assert len(cached.splitlines()) == 2 * len(CLAIMS) and victim.asked > 0

    def no_weights(folder):
        raise AssertionError("the saved verdicts should answer every text")

    again = run_experiment(_plan(tmp_path, data, verifier, model, rejudge=True), main_table, verifier_loader=no_weights)
    assert again["verifiers"]["FC-KW"]["metrics"] == table["metrics"]
    assert (tmp_path / "rewrites.jsonl").read_text() == cached  # nothing generated again
    assert (tmp_path / "verdicts" / "kw-weights-fp32.jsonl").read_text() == verdicts


def test_a_verifier_without_weights_or_verdicts_names_the_fix(setup, tmp_path):
    from bodega.atomeval.verdicts import VerdictVerifier
    from bodega.errors import MissingFileError

    _, verifier, _ = setup
    judge = VerdictVerifier(verifier, tmp_path / "verdicts")
    with pytest.raises(MissingFileError, match="put the trained weights"):
        judge.predict([f"{EVIDENCE} ~ {CLAIMS[0]}"])


def test_verdicts_are_keyed_by_text_and_the_first_one_stays(setup, tmp_path):
    from bodega.atomeval.verdicts import Verdict, VerdictFile, VerdictVerifier

    _, verifier, _ = setup
    victim = KeywordVictim()
    judge = VerdictVerifier(verifier, tmp_path / "v", loader=lambda folder: victim)
    texts = [f"{EVIDENCE} ~ {CLAIMS[0]}", f"{EVIDENCE} ~ {CLAIMS[1]}", f"{EVIDENCE} ~ {CLAIMS[0]}"]
    assert judge.predict(texts).tolist() == [1, 0, 1] and victim.asked == 2  # a repeated text is asked once
    assert judge.predict(texts[:1]).tolist() == [1] and victim.asked == 2 and judge.saved == 1
    saved = VerdictFile(judge.file.path)
    assert saved.add_many(texts[:1], [Verdict(0)]) == 0 and saved.get(texts[0]) == Verdict(1, 1.0)


def test_recovered_verdicts_come_from_predictions_and_flips_and_refuse_two_verifiers():
    from bodega.atomeval.fever import Claim
    from bodega.atomeval.verdicts import Verdict, recovered_verdicts

    claims = [Claim("c0", CLAIMS[0], EVIDENCE)]
    predictions = [{"id": "c0", "predicted": 1, "p_positive": 0.9}]
    record = {"id": "c0", "claim": CLAIMS[0], "evidence": EVIDENCE, "rewrite": "Savages was a film .",
              "flip": True, "valid": False}
    unjudged = {**record, "rewrite": "Savages was a French film .", "flip": False, "valid": None}
    texts, verdicts = recovered_verdicts(claims, predictions, [record, unjudged])
    assert verdicts == [Verdict(1, 0.9), Verdict(0)] and texts[1].endswith("Savages was a film .")
    with pytest.raises(BodegaError, match="not one verifier's"):
        recovered_verdicts(claims, predictions, [record, {**record, "flip": False}])


class PrecisionVictim(KeywordVictim):
    """The keyword verifier as :func:`bodega.victims.load_victim` gives it: computing in the precision asked."""

    def __init__(self, precision):
        super().__init__()
        self.precision = precision or "fp32"


@pytest.fixture
def bf16_verifier(setup, monkeypatch):
    """The setup's verifier recorded in bf16, its weights present, loaded through load_victim."""
    import bodega.victims
    import bodega.victims.modeldir

    _, verifier, _ = setup
    info = json.loads((verifier / "victim.json").read_text())
    (verifier / "victim.json").write_text(json.dumps({**info, "precision": "bf16"}))
    monkeypatch.setattr(bodega.victims.modeldir, "weights_problem", lambda folder: None)
    return verifier


def test_verdicts_are_computed_in_the_precision_their_file_names(bf16_verifier, tmp_path, monkeypatch):
    import bodega.victims
    from bodega.atomeval.verdicts import VerdictVerifier

    asked = []
    monkeypatch.setattr(bodega.victims, "load_victim",
                        lambda folder, profile="cpu", precision=None: asked.append(precision) or
                        PrecisionVictim(precision))
    judge = VerdictVerifier(bf16_verifier, tmp_path / "verdicts")
    assert judge.predict([f"{EVIDENCE} ~ {CLAIMS[0]}"]).tolist() == [1]
    assert asked == ["bf16"] and judge.file.path.name == "kw-weights-bf16.jsonl"
    assert len(judge.file.path.read_text().splitlines()) == 1


def test_a_verifier_computing_in_another_precision_never_writes_to_the_file(bf16_verifier, tmp_path, monkeypatch):
    import bodega.victims
    from bodega.atomeval.verdicts import VerdictVerifier
    from bodega.errors import BodegaError

    monkeypatch.setattr(bodega.victims, "load_victim", lambda folder, **options: PrecisionVictim("fp32"))
    judge = VerdictVerifier(bf16_verifier, tmp_path / "verdicts")
    with pytest.raises(BodegaError, match="computes in fp32, but its verdicts in .*kw-weights-bf16.jsonl"):
        judge.predict([f"{EVIDENCE} ~ {CLAIMS[0]}"])
    assert not judge.file.path.exists()
