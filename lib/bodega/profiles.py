"""The three scales the same code runs at: ``paper``, ``cpu`` and ``smoke``.

A profile maps each model role to a resource role of :mod:`bodega.resources` (or to
``None`` where the profile has no such model) and says whether the model hub may be
used. ``deviations`` (name -> one sentence) lists every way a profile differs from
BODEGA as it ran, the ``paper`` profile included, so that the book renders them from
here (book/deviations.md). A difference every profile shares goes in ``SHARED``; one
of a single profile in its own dict.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from bodega.errors import UnknownNameError
from bodega.registry import Registry


@dataclass(frozen=True)
class Profile:
    """One scale of the same code (paper, cpu, smoke): the model behind each role, whether the hub may be
    reached, and the deviations from the paper that the book lists for it."""

    name: str
    allow_hub: bool
    models: dict[str, str | None]
    deviations: dict[str, str] = field(default_factory=dict)
    max_train: int = 0  # 0 = every training row
    epochs: dict[str, int] = field(default_factory=dict)  # victim family, or "TASK-family", -> epochs
    select: str = "last"  # kept epoch: "last" (as BODEGA) or "dev" (best dev F1; a deviation)
    finetuning: dict[str, str] = field(default_factory=dict)  # victim family -> "lora"; absent: "full"

    def finetuning_for(self, kind: str) -> str:
        """How a victim family's encoder trains: ``full`` (every weight, as BODEGA's BERT) or ``lora`` (an
        adapter and the head, a few MB that travel with the results); the decoders always train LoRA."""
        return self.finetuning.get(kind, "full")

    def epochs_for(self, task: str, kind: str) -> int:
        """A task's own value (key ``FC-BERT``) wins over the family's (``BERT``): a small
        training set takes more epochs to reach the same number of optimiser steps."""
        epochs = self.epochs.get(f"{task}-{kind}", self.epochs.get(kind))
        if epochs is None:
            raise UnknownNameError(f"profile {self.name} sets no epochs for victim kind {kind}; give the epochs "
                                   "(--epochs, or training.epochs in a grid) or add the kind to the profile")
        return epochs


_SMALL_MODELS = {  # the smoke profile's: the smallest model of each role, for tests
    "GloVeBiLSTM": "glove-6b-50d",  # the word vectors its embeddings start from
    "BERT": "minilm",
    "MiniLM": "minilm",  # a smaller encoder than BERT's, selectable in every profile as victim MiniLM
    "GEMMA2B": "smollm2-instruct",  # the smaller decoder LM in the smaller Gemma's role
    "GEMMA7B": "gemma3-270m",
    "sentence-encoder": "minilm",
    "semantic": "cpu-default",  # chosen by measured agreement with people (see the book)
    "masked-lm": "minilm-mlm",
    "causal-lm": "gemma3-270m",
    "nli": None,
    "spacy": "spacy-en",
    "wordpiece-vocab": "wordpiece-vocab",
    "llm": "smollm2-instruct",  # AtomEval's LLM extractor and rewriter (a local chat model)
}

_CPU_MODELS = {  # the paper's size roles filled in increasing size (BiLSTM 1.1M < 110M < 270M < 0.5B)
    **_SMALL_MODELS,
    "BERT": "mpnet",  # all-mpnet-base-v2, 109.5M: BERT-base's size
    # The decoders, chosen by benchmarks/decoder_pilot.py: Qwen2.5-1.5B costs about 3x Qwen2.5-0.5B and 10x
    # Gemma-3-270M per forward and per training step (book, Victims), more than a cpu study affords.
    "GEMMA2B": "gemma3-270m",
    "GEMMA7B": "qwen2.5-0.5b",
}

SHARED: dict[str, str] = {
    "BiLSTM packing": ("the BiLSTM packs its sequences, so padding never reaches the LSTM and a prediction does not "
                       "depend on the other texts of its batch; BODEGA's BiLSTM ran over right padding (batch-"
                       "dependent). `bodega train --bilstm-padding right` trains and predicts as BODEGA did; the "
                       "measured effect is on the deviations page"),
    "queries": ("counted as BODEGA counts them: every text sent to the victim, repeats and cache hits "
                "included, with the example's initial prediction and the final check of the adversarial "
                "text, as OpenAttack's ClassificationAttacker asks them. The count is the same; what is asked "
                "can differ: OpenAttack's attackers re-send texts they already asked about (Genetic about "
                "3x), and a native attacker that does not asks fewer queries for the same search (the "
                "attackers' as-run settings say which do); the openattack backend asks as BODEGA did"),
    "TSV reading": ("texts are un-escaped in one pass; BODEGA's chained replace turns a literal backslash "
                    "followed by n into a newline"),
    "HN data": ("the by-article part of SemEval-2019 Task 4 (645 + 628 articles) instead of BODEGA's by-publisher "
                "training set (60,235 articles): far less training data"),
    "FC data": ("FeverSymmetric pairs (a claim with one gold evidence sentence) instead of FEVER with Wikipedia "
                "evidence"),
    "RD data": ("source tweets only (RPDNN leave-one-event-out data) instead of the augmented threads (source and "
                "replies); no RD text reaches 512 tokens here, so trimming never cuts one"),
    "sentence splitting": ("NLTK punkt (English) splits HN and RD texts for the semantic score; BODEGA used the "
                           "LAMBO segmenter, not installable offline: sentence alignment of long texts can differ"),
    "SCPN": ("the published SCPN weights and Stanford parser are not reachable offline: the network is implemented "
             "and runs where the user supplies the files; without a parser command it parses with an approximate "
             "tree from spaCy's dependency parse"),
    "victim cache": ("predictions are cached by a hash of the model's files and text, only misses computed; "
                     "BODEGA's cache is keyed by the model's path and recomputes a whole batch on one miss "
                     "(same probabilities, fewer forwards)"),
    "part-of-speech tags": ("PWWS, TextFooler, Genetic, PSO and BAE take part-of-speech tags from spaCy; OpenAttack's "
                            "NLTK tagger files come from its dead server and cannot be loaded"),
    "BAE": ("with fidelity as-run (the paper profile's default; openattack_search=) BAE runs OpenAttack 2.1.1's "
            "own search, quirks included: lower-cased words split on spaces, [UNK] inserted after each word to rank "
            "it, fillers masked at sub-word position word index + 1 of the original text, its part-of-speech rule "
            "(the Penn tags of the whole word list unchanged), similarity of the whole text (no window) at least "
            "0.936, one query at a time, candidate aliasing (tested against OpenAttack's BAEAttacker). Not "
            "reproduced: the Universal Sentence Encoder (the profile's MiniLM cosine meets USE's 0.936) and NLTK's "
            "perceptron tagger (spaCy's Penn tags of the same word list); with fidelity fixed (other profiles) BAE "
            "runs the project's search (bodega.attacks.mlm_search)"),
    "scorer edge cases": ("where BODEGA's scorer divides by zero (two empty texts, an original with no sentences) "
                          "ours gives a character score of 1 and scores the text whole"),
    "punctuation tokenizer": ("BODEGA's normalisation re-joins OpenAttack's PunctTokenizer tokens as NLTK 3.10.4 "
                              "splits them; older NLTK versions differ for a sentence mark before a curly quote and "
                              "for combining accents"),
    "semantic batching": ("semantic-model pairs are batched by length and duplicates scored once; BODEGA sends "
                          "batches of 16 in input order (the same inputs: differences are floating-point noise)"),
}

FIXED_ATTACKERS: dict[str, str] = {
    "attackers (fidelity=fixed)": (
        "native attackers run with the project's fixes, each a named option that `--option fidelity=as-run` (or the "
        "option itself) turns back: respace (OpenAttack re-joins tokens with single spaces and lower-cases in "
        "PWWS, TextFooler, Genetic and PSO), reask (OpenAttack re-sends texts it already asked), openattack_order "
        "(OpenAttack's order of work and random draws in DeepWordBug, PWWS and Genetic), homoglyphs (OpenAttack's "
        "DeepWordBug table has no capitals), openattack_bests (PSO's bests never update), openattack_search "
        "(BERT-ATTACK's candidate aliasing and last word never ranked), sticky_threshold (TextFooler keeps a "
        "threshold one short text changed); the Attacks chapter measures each"),
}
"""The attackers' fixes, in force where a profile's default fidelity is "fixed" (cpu, smoke)."""
"""Deviations in force in every profile; another component adds its own here (or to one profile's dict)."""

PROFILES: Registry[Profile] = Registry("profile")
"""Every profile by its name; grids, commands and cell keys read the profiles from here."""


def register_profile(profile: Profile) -> None:
    """Make ``profile`` known by its name to every command and grid."""
    PROFILES.register(profile.name, profile)


register_profile(Profile(
    "paper", allow_hub=True,
    models={
        "GloVeBiLSTM": "glove-6b-50d", "BERT": "bert-base-uncased", "MiniLM": "minilm", "GEMMA2B": "gemma-2b",
        "GEMMA7B": "gemma-7b",
        "sentence-encoder": "minilm", "semantic": "bleurt-20", "masked-lm": "bert-base-uncased",
        "causal-lm": "gpt2", "nli": "mnli", "spacy": "spacy-en", "wordpiece-vocab": "wordpiece-vocab",
        "llm": None,  # an OpenAI-compatible endpoint, given as openai:<model>[@<base_url>]
    },
    deviations={**SHARED,
                "sentence-encoder": ("MiniLM sentence embeddings instead of the Universal Sentence Encoder for "
                                     "TextFooler's and BAE's similarity constraint (no PyTorch USE)")},
    epochs={"BiLSTM": 10, "GloVeBiLSTM": 10, "BERT": 5, "MiniLM": 5, "GEMMA2B": 5, "GEMMA7B": 5},
))
register_profile(Profile(
    "cpu", allow_hub=False, models=dict(_CPU_MODELS),
    deviations={
        **SHARED, **FIXED_ATTACKERS,
        "epoch selection": "the epoch with the best dev F1 is kept; BODEGA keeps the last epoch",
        "epochs": ("BERT (MPNet) and MiniLM 2 epochs (FC 10), the decoders 1 epoch; BODEGA trains "
                   "transformers 5 epochs"),
        "BERT": ("all-mpnet-base-v2 (MPNet, 12 layers, 109.5M parameters, a sentence-transformers model; an "
                 "unofficial re-upload) instead of bert-base-uncased (110M): the same size, another pretraining; "
                 "victim MiniLM (all-MiniLM-L6-v2, 22.7M) is a smaller encoder beside it"),
        "BERT fine-tuning": ("LoRA (r 8 on every linear layer of the encoder, the classification head trained "
                             "whole, peak learning rate 4e-4) instead of BODEGA's full fine-tuning: the adapter "
                             "and head, a few MB stored in the run precision, are committed with the results "
                             "and load with the same weights hash on any machine, where a fully fine-tuned "
                             "MPNet (419 MB) was trained again on each machine and its weights differed "
                             "between CPU types; the decoders are LoRA-tuned in every profile"),
        "GloVeBiLSTM": ("victim GloVeBiLSTM, beside BODEGA's BiLSTM: the same network with 50-d embeddings started "
                        "from GloVe 6B (whole-word WordPiece tokens) instead of learnt from random; BODEGA's BiLSTM "
                        "learns its embeddings from 172,763 FC pairs and 60,235 HN articles, not from the 702 and "
                        "643 here, so it is tried where the BiLSTM is not competent"),
        "GEMMA2B": ("LoRA on Gemma-3-270M (de-quantised from GGUF Q4_K_M) instead of QLoRA on Gemma-2B (2.5B): "
                    "the smaller decoder LM in the smaller Gemma's role"),
        "GEMMA7B": ("LoRA on Qwen2.5-Coder-0.5B-Instruct (494M; de-quantised from GGUF Q4_K_M, an unofficial "
                    "re-upload) instead of QLoRA on Gemma-7B (8.5B): the larger decoder in the larger Gemma's "
                    "role; the two decoders are of two families, so a size claim within one family is not "
                    "testable (Qwen2.5-Coder-1.5B, the same family's larger size, is installed as role "
                    "qwen2.5-1.5b but costs about 3x per query)"),
        "semantic": ("mpnet-cosine-folded (all-mpnet-base-v2 cosine after folding look-alike letters), chosen by "
                     "agreement with people, instead of BLEURT-20"),
        "masked-lm": "a masked-LM head fitted on MiniLM with task text instead of bert-base-uncased; BERT-ATTACK "
                     "and BAE take substitutes from Gemma-3-270M's left-context prediction instead (measured "
                     "better; candidates=masked-lm selects the MiniLM head)",
        "causal-lm": "Gemma-3-270M instead of GPT-2 for perplexity",
        "nli": "no NLI model: AtomEval matching uses slots and WordNet only",
        "sentence-encoder": "MiniLM sentence embeddings instead of the Universal Sentence Encoder",
        "llm": ("SmolLM2-135M-Instruct (local, de-quantised from GGUF Q4_1, greedy) instead of the paper's "
                "LLMs behind a chat endpoint; far weaker at atom extraction and rewriting"),
    },
    # FC-BERT: FC has 702 training rows (44 steps an epoch); MiniLM stays at chance for about
    # 250 steps and learns after that (measured on dev: book, Victims, "FC on the cpu profile").
    epochs={"BiLSTM": 10, "GloVeBiLSTM": 10, "BERT": 2, "FC-BERT": 10, "MiniLM": 2, "FC-MiniLM": 10, "GEMMA2B": 1,
            "GEMMA7B": 1},
    select="dev", finetuning={"BERT": "lora"},
))
_CPU = PROFILES["cpu"]
register_profile(replace(
    _CPU, name="cpu-full-bert", finetuning={},
    deviations={name: text for name, text in _CPU.deviations.items() if name != "BERT fine-tuning"},
))
"""The cpu profile with its BERT role fully fine-tuned, as BODEGA trains BERT: the other side of the fine-tuning
ablation (parameters/grid_finetuning_full.yaml), whose 419 MB victims are not committed."""
register_profile(Profile(
    "smoke", allow_hub=False, models=dict(_SMALL_MODELS),
    deviations={**SHARED, **FIXED_ATTACKERS,
                "scale": "toy training subsets and a handful of examples: for tests only",
                "epoch selection": "the epoch with the best dev F1 is kept; BODEGA keeps the last epoch"},
    max_train=200, epochs={"BiLSTM": 1, "GloVeBiLSTM": 1, "BERT": 1, "MiniLM": 1, "GEMMA2B": 1, "GEMMA7B": 1},
    select="dev",
))


def get_profile(name: str) -> Profile:
    """The profile of that name; an unknown name is a user error that lists the known ones."""
    return PROFILES[name]
