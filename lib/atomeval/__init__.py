"""AtomEval: validity-aware evaluation of adversarial claim rewriting (SROM atoms, one-way gate, VASR)."""
__version__ = "0.1.0"
