"""AtomEval: validity-aware evaluation of adversarial claim rewriting (SROM atoms, one-way gate, VASR).

Modules: ``atoms`` (the atom and its JSON schema), ``normalise`` (slot normalisation), ``gold`` (the
hand-checked gold atoms and extractor accuracy), ``extract_spacy`` / ``extract_llm`` (extractors),
``llm`` (chat clients), ``lexicon`` (WordNet), ``matching`` (slot comparison), ``gate`` (the gate and its
diagnostics), ``models`` (NLI, SBERT, perplexity), ``metrics`` (ASR, VASR, S-ASR, P-ASR),
``rewriters`` (rule and LLM rewriters), ``human`` (agreement with people), ``attack_runs`` (VASR of
BODEGA attack runs), ``fever`` (refuted claims), ``verdicts`` (a verifier's verdicts kept by weights hash),
``ablation`` (the gate without its extractor or its matcher), ``experiment`` (what the notebook and
``bodega atomeval`` call), ``pipeline`` (the resumable rewriter experiment). Importing the package loads no model.
"""
from bodega import __version__ as __version__  # one version: the installed distribution's (bodega-repro)
