"""Show people what an attack changed: a word-level diff as HTML or as marked plain text.

Texts are split into words and the whitespace after them, difflib aligns the word
sequences, and unchanged runs are copied with their original spacing. HTML uses
``<del>``/``<ins>`` with inline styles, so it renders the same in Jupyter Book, a
notebook or a browser without a stylesheet.
"""
from __future__ import annotations

import difflib
import html
import re

_TOKEN = re.compile(r"\S+\s*|\s+")
_DEL_STYLE = "background:#fdd;color:#900;text-decoration:line-through"
_INS_STYLE = "background:#dfd;color:#060;text-decoration:none;font-weight:bold"


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def diff_opcodes(original: str, adversarial: str) -> list[tuple[str, str, str]]:
    """(tag, original piece, adversarial piece) with tag in equal/delete/insert/replace."""
    old, new = _tokens(original), _tokens(adversarial)
    matcher = difflib.SequenceMatcher(None, [t.strip() for t in old], [t.strip() for t in new],
                                      autojunk=False)
    return [(tag, "".join(old[i1:i2]), "".join(new[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def _split_space(piece: str) -> tuple[str, str]:
    stripped = piece.rstrip()
    return stripped, piece[len(stripped):]


def render_diff_text(original: str, adversarial: str) -> str:
    """Plain text with ``[-removed-]{+added+}`` markers; unchanged text keeps the adversarial spacing."""
    out = []
    for tag, old, new in diff_opcodes(original, adversarial):
        if tag == "equal":
            out.append(new)
            continue
        old_words, old_space = _split_space(old)
        new_words, new_space = _split_space(new)
        marked = (f"[-{old_words}-]" if old_words else "") + (f"{{+{new_words}+}}" if new_words else "")
        out.append(marked + (new_space if new else old_space))
    return "".join(out)


def render_diff_html(original: str, adversarial: str) -> str:
    """HTML with removed words in ``<del>`` and added words in ``<ins>``, inline-styled, escaped."""
    out = []
    for tag, old, new in diff_opcodes(original, adversarial):
        if tag == "equal":
            out.append(html.escape(new))
            continue
        old_words, old_space = _split_space(old)
        new_words, new_space = _split_space(new)
        if old_words:
            out.append(f'<del class="bodega-del" style="{_DEL_STYLE}">{html.escape(old_words)}</del>')
        if new_words:
            out.append(f'<ins class="bodega-ins" style="{_INS_STYLE}">{html.escape(new_words)}</ins>')
        out.append(html.escape(new_space if new else old_space))
    return '<span class="bodega-diff">' + "".join(out) + "</span>"
