"""Every claim's verdict on a study grid, with its robustness (other bootstrap seeds, without the marginal
victims, each training alone) and the spread of BODEGA scores over retrains, for the pages that open with the
study's answers (the front page, the AtomEval chapter). The robustness check judges every claim some fifty times,
minutes of CPU, so its result is committed:

    python benchmarks/study_findings.py --results results/study-v3 --grid parameters/grid_study_v3.yaml \
        --out book/data/study_findings.json
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def main() -> int:
    from bodega_book.findings import findings
    from bodega_book.page_data import write_page_data
    from bodega_book.study import load_study
    from bodega_book.study_answers import study_answers
    from bodega_book.verdict_robustness import SEEDS, marginal_victims, robustness, with_robustness

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results/study-v3")
    parser.add_argument("--grid", default="parameters/grid_study_v3.yaml")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="bootstrap seeds each verdict is judged under")
    parser.add_argument("--out", default="book/data/study_findings.json")
    args = parser.parse_args()
    start = time.process_time()
    study = load_study(args.results, args.grid)
    marginal = marginal_victims(study)
    found = with_robustness(findings(study), robustness(study, findings, args.seeds, marginal))
    answers = study_answers(study, found, study.trainings_per_task())
    command = (f"python benchmarks/study_findings.py --results {args.results} --grid {args.grid} "
               f"--seeds {args.seeds} --out {args.out}")
    write_page_data("study_findings", Path(args.out), {"command": command, "seeds": args.seeds, **answers})
    held = sum(f["held"] for f in answers["findings"])
    print(f"{len(found)} claims, {held} hold across trainings; retrain spread {answers['retrain_spread']}; "
          f"{time.process_time() - start:.0f} CPU-seconds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
