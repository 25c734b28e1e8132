"""What the "Victims" chapter quotes and tabulates: how many texts each tokenizer trims
(``book/data/trimming.json``), the FC BERT settings sweep (``fc_sweep.csv``) and the decoder pilot's costs
(``decoder_pilot.json``)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

WORDPIECE = "bert-base-uncased WordPiece"
PILOT_COLUMNS = ["role", "parameters", "task", "tokens", "forward_cpu_s", "train_step_cpu_s"]


def trimming_table(trimming: Mapping[str, Any]) -> pd.DataFrame:
    """Rows, trimmed and emptied texts and the longest text in tokens, per (tokenizer, task)."""
    rows = [{"tokenizer": name, "victims": entry["victims"], "task": task, **counts}
            for name, entry in trimming["tokenizers"].items() for task, counts in entry["tasks"].items()]
    return pd.DataFrame(rows).set_index(["tokenizer", "task"])


def trimming_facts(trimming: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: WordPiece's trimmed HN articles and RD's longest text, and what was not
    measured."""
    wordpiece = trimming["tokenizers"][WORDPIECE]["tasks"]
    return {"trim_hn": wordpiece["HN"]["trimmed"], "trim_hn_rows": wordpiece["HN"]["rows"],
            "trim_rd": wordpiece["RD"]["trimmed"], "trim_rd_max": wordpiece["RD"]["max_tokens"],
            "not_measured_note": trimming["not_measured"] + "."}


def fc_seed_sentence(sweep: pd.DataFrame) -> str | None:
    """Dev accuracy and attack F1 over the seeds of BERT's 10-epoch FC setting, in a sentence; ``None`` when the
    sweep (read as strings) trained no such seed."""
    seeds = sweep[(sweep.victim == "BERT") & (sweep.epochs == "10") & (sweep.lr == "5e-05")
                  & (sweep.status == "trained")]
    if not len(seeds):
        return None
    return (f"Over seeds {', '.join(seeds.seed)} of the 10-epoch setting, dev accuracy is "
            f"{', '.join(seeds['dev acc'])} and attack F1 {', '.join(seeds['attack F1'])}; BODEGA's BERT was "
            "trained on the full FEVER training set, not on these 702 pairs.")


def decoder_pilot_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The decoder pilot's CPU seconds per forward and training step, with parameters in millions ("136M")."""
    pilot = pd.DataFrame(rows)
    pilot["parameters"] = (pilot.n_params / 1e6).round(0).astype(int).astype(str) + "M"
    return pilot[PILOT_COLUMNS]
