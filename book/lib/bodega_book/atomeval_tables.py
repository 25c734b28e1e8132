"""The AtomEval chapter's tables in the paper's shape, with the paper's values beside ours.

Rows are family by rewriter (ours, then the paper's GPT-4.1 and Mistral-7B rows, "not in the available copy"
where the available copy of the paper lacks them); each verifier is a column group named by the paper's verifier
it stands in for; rates are percentages, ours with their exact 95% interval in brackets. The input is the JSON that
``bodega atomeval main-table`` writes (:func:`bodega.report.atomeval_comparison.main_table`), the agreement and
ablation reports of ``bodega atomeval agreement``, and :mod:`bodega_book.atomeval_published`.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from bodega.atomeval.metrics import DENOMINATORS
from bodega.atomeval.rewriters import FAMILIES, FAMILY_NAMES
from bodega_book.atomeval_published import NOT_STATED, PAPER_REWRITERS, AtomEvalPublished

RATES = ("ASR", "S-ASR", "P-ASR", "VASR")
NOT_JUDGED = "not judged"
"""Our cell where a verifier has not judged that rewriter's rewrites (``main-table`` tabulates what exists)."""
DIAGNOSTIC_COLUMNS = ("successes", "invalid, % (n)", *(f"{k}, % of {subset}" for k, subset in DENOMINATORS.items()))
SURFACE_COLUMNS = ("mean similarity", "mean perplexity", "S-ASR passes, invalid", "P-ASR passes, invalid")
ROLE_NAMES = {"BERT": "BERT-based verifier (encoder)", "GEMMA7B": "Gemma-7B verifier (decoder)"}
PEOPLE_MEASURES = ("precision", "recall", "f1", "accuracy")
PEOPLE_COLUMNS = {"precision": "precision", "recall": "recall", "f1": "F1", "accuracy": "accuracy"}


def percent(value: float | None, digits: int = 1) -> str:
    """A share as a percentage (``12.7``), ``–`` when there is none."""
    return "–" if value is None or value != value else f"{100 * value:.{digits}f}"


def with_interval(row: dict, name: str) -> str:
    """``12.7 (8.2–18.6)``: a rate of ``row`` as a percentage with its exact 95% interval."""
    if row.get(name) is None:
        return "–"
    return f"{percent(row[name])} ({percent(row[f'{name} low'])}–{percent(row[f'{name} high'])})"


def verifier_kind(comparison: dict) -> str:
    """The kind (``BERT``, ``GEMMA7B``) of the verifier that judged a comparison."""
    return comparison["verifier_info"]["victim"]["kind"]


def role_label(comparison: dict) -> str:
    """A verifier's column group: the paper's verifier it stands in for, then ours."""
    kind = verifier_kind(comparison)
    victim = comparison["verifier_info"]["victim"]
    return f"{ROLE_NAMES.get(kind, kind)}: {victim['name']} ({victim.get('base_role', '?')})"


def _rows(comparison: dict, key: str) -> dict[tuple[str, str], dict]:
    return {(row["family"], row["rewriter"]): row for row in comparison[key]}


def _families(main: dict) -> list[str]:
    present = {row["family"] for comparison in main["verifiers"].values() for row in comparison["metrics"]}
    return [family for family in FAMILIES if family in present]


def _index(main: dict) -> list[tuple[str, str]]:
    """(family, rewriter) rows: ours, then the paper's."""
    rewriters = list(main["rewriters"]) + [f"{g} (paper)" for g in PAPER_REWRITERS]
    return [(family, rewriter) for family in _families(main) for rewriter in rewriters]


def _paper_generator(rewriter: str) -> str | None:
    return rewriter.removesuffix(" (paper)") if rewriter.endswith(" (paper)") else None


def _frame(cells: dict[tuple[str, str], dict], index: list[tuple[str, str]]) -> pd.DataFrame:
    """The cells as a table with (family name, rewriter) rows in ``index`` order; an empty cell is "not in the
    available copy"."""
    frame = pd.DataFrame.from_dict({key: cells.get(key, {}) for key in index}, orient="index").reindex(index)
    frame.index = pd.MultiIndex.from_tuples([(FAMILY_NAMES[f], r) for f, r in index], names=["family", "rewriter"])
    if len(frame.columns) and isinstance(frame.columns[0], tuple):
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame.fillna(NOT_STATED)


def main_results_table(main: dict, published: AtomEvalPublished) -> pd.DataFrame:
    """Table 5: ASR, S-ASR, P-ASR and VASR per family and rewriter, one column group per verifier."""
    cells: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
    for comparison in main["verifiers"].values():
        group, kind, ours = role_label(comparison), verifier_kind(comparison), _rows(comparison, "metrics")
        for family, rewriter in _index(main):
            generator = _paper_generator(rewriter)
            if generator is None:
                row = ours.get((family, rewriter))
                values = {name: with_interval(row, name) if row else NOT_JUDGED for name in RATES}
            else:
                paper = published.main_cell(kind, family, generator)
                values = {name: f"{paper[name.lower().replace('-', '_')]:.2f}" for name in RATES} if paper else {}
            cells.setdefault((family, rewriter), {}).update({(group, name): v for name, v in values.items()})
    return _frame(cells, _index(main))


