"""What the "Deviations" chapter tabulates: each profile's departures from BODEGA, the BiLSTM padding benchmark
(``benchmarks/bilstm_padding.py``) and the demo grid's scores before and after a fix (``demo_before_after.csv``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from bodega.layout import MODELS, VICTIM_INFO
from bodega.profiles import Profile
from bodega.victims.kinds import VICTIM_KINDS

PADDING_ROWS = {
    "F1 on attack.tsv, BODEGA's evaluation batches (16, file order)": "f1_bodega_batches",
    "F1 on attack.tsv, each text alone": "f1_alone",
    "largest change of P(non-credible): batch of 16 vs alone": "max_change_batches_vs_alone",
    "largest change of P(non-credible): beside the longest text vs alone": "max_change_beside_longest_vs_alone",
    "decisions flipped: batch of 16 vs alone": "decisions_flipped_batches_vs_alone",
    "decisions flipped: beside the longest text vs alone": "decisions_flipped_beside_longest_vs_alone"}
SCORE_PARTS = {"bodega_score": "BODEGA", "success_score": "confusion", "semantic_score": "semantic",
               "character_score": "character", "queries_per_example": "queries"}


def profile_deviations(profiles: Iterable[Profile]) -> pd.DataFrame:
    """One row per deviation any profile makes, one column per profile ("-" where that profile keeps BODEGA's)."""
    profiles = list(profiles)
    names = list(dict.fromkeys(name for profile in profiles for name in profile.deviations))
    return pd.DataFrame({profile.name: [profile.deviations.get(name, "-") for name in names]
                         for profile in profiles}, index=pd.Index(names, name="deviation"))


def padding_facts(padding: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: the task, the epochs, and every measurement prefixed ``packed_``/``right_``."""
    models = padding["models"]
    return {"pad_task": padding["task"], "pad_epochs": padding["epochs"],
            **{f"packed_{k}": v for k, v in models["packed"].items()},
            **{f"right_{k}": v for k, v in models["right"].items()}}


def padding_table(padding: Mapping[str, Any]) -> pd.DataFrame:
    """Packed sequences (ours) against BODEGA's right padding, one row per measurement in words."""
    packed, right = padding["models"]["packed"], padding["models"]["right"]
    return pd.DataFrame({"packed (ours)": [packed[v] for v in PADDING_ROWS.values()],
                         "right padding (BODEGA)": [right[v] for v in PADDING_ROWS.values()]},
                        index=list(PADDING_ROWS))


def before_after_table(moved: pd.DataFrame) -> pd.DataFrame:
    """Each demo cell's score parts before and after, rounded to 3 places (``moved`` indexed by cell)."""
    shown = pd.DataFrame({"same victim": moved["same_victim"],
                          **{f"{label} {when}": moved[f"{column}_{when}"]
                             for column, label in SCORE_PARTS.items() for when in ("before", "after")}})
    return shown.round(3)


def before_after_summary(moved: pd.DataFrame) -> str:
    """How far the BODEGA score and the queries moved on the cells whose victim did not change, in a sentence."""
    same = moved.loc[moved["same_victim"]]
    changed = same["bodega_score_change"].abs()
    return (f"With the same victim, the BODEGA score moved by {changed.mean():.3f} on average over "
            f"{len(changed)} cells (largest {changed.max():.3f}, {changed.idxmax()}); queries per example by "
            f"{same['queries_per_example_change'].mean():+.1f} on average.")


def queries_note(shared: Mapping[str, str]) -> str:
    """The sentence on query budgets, from the settings all profiles share."""
    return ("Queries are " + shared["queries"] + ". The cpu and demo grids also cap queries per example "
            "(below); BODEGA sets no budget.")


# --- Every role's model and size, the paper's beside a profile's ---

VICTIM_ROLES = tuple(VICTIM_KINDS)
PAPER_SIZES = {"bert-base-uncased": 110e6, "gemma-2b": 2.5e9, "gemma-7b": 8.5e9}
"""Parameters of BODEGA's pretrained victims (by resource role), as their model papers give them (BERT-base 110M;
Gemma 2B and 7B: 2.5B and 8.5B with embeddings); this package never loaded them. Every other size in the table is
a record of a model this package trained or measured."""
UNSET = {"llm": "an OpenAI-compatible chat endpoint (openai:<model>)"}  # a role None means, where not "none"
SCRATCH = "BiLSTM"  # trained from scratch in every profile: its size is the trained model's


def format_size(n_params: float | None) -> str:
    """Parameters in words: "1.1M", "109.5M", "2.5B" ("" where not known)."""
    if n_params is None or pd.isna(n_params):
        return ""
    return f"{n_params / 1e9:.1f}B" if n_params >= 1e9 else f"{n_params / 1e6:.1f}M"


def recorded_sizes(victims: Iterable[Mapping[str, Any]], pilot: Iterable[Mapping[str, Any]] = ()) -> dict[str, int]:
    """Parameters per resource role (``BiLSTM`` for the from-scratch model) from trained victims' ``victim.json``
    (``base_role``, ``n_params``; classifier head included) and the decoder pilot's rows (``role``)."""
    sizes: dict[str, int] = {}
    for info in victims:
        role = SCRATCH if info.get("kind") == SCRATCH else info.get("base_role")
        if role and info.get("n_params"):
            sizes.setdefault(role, int(info["n_params"]))
    for row in pilot:
        sizes.setdefault(row["role"], int(row["n_params"]))
    return sizes


def read_recorded_sizes(root: str | Path) -> dict[str, int]:
    """:func:`recorded_sizes` over the committed victims of ``root`` (results/study, then results/cpu) and
    ``book/data/decoder_pilot.json``."""
    import json

    root = Path(root)
    infos = [json.loads(path.read_text(encoding="utf-8")) for study in ("study", "cpu")
             for path in sorted((root / "results" / study / MODELS).glob(f"*/{VICTIM_INFO}"))]
    pilot_file = root / "book" / "data" / "decoder_pilot.json"
    pilot = json.loads(pilot_file.read_text(encoding="utf-8"))["rows"] if pilot_file.exists() else []
    return recorded_sizes(infos, pilot)


def _model_name(role: str | None) -> tuple[str, str | None]:
    """(what a profile's role value names, the resource role whose size it has)."""
    from bodega.resources import SPECS
    from bodega.scoring.semantic import encoder_role, semantic_model_name

    if role is None:
        return "none", None
    if role.startswith("none:"):
        return role[5:], None
    if role == "cpu-default" or role not in SPECS:
        name = semantic_model_name("cpu") if role == "cpu-default" else role
        encoder = encoder_role(name) if not name.startswith("bleurt") else "bleurt-20"
        return (f"{name} (on {encoder})" if encoder else name), encoder
    description = SPECS[role].description
    return f"{role}: {description.split(' (')[0].split(',')[0]}", role


def role_models_table(paper: Profile, profile: Profile, sizes: Mapping[str, int]) -> pd.DataFrame:
    """One row per role (the victims first): the model the paper's profile names and its size beside the model
    ``profile`` names and its size. Sizes are the records of trained models (``sizes``, by resource role), the
    paper's pretrained victims' published counts where this package ran no such model."""
    roles = [SCRATCH] + [r for r in VICTIM_ROLES if r in profile.models] + \
        [r for r in profile.models if r not in VICTIM_ROLES]
    rows = []
    for role in roles:
        entry = {"role": role}
        for label, source in (("paper", paper), (profile.name, profile)):
            if role == SCRATCH:
                name, sized = "BiLSTM trained from scratch (the same architecture)", SCRATCH
            else:
                value = source.models.get(role)
                name, sized = _model_name(value if value is not None or role not in UNSET else "none:" + UNSET[role])
                if role == "MiniLM" and source is paper:
                    name += " (no BODEGA victim)"
            size = sizes.get(sized, PAPER_SIZES.get(sized)) if sized else None
            entry.update({f"{label} model": name, f"{label} size": format_size(size)})
        rows.append(entry)
    return pd.DataFrame(rows).set_index("role")
