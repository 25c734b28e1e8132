"""The FC training sweep of the book's Victims chapter: which epochs and learning rates let a victim learn FC.

FC on the cpu profile has 702 training pairs. Each setting below is one ``train_victim`` call (as
``bodega train --task FC --data data/FC --profile cpu --threads 1`` with the victim, epochs, learning rate
and seed shown), keeping the epoch with the best dev F1. Trainings resume and finished ones are read back,
so the sweep can be run in parts (``--victims BiLSTM``) and continued. After every training the table is
rewritten to ``--out`` (CSV); a setting not trained yet is listed with status ``not run``.

    python benchmarks/fc_sweep.py --data data/FC --models results/fc-sweep --out book/data/fc_sweep.csv
"""
from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

# (victim, epochs, peak learning rate, seed, why the row is there)
SETTINGS = (
    ("BERT", 1, 5e-5, 0, "demo grid's setting before FC-BERT got its own key"),
    ("BERT", 2, 5e-5, 0, "the profile's BERT epochs"),
    ("BERT", 6, 5e-5, 0, ""),
    ("BERT", 10, 5e-5, 0, "cpu default (FC-BERT key)"),
    ("BERT", 10, 5e-5, 1, "seed check"),
    ("BERT", 10, 5e-5, 2, "seed check"),
    ("BERT", 10, 1e-4, 0, "higher rate"),
    ("BiLSTM", 10, 1e-3, 0, "cpu default"),
    ("BiLSTM", 30, 1e-3, 0, ""),
    ("BiLSTM", 20, 3e-3, 0, ""),
)
COLUMNS = ("victim", "epochs", "lr", "seed", "status", "selected epoch", "last-epoch loss", "dev F1", "dev acc",
           "attack F1", "attack acc", "note")


def folder_name(victim: str, epochs: int, lr: float, seed: int) -> str:
    return f"FC-{victim}-e{epochs}-lr{lr:g}-s{seed}"


def row(models: Path, victim: str, epochs: int, lr: float, seed: int, note: str) -> dict:
    """The table row of one setting, read from its model folder (``not run`` when unfinished)."""
    folder = models / folder_name(victim, epochs, lr, seed)
    base = {"victim": victim, "epochs": epochs, "lr": f"{lr:g}", "seed": seed, "note": note}
    if not (folder / "victim.json").exists():
        return {**base, "status": "not run"}
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    return {**base, "status": "trained", "selected epoch": metrics["selected_epoch"],
            "last-epoch loss": f"{metrics['history'][-1]['loss']:.3f}",
            "dev F1": f"{metrics['dev']['f1']:.3f}", "dev acc": f"{metrics['dev']['accuracy']:.3f}",
            "attack F1": f"{metrics['attack']['f1']:.3f}", "attack acc": f"{metrics['attack']['accuracy']:.3f}"}


def write_table(models: Path, out: Path) -> None:
    from bodega.io import atomic_write_text

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for victim, epochs, lr, seed, note in SETTINGS:
        writer.writerow(row(models, victim, epochs, lr, seed, note))
    atomic_write_text(out, buffer.getvalue())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/FC", help="prepared FC task folder")
    parser.add_argument("--models", default="results/fc-sweep", help="folder for the sweep's model folders")
    parser.add_argument("--out", default="book/data/fc_sweep.csv", help="the table the Victims chapter reads")
    parser.add_argument("--victims", nargs="+", default=["BERT", "BiLSTM"], help="train only these families")
    parser.add_argument("--collect-only", action="store_true", help="only rewrite the table from finished folders")
    args = parser.parse_args(argv)
    models, out = Path(args.models), Path(args.out)
    if not args.collect_only:
        import torch

        from bodega.victims import train_victim

        torch.set_num_threads(1)
        for victim, epochs, lr, seed, _ in SETTINGS:
            if victim in args.victims:
                train_victim("FC", victim, args.data, models / folder_name(victim, epochs, lr, seed), profile="cpu",
                             epochs=epochs, seed=seed, lr=lr)
                write_table(models, out)
    write_table(models, out)
    print(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