def _paper_share(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict):
        return f"{value['pct']:.1f} ({value['n']})"
    return f"{value:.1f}"


def diagnostics_table(main: dict, verifier: str, published: AtomEvalPublished) -> pd.DataFrame:
    """Tables 6 and 8 for one verifier: the successful rewrites, the invalid share (count), and each
    diagnostic as a percentage (count) of the invalid (EvDrift, ScopeLoss) or valid (EvEnt, UnverAdd) ones;
    "–" where that subset has fewer than five."""
    comparison = main["verifiers"][verifier]
    kind, ours = verifier_kind(comparison), _rows(comparison, "diagnostics")
    cells: dict[tuple[str, str], dict[str, str | None]] = {}
    for family, rewriter in _index(main):
        generator = _paper_generator(rewriter)
        values: dict[str, str | None] = {}
        if generator is None:
            row = ours.get((family, rewriter))
            if row:
                n = row["successes"]
                values = {"successes": str(n),
                          "invalid, % (n)": f"{percent(row['invalid'] / n if n else None)} ({row['invalid']})",
                          **{f"{k}, % of {subset}": row[f"{k} (% of {subset})"] for k, subset in DENOMINATORS.items()}}
            else:
                values = dict.fromkeys(DIAGNOSTIC_COLUMNS, NOT_JUDGED)
        else:
            paper = published.diagnostics(kind, family, generator)
            if paper is not None:
                values = {f"{k}, % of {subset}": _paper_share(paper.get(k.lower()))
                          for k, subset in DENOMINATORS.items()}
                if "successes" in paper:
                    values.update({"successes": str(paper["successes"]),
                                   "invalid, % (n)": _paper_share(paper["invalid"])})
        cells[(family, rewriter)] = values
    return _frame(cells, _index(main)).reindex(columns=list(DIAGNOSTIC_COLUMNS)).fillna(NOT_STATED)


def surface_table(main: dict, verifier: str, published: AtomEvalPublished) -> pd.DataFrame:
    """Table 7 for one verifier: mean SBERT similarity to the claim and mean perplexity of the successful
    rewrites, and how many of them the surface filters pass although the gate finds them invalid."""
    comparison = main["verifiers"][verifier]
    kind, ours = verifier_kind(comparison), _rows(comparison, "surface")
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for family, rewriter in _index(main):
        generator = _paper_generator(rewriter)
        if generator is None:
            row = ours.get((family, rewriter))
            values = dict.fromkeys(SURFACE_COLUMNS, NOT_JUDGED) if not row else {
                "mean similarity": _number(row["mean similarity (flips)"], 3),
                "mean perplexity": _number(row["mean perplexity (flips)"], 1),
                "S-ASR passes, invalid": f"{row['similarity: pass but invalid']} of {row['similarity: pass']}",
                "P-ASR passes, invalid": f"{row['perplexity: pass but invalid']} of {row['perplexity: pass']}"}
        else:
            paper = published.surface(kind, family, generator)
            values = {} if paper is None else {"mean similarity": f"{paper['sbert']:.3f}",
                                               "mean perplexity": f"{paper['adv_ppl']:.2f}"}
        cells[(family, rewriter)] = values
    return _frame(cells, _index(main)).reindex(columns=list(SURFACE_COLUMNS)).fillna(NOT_STATED)


