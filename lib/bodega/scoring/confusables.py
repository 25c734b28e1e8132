"""Read text as a person sees it: fold look-alike characters (homoglyphs) to ASCII.

Character-level attacks swap letters for visually identical ones from other
scripts (Cyrillic ``е`` for ``e``, mathematical ``𝑛`` for ``n``). A reader does not
notice, but a subword encoder sees unknown tokens. Folding uses Unicode NFKC and
then the Unicode Consortium's confusables table (UTS #39, as shipped by the
``confusable-homoglyphs`` package): each non-ASCII character whose listed look-alike
is an ASCII letter or digit is replaced by it. ASCII text is never changed.
"""
from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from importlib.resources import files


@lru_cache(maxsize=1)
def confusable_table() -> dict[int, str]:
    """Map from code point to its ASCII look-alike, built once from the packaged UTS #39 data."""
    try:
        data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    except ModuleNotFoundError as error:
        raise RuntimeError("homoglyph folding needs the confusables table: "
                           "pip install confusable-homoglyphs==3.3.1") from error
    table: dict[int, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii():
            continue
        for entry in entries:
            target = entry["c"]
            if len(target) == 1 and target.isascii() and target.isalnum():
                table[ord(char)] = target
                break
    return table


def fold_confusables(text: str) -> str:
    """NFKC, then each remaining non-ASCII look-alike of an ASCII letter or digit replaced by it."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(confusable_table())
