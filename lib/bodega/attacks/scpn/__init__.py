"""SCPN (Iyyer et al. 2018), reimplemented so the published model files load and paraphrase.

Parts, one job each: :mod:`.bpe` (applying the published BPE codes), :mod:`.files`
(safe loading of the checkpoints and vocabularies), :mod:`.networks` (the parse
generator and the paraphrase network, with batched beam search), :mod:`.parse`
(constituency parses: a user's parser, or an approximation from spaCy) and
:mod:`.paraphraser` (sentence + templates -> paraphrases). The attacker that uses
them is :mod:`bodega.attacks.recipes.scpn`.
"""
