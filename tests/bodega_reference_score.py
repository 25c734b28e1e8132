"""A slow, literal copy of BODEGA's scorer (``metrics/BODEGAScore.py`` at 2dda5a6), for the tests.

Written from BODEGA's code, not from ours: the same loops, the same float arithmetic, the
same normalisation through OpenAttack 2.1.1's own ``PunctTokenizer`` class. What had to
be substituted, and why it cannot change a result:

- OpenAttack loads its punkt model and part-of-speech tagger as pickles from its server;
  neither can be downloaded here and the installed NLTK refuses pickles. The tokenizer
  gets NLTK's English punkt model (``PunktTokenizer("english")``, the same model) and a
  tagger stand-in: BODEGA keeps only the words of ``do_tokenize``'s (word, tag) pairs.
- ``editdistance.eval`` (not installed) is the plain Levenshtein distance, as is
  ``Levenshtein.distance``.
- LAMBO (no offline model) is replaced by the package's documented substitute: each
  line split with NLTK's English punkt, blank pieces dropped. This is NLTK's own punkt,
  not the package's faster copy.
- The semantic scorer is a function passed in (BLEURT needs the model hub).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import Levenshtein
import numpy


@lru_cache(maxsize=1)
def openattack_tokenizer():
    """OpenAttack 2.1.1's PunctTokenizer, its models supplied offline (see above)."""
    import nltk
    from OpenAttack.text_process.tokenizer import PunctTokenizer

    from bodega.resources import use_nltk_data

    use_nltk_data()
    tokenizer = PunctTokenizer.__new__(PunctTokenizer)
    tokenizer.sent_tokenizer = nltk.tokenize.PunktTokenizer("english").tokenize
    tokenizer.word_tokenizer = nltk.WordPunctTokenizer().tokenize
    tokenizer.pos_tagger = lambda tokens: [(token, "NN") for token in tokens]
    return tokenizer


@lru_cache(maxsize=1)
def nltk_punkt():
    import nltk

    from bodega.resources import use_nltk_data

    use_nltk_data()
    return nltk.tokenize.PunktTokenizer("english")


@dataclass
class Promise:
    s1: str
    s2: str | None


class ReferenceBODEGAScore:
    """``BODEGAScore`` with ``align_sentences=True``, as ``runs/attack.py`` builds it."""

    def __init__(self, task: str, similarity: Callable[[list[str], list[str]], list[float]]):
        self.task = task
        self.similarity = similarity
        self.tokenizerOA = openattack_tokenizer()
        self.promises: list[Promise] = []
        self.sent_to_model: list[tuple[str, str]] = []

    def after_attack(self, original: str, adversarial: str | None) -> None:
        self.promises.append(Promise(original, adversarial))

    def normalise_for_lev(self, string):
        result = string.lower().replace('\n', ' ')
        result = self.tokenizerOA.do_detokenize([x[0] for x in self.tokenizerOA.do_tokenize(result)])
        return result

    def normalise_for_bert(self, string):
        if string is None:
            return 'NOT_GENERATED'
        else:
            result = string.replace('\n', ' ')
            result = self.tokenizerOA.do_detokenize([x[0] for x in self.tokenizerOA.do_tokenize(result)])
            return result

    def compute(self):
        """Returns (success, semantic, character, BODEGA) and, per example, (semantic, character, B)."""
        alignments = self.align_sentences_greedy()
        SS_sentences = []
        SS_guide = []
        for i, alignment in enumerate(alignments):
            SS_guide.append([])
            for sent1, sent2 in alignment:
                SS_guide[-1].append(len(SS_sentences))
                SS_sentences.append((self.normalise_for_bert(sent1), self.normalise_for_bert(sent2)))
        self.sent_to_model = SS_sentences
        sentence_similarity = self.similarity([p[0] for p in SS_sentences], [p[1] for p in SS_sentences])
        B_scores = []
        semantic_scores = []
        character_scores = []
        successes = []
        per_example = []
        for i, promise in enumerate(self.promises):
            if promise.s2 is None:
                B_scores.append(0.0)
                successes.append(0.0)
                per_example.append((None, None, 0.0))
            else:
                normalised_s1 = self.normalise_for_lev(promise.s1)
                normalised_s2 = self.normalise_for_lev(promise.s2)
                lev_dist = Levenshtein.distance(normalised_s1, normalised_s2)
                lev_score = 1.0 - lev_dist / max(len(normalised_s1), len(normalised_s2))
                character_scores.append(lev_score)
                semantic_score = 0
                for idx in SS_guide[i]:
                    if sentence_similarity[idx] <= 0:
                        semantic_score += 0
                    elif sentence_similarity[idx] >= 1:
                        semantic_score += 1
                    else:
                        semantic_score += sentence_similarity[idx]
                semantic_score = semantic_score / len(SS_guide[i])
                semantic_scores.append(semantic_score)
                B_scores.append(semantic_score * lev_score)
                successes.append(1.0)
                per_example.append((semantic_score, lev_score, semantic_score * lev_score))
        totals = (numpy.average(numpy.array(successes)), numpy.average(numpy.array(semantic_scores)),
                  numpy.average(numpy.array(character_scores)), numpy.average(numpy.array(B_scores)))
        return totals, per_example

    def align_sentences_greedy(self):
        result = []
        for promise in self.promises:
            if promise.s2 is None:
                result.append([])
                continue
            alignment = []
            doc1_sentences = self.segment_sentences(promise.s1)
            doc2_sentences = self.segment_sentences(promise.s2)
            for sentence1 in doc1_sentences:
                best_sentence2 = None
                best_distance = len(promise.s1) + len(promise.s2) + 10
                for sentence2 in doc2_sentences:
                    normalised1 = self.normalise_for_lev(sentence1)
                    normalised2 = self.normalise_for_lev(sentence2)
                    if len(normalised1) == 0 and len(normalised2) == 0:
                        lev_dist = 0
                    else:
                        lev_dist = Levenshtein.distance(normalised1, normalised2) / max(len(normalised1),
                                                                                        len(normalised2))
                    if lev_dist < best_distance:
                        best_distance = lev_dist
                        best_sentence2 = sentence2
                alignment.append((sentence1, best_sentence2))
            result.append(alignment)
        return result

    def segment_sentences(self, string):
        result = []
        if self.task == 'PR2':
            result = [string]
        elif self.task == 'FC':
            result = string.split('~')
        elif self.task == 'RD' or self.task == 'HN' or self.task == 'C19':
            # LAMBO's turns and sentences -> the documented substitute: punkt within each line
            for line in string.splitlines():
                if line.strip():
                    result.extend(s for s in nltk_punkt().tokenize(line) if s.strip())
        return result


def openattack_style(text: str) -> str:
    """What OpenAttack's word-level attackers emit: lower-cased PunctTokenizer tokens joined by spaces."""
    return " ".join(openattack_tokenizer().tokenize(text.lower(), pos_tagging=False))
