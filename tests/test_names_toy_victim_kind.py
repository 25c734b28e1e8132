"""A new victim kind is one file: this one defines a toy kind (a bag of hashed words), registers it, and the
package trains it, records it under its canonical name, loads it back and attacks it, as it does its own."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
import torch

from attack_fakes import OnesSemantic
from bodega.attacks import run_attack
from bodega.errors import UnknownNameError
from bodega.experiments import parse_grid
from bodega.io import atomic_write_bytes, atomic_write_json
from bodega.victims import VICTIM_KINDS, VictimKind, load_victim, register_victim_kind, train_victim
from bodega.victims.torch_victim import TorchVictim
from victims_fixtures import write_task_data

BUCKETS = 256


class BagOfWordsVictim(TorchVictim):
    """Logistic regression over the summed embeddings of hashed words; no tokenizer, so nothing is trimmed."""

    kind = "BagOfWords"
    train_batch_size = 8
    supports_bf16 = False
    trim_tokenizer = None

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        words = [[zlib.crc32(w.lower().encode()) % BUCKETS for w in text.split()] or [0] for text in texts]
        offsets = torch.tensor([0] + [len(w) for w in words[:-1]]).cumsum(0)
        return {"ids": torch.tensor([i for w in words for i in w]), "offsets": offsets}

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.model(batch["ids"], batch["offsets"])

    def make_optimizer(self, total_steps: int, lr: float | None = None):
        return torch.optim.Adam(self.parameters_to_train(), lr=lr or 0.1), None

    @classmethod
    def create(cls, task: str, profile: str, seed: int, base_model=None, quantize=None) -> "BagOfWordsVictim":
        torch.manual_seed(seed)
        return cls(torch.nn.EmbeddingBag(BUCKETS, 2, mode="sum"), None, task, name=f"{task}-{cls.kind}")

    @classmethod
    def load(cls, path: Path, info: dict, profile: str, weights_hash: str) -> "BagOfWordsVictim":
        from safetensors.torch import load_file

        model = torch.nn.EmbeddingBag(BUCKETS, 2, mode="sum")
        model.load_state_dict(load_file(path / "model.safetensors"))
        return cls(model.eval(), None, info["task"], name=info["name"], weights_hash=weights_hash)

    @staticmethod
    def files_for_hash(path: Path, info: dict) -> tuple[list[Path], str]:
        return [path / "config.json", path / "model.safetensors"], ""

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        from safetensors.torch import save

        atomic_write_json(out_dir / "config.json", {"buckets": BUCKETS})
        atomic_write_bytes(out_dir / "model.safetensors", save(self.trainable_state()))
        return self.files_for_hash(out_dir, {})

    def describe(self) -> dict:
        return {"base_model": "none (trained from scratch)", "n_params": self.n_params}


@pytest.fixture()
def bag_of_words():
    register_victim_kind(VictimKind("BagOfWords", BagOfWordsVictim), aliases=("bow",))
    yield "BagOfWords"
    VICTIM_KINDS.unregister("BagOfWords")


def test_the_toy_kind_trains_loads_and_is_attacked_under_its_canonical_name(bag_of_words, tmp_path):
    data = write_task_data(tmp_path / "data", n_train=80, n_eval=8)
    out = train_victim("PR2", "BOW", data, tmp_path / "model", epochs=3, profile="smoke", progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["kind"] == "BagOfWords" and info["name"] == "PR2-BagOfWords"
    assert json.loads((out / "metrics.json").read_text())["attack"]["f1"] > 0.5  # it learnt the loaded words
    victim = load_victim(out, profile="smoke")
    assert isinstance(victim, BagOfWordsVictim) and victim.weights_hash == info["weights_hash"]
    report = run_attack("PR2", out, data, "DeepWordBug", tmp_path / "run", n_examples=3, profile="smoke",
                        semantic=OnesSemantic(), progress=False)
    assert report.settings["n_examples"] == 3 and report.settings["victim_weights"] == info["weights_hash"]


def test_grids_know_the_toy_kind_and_profiles_ask_for_its_epochs(bag_of_words):
    grid = parse_grid({"name": "g", "profile": "smoke", "tasks": ["PR2"], "victims": ["bow", "bilstm"],
                       "attackers": ["PWWS"], "scenarios": ["untargeted"],
                       "training": {"epochs": {"BagOfWords": 2}}}, "g.yaml")
    assert grid.victims == ("BagOfWords", "BiLSTM") and grid.training.epochs_for("PR2", "BagOfWords") == 2
    from bodega.profiles import get_profile

    with pytest.raises(UnknownNameError, match="profile smoke sets no epochs for victim kind BagOfWords"):
        get_profile("smoke").epochs_for("PR2", "BagOfWords")
