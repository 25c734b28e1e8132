"""Word-level diffs for people: marked plain text and inline-styled HTML."""
from __future__ import annotations

from bodega.report.diff import render_diff_html, render_diff_text


def test_text_diff_marks_replaced_inserted_and_deleted_words():
    assert render_diff_text("the burj khalifa is in asia.", "the burj khalifa is in exile.") == \
        "the burj khalifa is in [-asia.-]{+exile.+}"
    assert render_diff_text("there was a political event", "there was hardly a political event") == \
        "there was {+hardly+} a political event"
    assert render_diff_text("a very big dog", "a big dog") == "a [-very-] big dog"


def test_unchanged_text_keeps_its_spacing():
    original = "Line one.\n\nLine  two has  spaces."
    assert render_diff_text(original, original) == original
    assert render_diff_text("a  b\nc", "a  x\nc") == "a  [-b-]{+x+}\nc"


def test_html_diff_escapes_and_uses_del_and_ins_with_inline_style():
    html = render_diff_html("x <y> & z", "x <w> & z")
    assert html.startswith('<span class="bodega-diff">') and html.endswith("</span>")
    assert '<del class="bodega-del" style="' in html and ">&lt;y&gt;</del>" in html
    assert '<ins class="bodega-ins" style="' in html and ">&lt;w&gt;</ins>" in html
    assert " &amp; z" in html and "<y>" not in html


def test_identical_texts_have_no_markup():
    assert "<del" not in render_diff_html("same words", "same words")
    assert render_diff_text("", "") == ""
