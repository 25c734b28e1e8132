"""DeepWordBug: one character edit in each of the most important words (see :mod:`bodega.attacks.word_recipes`)."""
from __future__ import annotations

from functools import partial

from bodega.errors import BodegaError
from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import UNK_TEXT
from bodega.attacks.searches.char_edit import char_edit_search
from bodega.attacks.transformations import character_edit, openattack_homoglyph
from bodega.extras import require


def deepwordbug(profile: str = "cpu", transform: str = "homoglyph", power: int = 5, unk: str = UNK_TEXT,
                fidelity: str = "profile", respace: bool | None = None, reask: bool | None = None,
                openattack_order: bool | None = None, homoglyphs: str | None = None):
    """DeepWordBug (Gao et al. 2018): one character edit in each of the ``power`` most important words.

    ``transform`` is homoglyph (default), swap, delete, insert or substitute.
    ``homoglyphs="bodega"`` is the project's table, which covers capitals too;
    ``"openattack"`` is OpenAttack's (lower case, digits, ``-`` and ``'`` only: an edit of a
    capital is a no-op there). OpenAttack's ``swap`` calls a scoring function by mistake;
    here it swaps. OpenAttack does not lower-case DeepWordBug's input, only re-spaces it.
    """
    as_run = flag(None, profile, fidelity)
    homoglyphs = homoglyphs or ("openattack" if as_run else "bodega")
    if homoglyphs not in ("openattack", "bodega"):
        raise BodegaError(f"homoglyphs={homoglyphs!r}: choose 'openattack' or 'bodega'")
    if transform == "homoglyph" and homoglyphs == "openattack":
        require("OpenAttack", "DeepWordBug's homoglyphs='openattack' (OpenAttack's table; 'bodega' needs none)")
    edit = (openattack_homoglyph if transform == "homoglyph" and homoglyphs == "openattack"
            else character_edit(transform))
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(char_edit_search, edit=edit, power=power, unk=unk, openattack_order=ordered)
    return WordLevelAttacker("DeepWordBug", search, None,
                             dict(transform=transform, power=power, homoglyphs=homoglyphs, openattack_order=ordered),
                             respace=flag(respace, profile, fidelity), lower=False,
                             reask=flag(reask, profile, fidelity))


register_attacker("DeepWordBug", deepwordbug)
