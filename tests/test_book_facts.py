"""What the book's pages and the README name must be what the repository holds: the journal the DOI belongs to,
the grid files, the paths, and the attack-cell counts of the grids. A typed fact that has gone stale fails here
instead of misleading a reader."""
from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

import yaml

from bodega.experiments import load_grid

ROOT = Path(__file__).resolve().parents[1]
PLAN_PAGES = {"study_plan.md", "study_v3_plan.md"}  # the plans' own record of what each plan said at its time
JOURNAL = re.compile(r"Natural Language (?:Engineering|Processing)")
REPO_PATH = re.compile(r"`((?:parameters|results|book/data|book/lib|lib|benchmarks|scripts|notebooks|tests)/[^`\s]+)`")
OUTPUTS = ("results/demo", "results/models", "results/notebook-runs", "results/smoke-ci")
"""Folders a command the page shows writes (git-ignored): a page may name what will be there."""
PLACEHOLDER = re.compile(r"[<>*{}\[\]|]|\.\.\.|\bFILE\b|\bTASK\b|\bGRID\b|\bNAME\b")
CELLS = re.compile(r"\b(\d[\d,]*) (?:planned )?attack cells\b")


def pages() -> list[Path]:
    return sorted(p for p in (ROOT / "book").glob("*.md") if p.name not in PLAN_PAGES) + [ROOT / "README.md"]


@lru_cache(maxsize=1)
def tracked() -> frozenset[str]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    names = set(files.split())
    return frozenset(names | {"/".join(n.split("/")[:i]) for n in names for i in range(1, n.count("/") + 1)})


def test_every_page_names_the_journal_of_the_papers_doi():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    published = (ROOT / "lib/bodega/published/bodega.yaml").read_text(encoding="utf-8")
    assert citation["preferred-citation"]["doi"] in published  # CITATION.cff cites the paper the values are from
    journal = citation["preferred-citation"]["journal"]
    assert journal in published
    for page in [*pages(), ROOT / "CITATION.cff", ROOT / "lib/bodega/published/bodega.yaml"]:
        named = set(JOURNAL.findall(page.read_text(encoding="utf-8")))
        assert named <= {journal}, f"{page.name} names {named - {journal}}; the DOI's journal is {journal}"


def test_every_repository_path_a_page_names_is_in_the_repository():
    missing = [f"{page.name}: {path}" for page in pages()
               for path in REPO_PATH.findall(page.read_text(encoding="utf-8"))
               if not PLACEHOLDER.search(path) and not path.startswith(OUTPUTS)
               and path.rstrip("/").split(":")[0] not in tracked()]
    assert not missing, "pages name paths the repository does not hold:\n" + "\n".join(missing)


def test_every_attack_cell_count_a_page_types_is_a_grids():
    counts = {load_grid(grid).plan.n_attack_cells for grid in (ROOT / "parameters").glob("grid_*.yaml")}
    wrong = [f"{page.name}: {n} attack cells" for page in pages()
             for n in CELLS.findall(page.read_text(encoding="utf-8")) if int(n.replace(",", "")) not in counts]
    assert not wrong, f"grids have {sorted(counts)} attack cells:\n" + "\n".join(wrong)


def _model_name(role: str, profile: str = "cpu") -> str:
    """The first word of the description of the model that fills ``role`` in ``profile`` (``all-mpnet-base-v2``)."""
    from bodega.profiles import get_profile
    from bodega.resources import SPECS

    return SPECS[get_profile(profile).models[role]].description.split()[0]


def test_the_models_a_page_names_in_the_victim_roles_are_the_cpu_profiles():
    bert, gemmas = _model_name("BERT"), (_model_name("GEMMA2B"), _model_name("GEMMA7B"))
    def current(text: str, match: re.Match) -> bool:  # study v1's roles are history, named as such
        return "study v1" not in text[max(0, match.start() - 120):match.start()]

    for page in pages():
        text = " ".join(page.read_text(encoding="utf-8").split())
        for match in re.finditer(r"([\w.-]*[A-Za-z][\w.-]*-[\w.-]+),? (?:\d+M, )?in BERT's role", text):
            assert not current(text, match) or match.group(1) == bert, \
                f"{page.name} names {match.group(1)} in BERT's role; the cpu profile has {bert}"
        for match in re.finditer(r"([\w.-]+) and ([\w.-]+) in the Gemma roles", text):
            assert not current(text, match) or match.groups() == gemmas, \
                f"{page.name} names {match.groups()} in the Gemma roles; the cpu profile has {gemmas}"


