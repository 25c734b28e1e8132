"""The front page's answer box: five lines built from the study's findings and AtomEval's data, every figure
read from them."""
from __future__ import annotations

from pathlib import Path

from bodega_book.answer_box import answer_box, atomeval_line, counts_line, decided_line, held_line, limits_line
from bodega_book.page_data import read_page_data

BOOK = Path(__file__).resolve().parents[1] / "book"


def _finding(claim, task, paper, verdict, held=False, label=None, needs=()):
    return {"claim": claim, "task": task, "paper": paper, "verdict": verdict, "label": label or verdict,
            "fragile": "", "held": held, "numbers": "", "needs": list(needs)}


NEED = {"difference": "GEMMA7B − BERT", "victims": ["GEMMA7B", "BERT"], "level": 0.95, "now": 3, "trainings": 24}


ANSWERS = {"grid": "study-x", "n_planned": 10, "n_finished": 9, "trainings": {"HN": 1, "PR2": 3},
           "retrain_spread": {"cells": 4, "median": 0.0612, "max": 0.2127, "max_cell": "RD-GEMMA7B-BAE (targeted)"},
           "findings": [_finding("a", "PR2", "BiLSTM most vulnerable", "agree", held=True),
                        _finding("b", "HN", "on HN, BERT-ATTACK best", "disagree"),
                        _finding("c", "FC", "GEMMA7B 27% higher", "cannot tell", needs=[NEED]),
                        _finding("e", "RD", "best score 0.25", "cannot tell"),
                        _finding("d", "RD", "Genetic within range", "cannot tell", label="not testable here")]}
MAIN = {"verifiers": {"FC-BERT": {"runs": {"rules": "x", "big": "y"}, "metrics": [
    {"rewriter": "rules", "claims": 10, "ASR count": 2, "VASR count": 1},
    {"rewriter": "rules", "claims": 10, "ASR count": 2, "VASR count": 1},
    {"rewriter": "big", "claims": 20, "ASR count": 8, "VASR count": 0}]}}}
RUNS = [{"run": "FC-BERT-BERT-ATTACK-T", "victim": "../../models/FC-BERT", "attacker": "BERT-ATTACK",
         "scenario": "targeted", "ASR": 0.94, "VASR": 0.0},
        {"run": "FC-BERT-BERT-ATTACK-U", "victim": "../../models/FC-BERT", "attacker": "BERT-ATTACK",
         "scenario": "untargeted", "ASR": 0.5, "VASR": 0.3},
        {"run": "FC-BERT-PWWS-T", "victim": "../../models/FC-BERT", "attacker": "PWWS", "scenario": "targeted",
         "ASR": 0.44, "VASR": 0.22},
        {"run": "FC-GEMMA7B-PWWS-T", "victim": "../../models/FC-GEMMA7B", "attacker": "PWWS",
         "scenario": "targeted", "ASR": 0.1, "VASR": 0.05}]


def test_the_bodega_lines_count_name_and_limit_the_claims():
    assert "**1 agree**, **1 disagree**, **0 not comparable**, **3 cannot tell**" in counts_line(ANSWERS)
    assert "(1 of them not testable here)" in counts_line(ANSWERS)
    assert "9 of 10 attack cells" in counts_line(ANSWERS)
    assert "up to 3 trainings per victim" in counts_line(ANSWERS)
    # a later round trains some victims of a task more: the most any victim has, not the task's fewest
    rounds = {**ANSWERS, "victim_trainings": {"HN-BERT": 1, "PR2-BiLSTM": 3, "PR2-BERT": 10}}
    assert "up to 10 trainings per victim" in counts_line(rounds)
    decided = decided_line(ANSWERS)
    assert "*agree*: PR2: BiLSTM most vulnerable" in decided and "*disagree*: HN: BERT-ATTACK best" in decided
    assert "GEMMA7B" not in decided  # a claim that cannot be told is not decided
    held = held_line(ANSWERS)
    assert "(decided on every training of PR2 and on each alone)" in held
    assert "PR2: BiLSTM most vulnerable (agree)" in held
    assert "HN: BERT-ATTACK best" not in held_line(ANSWERS)
    limits = limits_line(ANSWERS)
    assert "median 0.06 and up to 0.21 (4 cells" in limits
    # the spread limits only the claim whose interval over trainings contains 0, not every undecided one
    assert ("1 claims cannot be told because one of them contains 0" in limits
            and "1 for another reason their line names" in limits and "1 are not testable here" in limits)
    assert "{doc}`study_v4_design`" in limits
    assert "{doc}`findings`" in limits


def test_no_retrained_victim_says_so_instead_of_a_spread():
    once = {**ANSWERS, "trainings": {"HN": 1}, "retrain_spread": {"cells": 0, "median": None, "max": None,
                                                                  "max_cell": ""}}
    assert "trained once" in held_line(once)
    assert "median" not in limits_line(once) and "3 claims cannot be told" in limits_line(once)


def test_the_atomeval_line_sets_raw_asr_against_vasr_for_rewriters_and_targeted_word_level_runs():
    line = atomeval_line(MAIN, RUNS)
    assert "the rewriters big 40% / 0%; rules 20% / 10%" in line  # pooled, highest ASR first
    assert "the word-level attackers BERT-ATTACK 94% / 0%; PWWS 44% / 22%" in line
    assert "50%" not in line and "5.0%" not in line  # untargeted runs and the other verifier are not quoted
    assert "{doc}`atomeval`" in line


def test_the_box_is_one_admonition_of_five_lines():
    box = answer_box(ANSWERS, MAIN, RUNS)
    assert box.startswith(":::{admonition} The answers\n:class: tip answer-box\n") and box.endswith(":::\n")
    assert len([line for line in box.splitlines()[2:-1] if line]) == 5


def test_the_committed_data_give_the_papers_striking_figure():
    """On the committed AtomEval runs BERT-ATTACK flips FC-BERT on 94% of claims, none of them validly."""
    line = atomeval_line(read_page_data("atomeval_main.json", BOOK / "data"),
                         read_page_data("atomeval_attack_vasr_study.json", BOOK / "data"))
    assert "BERT-ATTACK 94% / 0%" in line
