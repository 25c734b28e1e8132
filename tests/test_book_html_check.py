"""The scan of the built book's HTML finds what a reader must not see, and only that."""
from __future__ import annotations

import pytest

from bodega_book.html_check import book_problems, main, page_problems, typographic_dashes

CLEAN = """<html><head><script>var nan = 1; // Traceback (most recent call last)</script></head><body>
<p>Financial nuance: 25 claims, +0.06 median, Nancy; a grid named demo-nano.</p>
<div class="highlight-bash"><pre>bodega attack --victim results/x --n 30 -p grid parameters/a.yaml</pre></div>
<p>BODEGA 0.56 – 0.60 (an en dash in prose is fine)</p></body></html>"""


def _whats(html: str) -> list[str]:
    return [p.what for p in page_problems(html, "p.html")]


def test_a_clean_page_has_no_problem():
    assert page_problems(CLEAN, "p.html") == []


@pytest.mark.parametrize("text, what", [
    ("<p>saved 12 hours (nan% of what remains)</p>", "nan"),
    ("<td>+nan</td>", "nan"),
    ("<td>nan</td>", "nan"),
    ("<p>So far {glue:text}`n_changed` of the claims</p>", "unrendered glue"),
    ("<pre>Traceback (most recent call last):\n  File x</pre>", "a traceback"),
    ("<pre>cost.py:12: RuntimeWarning: invalid value encountered</pre>", "a warning"),
])
def test_what_a_reader_must_not_see_is_found(text, what):
    assert what in _whats(f"<html><body>{text}</body></html>")


def test_nan_in_code_is_code_not_a_lost_number():
    assert _whats('<pre>glue("gap", float("nan"))</pre><td>[Semantic score: nan, BODEGA score: 0.0]</td>') == []
    assert _whats("<table><tr><td>nan</td></tr></table>") == ["nan"]


def test_a_cells_error_output_is_found_and_its_log_lines_are_not():
    assert "a cell's error output" in _whats('<div class="output error"><pre>x</pre></div>')
    assert _whats('<div class="output stderr"><pre>12:00 INFO bodega.data: 400 rows</pre></div>') == []


def test_a_command_with_a_typographic_dash_is_found_in_code_and_in_prose():
    assert typographic_dashes("bodega attack \u2013victim x --n 3") == ["\u2013victim"]
    assert typographic_dashes("bodega attack \u2014-out x") == ["\u2014-out"]
    assert typographic_dashes("scores 0.5 \u2013 0.6") == []  # a range in prose or output, not an option
    assert "a command with a typographic dash" in _whats("<code>bodega attack \u2013victim x</code>")
    assert _whats("<p>made by bodega attack \u2013victim x</p>") == ["an option with a typographic dash in prose"]
    assert _whats("<p>scores 0.5\u20130.6 \u2013 as before</p>") == []


def test_a_built_book_with_a_problem_fails_and_names_the_page(tmp_path, capsys):
    (tmp_path / "ok.html").write_text(CLEAN)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.html").write_text("<p>+nan</p>")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "theme.html").write_text("<p>nan</p>")  # the theme's files are not pages
    assert [(p.page, p.what) for p in book_problems(tmp_path)] == [("sub/bad.html", "nan")]
    assert main([str(tmp_path)]) == 1
    assert "sub/bad.html: nan" in capsys.readouterr().err
    (tmp_path / "sub" / "bad.html").write_text("<p>0.5</p>")
    assert main([str(tmp_path)]) == 0


def test_no_built_page_is_an_error_not_a_pass(tmp_path):
    with pytest.raises(FileNotFoundError, match="no built pages"):
        book_problems(tmp_path)
