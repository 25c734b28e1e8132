"""The browser check of the built book: chromium lays out each page at 1400 x 900 and the check fails on a page
too tall, an answer box below the first screen and a command with a typographic dash (chromium and
chromium-driver come from Debian through scripts/setup-env.sh)."""
from __future__ import annotations

import re

from bodega_book.browser_check import MAX_HEIGHT, main

BOX = '<div class="admonition tip answer-box"><p>the answers</p></div>'


def _write(folder, pages):
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in pages.items():
        (folder / name).write_text(f"<html><body>{body}</body></html>", encoding="utf-8")


def test_a_readable_book_passes_and_its_screenshots_are_saved(tmp_path, capsys):
    html = tmp_path / "html"
    _write(html, {"intro.html": f"<h1>Title</h1>{BOX}<pre>bodega attack --victim x</pre>",
                  "atomeval.html": f"<h1>AtomEval</h1>{BOX}", "study.html": '<div style="height:5000px">s</div>'})
    assert main([str(html), "--screenshots", str(tmp_path / "shots")]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "shots").iterdir()) == ["intro.png", "study.png"]
    assert (tmp_path / "shots" / "study.png").read_bytes()[:4] == b"\x89PNG"


def test_a_tall_page_a_late_answer_box_and_a_dashed_command_fail(tmp_path, capsys):
    html = tmp_path / "html"
    _write(html, {"intro.html": f"<h1>Title</h1>{BOX}<code>bodega attack \u2013victim x</code>",
                  "atomeval.html": f'<div style="height:1000px">intro</div>{BOX}',
                  "study.html": f'<div style="height:{MAX_HEIGHT + 100}px">s</div>'})
    assert main([str(html)]) == 1
    err = capsys.readouterr().err
    assert "intro.html: a command with a typographic dash: 'bodega attack \u2013victim x'" in err
    assert "atomeval.html: the answer box ends at" in err and "below the first screen (900 px)" in err
    assert re.search(rf"study\.html: \d+ px tall at 1400 px wide \(limit {MAX_HEIGHT}\)", err)


def test_a_front_page_without_its_answer_box_fails(tmp_path, capsys):
    html = tmp_path / "html"
    _write(html, {"intro.html": "<h1>Title</h1><p>definitions</p>", "atomeval.html": BOX})
    assert main([str(html)]) == 1
    assert "intro.html: no answer box" in capsys.readouterr().err
