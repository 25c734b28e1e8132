"""Where one attack cell's CPU time goes: start-up, victim forwards, the attack's own models, search, scoring.

Each (victim, attacker) pair runs as ``bodega attack`` does, in a fresh Python process (as a grid cell's
notebook kernel is), on one thread, once per ``--runs`` entry: ``cold`` (empty caches), ``warm`` (the
attack-side caches the runs before filled, as another victim's cell on the same texts) and ``reused`` (the
second of two runs in one process, as a worker kept alive across cells). The child times, in process CPU
seconds, the functions each part runs through (wrapping them; no profiler overhead):

- ``victim_load``: opening the victim folder (weights, adapter, tokenizer);
- ``warm_up``: the attacker's models loaded before the first example;
- ``victim_forwards``: the victim's own forwards (the query accountant's cache misses), everywhere;
- ``substitute_lm``: the substitute-word LM's predictions (BERT-ATTACK, BAE), its first load and the
  English-word check included (``lexicon``); ``wordnet_load`` the WordNet reader's construction
  (``wordnet_version_map`` its mapping of WordNet versions), wherever it happens;
- ``sentence_encoder``, ``pos_tagging``, ``wordnet_synonyms``: the other attack-side models;
- ``examples``: all examples; ``search`` what the examples spend outside forwards and the attack's models;
- ``scoring``: the run's BODEGA scores (the semantic model loaded and run);
- ``startup``: the process's total less examples and scoring (interpreter, imports, victim load,
  selection, warm-up), plus the one-off loads that happened during the examples (``lazy_loads``).

Prints a table and writes JSON (``--out``)::

    nice -n 10 python benchmarks/cell_profile.py --n 8 --out /tmp/cell_profile.json \\
        --cell PR2=results/study/models/PR2-BiLSTM --cell FC=results/study/models/FC-BERT \\
        --attacker BERT-ATTACK --attacker PWWS --attacker DeepWordBug --runs cold,warm,reused
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (label, module, attribute path): the functions a part runs through; only a part's outermost call counts
PARTS = [
    ("victim_load", "bodega.victims.external", "open_victim"),
    ("warm_up", "bodega.attacks.runner", "NamedAttacker.warm_up"),
    ("victim_forwards", "bodega.victims.accounting", "QueryAccountant._compute"),
    ("examples", "bodega.attacks.runner", "_attack_all"),
    ("scoring", "bodega.attacks.runner", "_score"),
    ("substitute_lm", "bodega.mlm.causal", "CausalLMCandidates.word_predictions"),
    ("substitute_lm", "bodega.mlm.model", "MaskedLM.word_predictions"),
    ("substitute_lm", "bodega.mlm.model", "MaskedLM.masked_predictions"),
    ("substitute_lm_load", "bodega.mlm.causal", "CausalLMCandidates._load"),
    ("substitute_lm_load", "bodega.mlm.model", "MaskedLM._load"),
    ("wordnet_load", "nltk.corpus.reader.wordnet", "WordNetCorpusReader.__init__"),
    ("wordnet_version_map", "nltk.corpus.reader.wordnet", "WordNetCorpusReader.map_wn"),
    ("sentence_encoder", "bodega.attacks.constraints", "SentenceEncoder.encode"),
    ("sentence_encoder_load", "bodega.attacks.constraints", "SentenceEncoder._load"),
    ("pos_tagging", "bodega.attacks.pos", "PosTagger.tags"),
    ("pos_tagging", "bodega.attacks.pos", "PosTagger.tags_at"),
    ("wordnet_synonyms", "bodega.attacks.transformations", "WordNetSynonyms.synonyms"),
]
LOADS = ("substitute_lm_load", "wordnet_load", "sentence_encoder_load")
"""One-off loads: part of the start-up even where they happen during the first example."""
ATTACK_MODELS = ("substitute_lm", "sentence_encoder", "pos_tagging", "wordnet_synonyms")


def _instrument(totals: dict[str, float], during_examples: dict[str, float]) -> None:
    """Wrap every function of PARTS (importing its module) so that it adds its CPU time to ``totals``."""
    import importlib

    active: dict[str, int] = {}
    state = {"in_examples": False}

    def wrap(label: str, function):
        def timed(*args, **kwargs):
            outer = not active.get(label)
            active[label] = active.get(label, 0) + 1
            if label == "examples":
                state["in_examples"] = True
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                active[label] -= 1
                if label == "examples":
                    state["in_examples"] = False
                if outer:
                    spent = time.process_time() - start
                    totals[label] = totals.get(label, 0.0) + spent
                    if state["in_examples"]:
                        during_examples[label] = during_examples.get(label, 0.0) + spent
        return timed

    for label, module_name, path in PARTS:
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, wrap(label, getattr(owner, name)))


def _child(args: argparse.Namespace) -> None:
    """Run one cell in this process and print its parts as JSON (``--reused``: run it once untimed first, on a
    victim prediction cache of its own, as a worker process that stays alive from one cell to the next)."""
    totals: dict[str, float] = {}
    during: dict[str, float] = {}
    _instrument(totals, during)
    from bodega.attacks import run_attack

    def attack(cache: str):
        with tempfile.TemporaryDirectory() as out:
            return run_attack(args.task, args.victim, args.data, args.attacker[0], out, targeted=args.targeted,
                              n_examples=args.n, profile="cpu", prediction_cache=cache, precision=args.precision)
    start = 0.0
    if args.reused:
        attack(args.cache + ".first")
        totals.clear()
        during.clear()
        start = time.process_time()
    report = attack(args.cache)
    total = time.process_time() - start
    lazy = sum(during.get(label, 0.0) for label in LOADS)
    examples = totals.get("examples", 0.0)
    parts = {**totals, "total": total, "lazy_loads": lazy,
             "startup": total - examples - totals.get("scoring", 0.0) + lazy,
             "search": examples - sum(during.get(label, 0.0) for label in ("victim_forwards",) + ATTACK_MODELS)}
    outcome = [(r.index, r.adversarial, r.queries) for r in report.records]
    print(json.dumps({"parts": parts, "examples_attacked": len(report.records),
                      "queries": sum(r.queries for r in report.records),
                      "outcome_sha256": hashlib.sha256(json.dumps(outcome).encode()).hexdigest()}))


COLUMNS = ("total", "startup", "victim_load", "warm_up", "lazy_loads", "wordnet_load", "wordnet_version_map",
           "examples", "victim_forwards", "substitute_lm", "sentence_encoder", "pos_tagging", "wordnet_synonyms",
           "search", "scoring")


def _check_cells(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every named cell can run, checked before the first child starts: a bad name is one line, not a child's
    traceback after minutes of other cells."""
    from bodega.attacks.base import ATTACKERS
    from bodega.errors import BodegaError
    from bodega.layout import VICTIM_INFO
    from bodega.tasks import TASKS

    if args.n < 1:
        parser.error(f"--n {args.n}: give the examples per cell, an integer >= 1")
    try:
        for attacker in args.attacker:
            ATTACKERS.canonical(attacker)
        for cell in args.cell:
            task, equals, victim = cell.partition("=")
            if not equals:
                parser.error(f"--cell {cell}: write TASK=VICTIM_FOLDER, e.g. PR2=results/study-v3/models/PR2-BiLSTM")
            TASKS.canonical(task)
            if not (Path(victim) / VICTIM_INFO).is_file():
                parser.error(f"--cell {cell}: {victim} is not a trained victim's folder (no {VICTIM_INFO})")
            if not (Path(args.data) / task / "attack.tsv").is_file():
                parser.error(f"--cell {cell}: no {Path(args.data) / task / 'attack.tsv'}; prepare the task's data "
                             "(bodega data prepare-missing) or give --data")
    except BodegaError as error:
        parser.error(str(error))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", action="append", default=[], metavar="TASK=VICTIM_FOLDER")
    parser.add_argument("--attacker", action="append", default=[])
    parser.add_argument("--n", type=int, default=8, help="examples per cell")
    parser.add_argument("--targeted", action="store_true")
    parser.add_argument("--data", default="data", help="folder of the tasks' attack.tsv folders")
    parser.add_argument("--runs", default="cold",
                        help="comma-separated, in order: cold (a new process, empty caches), warm (a new process on "
                             "the attack-side caches the runs before filled, as another victim's cell on the same "
                             "texts; the victim's prediction cache starts empty), reused (one process runs the cell "
                             "twice and the second is timed: what a worker kept alive across cells would spend)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"),
                        help="the victim's and the attack's models' precision (a study grid's cells run at bf16)")
    parser.add_argument("--out", default=None, help="JSON file for the measurements (book/data/cell_profile*.json)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--task", help=argparse.SUPPRESS)
    parser.add_argument("--victim", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--reused", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return 0
    if not args.cell or not args.attacker:
        parser.error("give at least one --cell and one --attacker")
    if set(args.runs.split(",")) - {"cold", "warm", "reused"}:
        parser.error(f"--runs {args.runs}: use cold, warm and reused, comma-separated")
    _check_cells(parser, args)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    rows = []
    for cell in args.cell:
        task, _, victim = cell.partition("=")
        for attacker in args.attacker:
            with tempfile.TemporaryDirectory() as caches:
                env_cell = {**env, "BODEGA_SUBSTITUTE_CACHE": str(Path(caches) / "substitutes.sqlite")}
                command = [sys.executable, __file__, "--child", "--task", task, "--victim", victim,
                           "--data", str(Path(args.data) / task), "--attacker", attacker, "--n", str(args.n),
                           "--precision", args.precision]
                command += ["--targeted"] * args.targeted
                for caches_state in args.runs.split(","):
                    # the victim's predictions are never cached from an earlier run: a warm or reused run is another
                    # victim's cell on the same texts, which only the attack's own caches serve
                    command_run = command + ["--cache", str(Path(caches) / f"predictions-{caches_state}.sqlite")]
                    command_run += ["--reused"] * (caches_state == "reused")
                    started = time.time()
                    done = subprocess.run(command_run, env=env_cell, capture_output=True, text=True)
                    if done.returncode != 0:
                        sys.stderr.write(done.stderr[-3000:])
                        raise SystemExit(f"{task} {victim} {attacker}: the cell failed")
                    row = {"task": task, "victim": Path(victim).name, "attacker": attacker, "n": args.n,
                           "run": caches_state, "wall": round(time.time() - started, 2),
                           **json.loads(done.stdout.strip().splitlines()[-1])}
                    rows.append(row)
                    print(f"{row['victim']:>12} {attacker:>12} {caches_state} {row['outcome_sha256'][:12]} "
                          + " ".join(f"{c}={row['parts'].get(c, 0.0):.2f}" for c in COLUMNS), flush=True)
    header = ["victim", "attacker", "run", "queries"] + list(COLUMNS)
    print("\n" + " | ".join(header))
    for row in rows:
        print(" | ".join([row["victim"], row["attacker"], row["run"], str(row["queries"])]
                         + [f"{row['parts'].get(c, 0.0):.1f}" for c in COLUMNS]))
    if args.out:
        from bodega.precision import bf16_kernels, cpu_flags
        from bodega_book.page_data import write_page_data

        write_page_data("cell_profile", args.out, {
            "command": "python benchmarks/cell_profile.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "threads": 1, "precision": args.precision, "kernels": bf16_kernels(cpu_flags()), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
