"""The AtomEval paper's published values (shipped as ``bodega/published/atomeval.yaml``), read for showing
beside ours; never to tune against.

The file holds what the available copy of the paper shows (Tables 5-8 only in part); a row it lacks is "not
stated" in every table, never filled in. The paper names families and verifiers its own way; this module maps
them to the package's family keys and verifier kinds.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

NOT_STATED = "not in the available copy"
PAPER_REWRITERS = ("GPT-4.1", "Mistral-7B")
"""The paper's rewriters, whose rows stand beside ours."""
VERIFIER_ROLES = {"BERT": "bert", "GEMMA7B": "gemma7b"}
"""Our verifier kind -> the paper's verifier it stands in for (the key of its Table 5 columns)."""
PAPER_FAMILIES = {"colloquial/lexical": "colloquial", "colloquial": "colloquial", "deseption-style": "deseption",
                  "deseption": "deseption", "gem-style factmix": "factmix", "omission-style": "omission",
                  "advadd": "advadd"}


def family_key(label: str) -> str:
    """Our family key (``colloquial`` ...) for one of the paper's family labels."""
    return PAPER_FAMILIES[label.strip().lower()]


@dataclass(frozen=True)
class AtomEvalPublished:
    """The paper's tables as the file holds them, rows keyed by (family key, generator) where they have one."""

    citation: str
    splits: dict[str, dict[str, int]]  # Table 1: FEVER's splits and the attack set, per label
    statements: dict[str, str]  # the text's headline statements and Figure 1's example, by id
    extraction: list[dict[str, Any]]
    human_agreement: dict[str, dict[str, float]]
    ablation: dict[str, dict[str, float]]
    main: dict[tuple[str, str], dict[str, dict[str, float]]]  # -> {"bert": {...}, "gemma7b": {...}}
    diagnostics_gemma7b: dict[tuple[str, str], dict[str, float | None]]
    surface_bert: dict[tuple[str, str], dict[str, float]]
    diagnostics_bert: dict[tuple[str, str], dict[str, Any]]

    def main_cell(self, verifier_kind: str, family: str, generator: str) -> dict[str, float] | None:
        """Table 5's ASR, S-ASR, P-ASR and VASR of the paper's ``generator`` on ``family`` for the verifier our
        ``verifier_kind`` stands in for; None where the paper's copy does not show the row."""
        row = self.main.get((family, generator))
        role = VERIFIER_ROLES.get(verifier_kind)
        return None if row is None or role is None else row.get(role)

    def diagnostics(self, verifier_kind: str, family: str, generator: str) -> dict[str, Any] | None:
        """Table 8's row (BERT) or Table 6's (Gemma-7B) for this family and generator, or None."""
        table = {"BERT": self.diagnostics_bert, "GEMMA7B": self.diagnostics_gemma7b}.get(verifier_kind, {})
        return table.get((family, generator))

    def surface(self, verifier_kind: str, family: str, generator: str) -> dict[str, float] | None:
        """Table 7's mean similarity and perplexity of the successful rewrites (the paper gives BERT's only)."""
        return self.surface_bert.get((family, generator)) if verifier_kind == "BERT" else None


def _keyed(rows: list[dict]) -> dict[tuple[str, str], dict]:
    return {(family_key(row["family"]), row["generator"]): row for row in rows}


def load_atomeval_published(path: str | Path | None = None) -> AtomEvalPublished:
    """Read the published values (default: the file shipped with the package)."""
    from bodega.published import ATOMEVAL_YAML

    data = yaml.safe_load(Path(path or ATOMEVAL_YAML).read_text(encoding="utf-8"))
    return AtomEvalPublished(
        citation=data["paper"]["citation"], splits=data["table1_splits"],
        statements={row["id"]: row["text"] for row in data["prose"]}, extraction=data["table2_extraction"],
        human_agreement=data["table3_human_agreement"], ablation=data["table4_ablation"],
        main={key: {"bert": row["bert"], "gemma7b": row["gemma7b"]}
              for key, row in _keyed(data["table5_main"]).items()},
        diagnostics_gemma7b=_keyed(data["table6_diagnostics_gemma7b"]),
        surface_bert=_keyed(data["table7_surface_bert"]),
        diagnostics_bert=_keyed([r for r in data["table8_diagnostics"] if r["verifier"] == "BERT"]))