def _queries(cell: str) -> dict[int, int]:
    from bodega.records import read_example_records

    return {r.index: r.queries for r in read_example_records(ROOT / "results/study-v3/runs" / cell / "records.jsonl")}


def test_the_study_grids_skip_reasons_quote_the_finished_cells_and_the_markers():
    """A skip reason written while a cell ran quoted its partial figures, and "stopped" for a run whose marker says
    "failed": the reasons the book shows quote the finished cell and each marker's own status."""
    import json

    spec = load_grid(ROOT / "parameters/grid_study_v3.yaml")
    bert, glove = _queries("HN-BERT-TextFooler-U"), _queries("HN-GloVeBiLSTM-TextFooler-U")
    rows = sorted(set(bert) & set(glove))
    assert len(rows) == 25
    pooled = sum(bert[i] for i in rows) / sum(glove[i] for i in rows)
    highest = max(bert[i] / glove[i] for i in rows)
    reason = spec.skip_reason("HN", "BERT", "BERT-ATTACK", "untargeted")
    assert f"took {pooled:.2f} times the GloVe BiLSTM's queries" in reason and f"up to {highest:.2f} times" in reason
    for cell, (victim, attacker, scenario) in {"HN-BERT-BERT-ATTACK-U": ("BERT", "BERT-ATTACK", "untargeted"),
                                                "HN-BERT-TextFooler-T": ("BERT", "TextFooler", "targeted")}.items():
        status = json.loads((ROOT / "results/study-v3/runs" / cell / "cell.json").read_text())["status"]
        said = spec.skip_reason("HN", victim, attacker, scenario)
        other = ({"stopped", "failed"} - {status}).pop()
        assert status in said and other not in said, (cell, status)


def test_the_deviations_page_states_the_character_cut_the_code_applies():
    from bodega.victims.trimming import MAX_CHARACTERS

    page = (ROOT / "book" / "deviations.md").read_text(encoding="utf-8")
    assert f"`bodega.victims.trimming.MAX_CHARACTERS` ({MAX_CHARACTERS:,})" in page


BUDGET = re.compile(r"\b(\d+) CPU-hour budget|\bbudget of (\d+) CPU-hours|\bat most (\d+) CPU-hours beyond"
                    r"|\bwithin (\d+) CPU-hours")


def test_every_cpu_hour_budget_a_page_types_is_a_grids():
    budgets = {load_grid(grid).budget_cpu_hours for grid in (ROOT / "parameters").glob("grid_*.yaml")}
    typed = [(page.name, int(next(g for g in match.groups() if g))) for page in pages()
             for match in BUDGET.finditer(" ".join(page.read_text(encoding="utf-8").split()))]
    assert typed, "no page types a study's budget: the pattern no longer matches the pages"
    wrong = [f"{name}: {hours} CPU-hours" for name, hours in typed if hours not in budgets]
    assert not wrong, f"grids' budgets are {sorted(b for b in budgets if b)}:\n" + "\n".join(wrong)


def test_the_study_v4_design_quotes_the_intervals_study_v3_published():
    """The design's table of deciding differences sets each beside study v3's published interval: it must be the
    one ``book/data/study_v3_findings.json`` holds, not a retyped or recomputed one."""
    import json

    published = " ".join(f["numbers"] for f in json.loads(
        (ROOT / "book/data/study_v3_findings.json").read_text(encoding="utf-8"))["findings"])
    page = (ROOT / "book/study_v4_design.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| [^|]+ \| ([^|]+?) \| ([\d.−-]+ \[[^]]+\]) \|", page, flags=re.MULTILINE)
    assert len(rows) == 6
    for difference, interval in rows:
        assert f"{difference} {interval.replace('−', '-')}" in published, (difference, interval)


def test_the_findings_page_states_the_much_threshold_the_rules_apply():
    """The page types the threshold of "much" and sets it against the paper's best scores for RD and PR: both must
    be what the rules and the published values hold."""
    from bodega.report.published import load_published
    from bodega_book.findings_rules import MUCH

    page = " ".join((ROOT / "book/findings.md").read_text(encoding="utf-8").split())
    published = load_published()
    rd, pr = published.statement("q1-rd-best").value, published.statement("q1-pr-best").value
    assert f"at or above {MUCH:.2f}" in page
    assert (f"{MUCH / rd:.0%} of the best untargeted score the paper states for RD ({rd:.2f}) and a fifth of PR's "
            f"({pr:.2f})") in page and round(pr / MUCH) == 5