def _number(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def case_table(main: dict) -> pd.DataFrame:
    """Table 9: one claim's rewrites across families and rewriters, each verifier's decision on them (flipped
    to supported, or held), the gate's verdict and its diagnostics."""
    case = main["case"]
    names = {name: verifier_kind(c) for name, c in main["verifiers"].items()}
    rows = []
    order = {(family, rewriter): n for n, (family, rewriter) in enumerate(_index(main))}
    for row in sorted(case["rows"], key=lambda r: order[(r["family"], r["rewriter"])]):
        rows.append({"family": FAMILY_NAMES[row["family"]], "rewriter": row["rewriter"],
                     "rewrite": "(no rewrite: the rule does not apply)" if row["rewrite"] is None else row["rewrite"],
                     **{f"{ROLE_NAMES[names[v]].split(' verifier')[0]} role ({v})":
                        "flipped" if flip else "held" for v, flip in row["flips"].items()},
                     "gate": "–" if row["valid"] is None else ("valid" if row["valid"] else "invalid"),
                     "diagnostics": ", ".join(row["diagnostics"]) or "–"})
    return pd.DataFrame(rows).set_index(["family", "rewriter"])


def people_table(agreement: dict, published: AtomEvalPublished) -> pd.DataFrame:
    """Table 3: the gate's precision, recall, F1 and accuracy against people (percent), ours beside the paper's
    BinaryGate, and the paper's diagnostics, which our human pairs do not label."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for row in agreement["rows"]:
        if row.get("accuracy") is not None:
            mode = row["name"].removeprefix("AtomEval gate ").strip("()")
            rows[("validity gate", f"ours ({mode}; {row['n']} pairs)")] = {
                PEOPLE_COLUMNS[m]: percent(row[m], 2) for m in PEOPLE_MEASURES}
    for name, values in published.human_agreement.items():
        decision = "validity gate" if name == "BinaryGate" else name
        rows[(decision, f"paper ({name})")] = {PEOPLE_COLUMNS[m]: f"{values[m]:.2f}" for m in PEOPLE_MEASURES}
        if name != "BinaryGate":
            rows[(decision, "ours")] = {PEOPLE_COLUMNS[m]: "no human labels" for m in PEOPLE_MEASURES}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["decision", "source"])
    return frame


TABLE4_SETTINGS = {"Full AtomEval": "defaults", "w/o SROM Extractor": "without the atom extractor",
                   "w/o BinaryGate/NLI": "without the matching step"}
"""The paper's Table 4 rows -> the settings of ``bodega atomeval agreement --ablation``."""
SETTING_NAMES = {"defaults": "the full gate"}


def ablation_people_table(ablation: dict, published: AtomEvalPublished) -> pd.DataFrame:
    """Table 4: the share judged valid and the agreement with people of the full gate and of the gate without
    each of its stages, ours (claim only, and claim and evidence) beside the paper's rows."""
    ours = {(row["setting"], row["name"]): row for row in ablation["rows"]}
    modes = sorted({row["name"] for row in ablation["rows"]}, key=len)
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for paper_name, setting in TABLE4_SETTINGS.items():
        for mode in modes:
            row = ours.get((setting, mode))
            if row is not None:
                label = mode.removeprefix("AtomEval gate ").strip("()")
                rows[(SETTING_NAMES.get(setting, setting), f"ours ({label})")] = {
                    "valid": percent(row.get("predicted_share"), 2),
                    **{PEOPLE_COLUMNS[m]: percent(row.get(m), 2) for m in PEOPLE_MEASURES}}
        paper = published.ablation.get(paper_name)
        rows[(SETTING_NAMES.get(setting, setting), f"paper ({paper_name})")] = (
            {"valid": f"{paper['valid']:.2f}", **{PEOPLE_COLUMNS[m]: f"{paper[m]:.2f}" for m in PEOPLE_MEASURES}}
            if paper else {c: NOT_STATED for c in ("valid", *PEOPLE_COLUMNS.values())})
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["setting", "source"])
    return frame


def extraction_table(gold: dict, llm_gold: dict, published: AtomEvalPublished) -> pd.DataFrame:
    """Table 2: correct extractions, ours (on the hand-checked gold claims) beside the paper's (400 claims)."""
    rows = {"dependency parse, spaCy (ours)": gold, f"LLM, {llm_gold['spec']} (ours)": llm_gold}
    table = {name: {"correct": report["correct"]["all"], "of": report["n"]["all"],
                    "accuracy, %": percent(report["accuracy"]["all"], 2)} for name, report in rows.items()}
    for row in published.extraction:
        table[f"{row['method']} (paper)"] = {"correct": row["correct"], "of": row["of"],
                                             "accuracy, %": f"{row['accuracy_pct']:.2f}"}
    return pd.DataFrame(table).T.rename_axis("extractor")


def main_facts(main: dict) -> dict[str, Any]:
    """Pooled over the families, per verifier and rewriter: ASR, VASR, the gap and the copies, as
    ``<kind>_cmp_<rewriter>_<asr|vasr|gap|copies|n>`` (``bert_cmp_qwen2515b_vasr``); and each verifier's
    population, accuracy and ROC AUC as ``<kind>_claims``, ``<kind>_acc``, ``<kind>_auc``."""
    from bodega_book.atomeval_page import pooled_rewriter_facts

    facts: dict[str, Any] = {}
    for comparison in main["verifiers"].values():
        kind = verifier_kind(comparison).lower()
        facts.update({f"{kind}_{key}": value for key, value in pooled_rewriter_facts(comparison).items()})
        info = comparison["verifier_info"]
        facts[f"{kind}_claims"] = min(p["common"] for p in comparison["populations"].values())
        facts[f"{kind}_acc"] = f"{info['metrics']['attack']['accuracy']:.3f}"
        facts[f"{kind}_auc"] = f"{info['auc']:.3f}" if info.get("auc") is not None else "–"
        facts[f"{kind}_name"] = info["victim"]["name"]
        facts[f"{kind}_params"] = f"{info['victim']['n_params'] / 1e6:.0f}M"
    return facts
