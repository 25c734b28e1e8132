"""Every claim's verdict on a study grid, with its robustness (other bootstrap seeds, without the marginal
victims, each training alone) and the spread of BODEGA scores over retrains, for the pages that open with the
study's answers (the front page, the AtomEval chapter). The robustness check judges every claim some fifty times,
minutes of CPU, so its result is committed:

    python benchmarks/study_findings.py --results results/study-v3 --grid parameters/grid_study_v3.yaml \
        --out book/data/study_findings.json

A study that looks at its data more than once (study v4: a look after each of its two rounds of trainings) judges
every single difference over trainings at 1 - 0.05 / looks (``--looks 2``: 97.5%, before a claim's own Bonferroni
over its differences), so that looking twice does not raise the error rate; the file records the level.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def main() -> int:
    from dataclasses import replace

    from bodega.errors import BodegaError
    from bodega_book.findings import findings
    from bodega_book.findings_rules import adjusted_level
    from bodega_book.page_data import write_page_data
    from bodega_book.study import load_study
    from bodega_book.study_answers import study_answers
    from bodega_book.verdict_robustness import SEEDS, marginal_victims, robustness, with_robustness

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results/study-v3")
    parser.add_argument("--grid", default="parameters/grid_study_v3.yaml")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="bootstrap seeds each verdict is judged under")
    parser.add_argument("--looks", type=int, default=1,
                        help="times the study judges its data; each difference at 1 - 0.05 / looks")
    parser.add_argument("--out", default="book/data/study_findings.json")
    args = parser.parse_args()
    if args.looks < 1:
        parser.error(f"--looks {args.looks}: a study looks at its data at least once")
    start = time.process_time()
    try:
        study = replace(load_study(args.results, args.grid), level=adjusted_level(args.looks))
    except BodegaError as error:  # a results folder or grid file that is not there: one line, not a traceback
        parser.error(str(error))
    marginal = marginal_victims(study)
    found = with_robustness(findings(study), robustness(study, findings, args.seeds, marginal))
    answers = study_answers(study, found, study.trainings_per_task())
    command = (f"python benchmarks/study_findings.py --results {args.results} --grid {args.grid} "
               f"--seeds {args.seeds}" + (f" --looks {args.looks}" if args.looks > 1 else "") + f" --out {args.out}")
    write_page_data("study_findings", Path(args.out), {"command": command, "seeds": args.seeds,
                                                       "looks": args.looks, **answers})
    held = sum(f["held"] for f in answers["findings"])
    print(f"{len(found)} claims at {study.level:.1%} per difference, {held} hold across trainings; "
          f"retrain spread {answers['retrain_spread']}; "
          f"{time.process_time() - start:.0f} CPU-seconds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
