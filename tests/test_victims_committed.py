"""Committed victims travel: each loads from its folder with the weights hash recorded at training and predicts
the attack-set probabilities its training recorded (``attack_predictions.jsonl``), on this machine's CPU."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bodega.data import read_tsv
from bodega.layout import VICTIM_INFO
from bodega.records import read_victim_info

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
# the BERT role's LoRA adapters and the BiLSTMs: the decoders load in tens of seconds, tested by their training
FOLDERS = sorted(path.parent for root in ("results/study/models", "results/study-v3/models",
                                          "results/finetuning/lora/models")
                 for path in (ROOT / root).glob(f"*/{VICTIM_INFO}")
                 if (path.parent / "adapter_model.safetensors").is_file() and "-BERT" in path.parent.name
                 or (path.parent / "model.safetensors").is_file() and "BiLSTM" in path.parent.name)


def _mpnet_installed() -> bool:
    from bodega.resources import resolve

    try:
        resolve("mpnet")
    except Exception:  # noqa: BLE001 - any failure to resolve means the resource is not here
        return False
    return True


@pytest.mark.skipif(not FOLDERS, reason="no committed victim folder with weights in this checkout")
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda path: f"{path.parent.parent.name}/{path.name}")
def test_committed_victim_loads_with_its_hash_and_predicts_as_recorded(folder):
    from bodega.victims import load_victim

    info = read_victim_info(folder)
    if info.kind == "BERT" and not _mpnet_installed():
        pytest.skip("the mpnet resource is not installed (bodega resources install --profile cpu)")
    if not (DATA / info.task / "attack.tsv").is_file():
        pytest.skip(f"no prepared {info.task} data under data/ (bodega data prepare-missing)")
    victim = load_victim(folder, profile=info.profile, precision=info.to_dict().get("precision", "fp32"))
    assert victim.weights_hash == info.weights_hash

    recorded_file = folder / "attack_predictions.jsonl"
    if not recorded_file.is_file():
        pytest.skip(f"{folder.name} has no attack_predictions.jsonl to compare with")
    recorded = [json.loads(line) for line in recorded_file.read_text().splitlines()]
    rows = read_tsv(DATA / info.task / "attack.tsv")  # in file order: ids repeat (PR2's are per article)
    assert [row.id for row in rows] == [entry["id"] for entry in recorded]
    texts = [row.text for row in rows]
    # The first batch that training's pass over the whole attack set made (texts ordered by length): in bf16 a
    # text's probability depends on the shape of its batch in the last bits, which can move it by a few hundredths
    # near 0.5, so the check predicts a batch exactly as training did.
    batch = list(next(iter(victim._inference_batches(texts, sorted(range(len(texts)), key=lambda i: len(texts[i]))))))
    probabilities = victim.predict_proba([texts[i] for i in batch])[:, 1]
    recorded = [recorded[i] for i in batch]
    for entry, probability in zip(recorded, probabilities):
        # bf16 on another CPU type rounds differently in the last bits; other weights would move far more
        assert probability == pytest.approx(entry["p_positive"], abs=0.02), entry["id"]
    assert [int(p > 0.5) for p in probabilities] == [entry["predicted"] for entry in recorded]
