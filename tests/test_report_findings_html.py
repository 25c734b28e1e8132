"""The findings table and the front page's headline verdicts, as HTML, on hand-made findings."""
from __future__ import annotations

import re

import pytest

from bodega_book.findings import AGREE, CANNOT_TELL, DISAGREE, NOT_COMPARABLE, Figure, Finding
from bodega_book.findings_html import (BADGE_COLOURS, badge, badge_label, findings_html, headline_html,
                                         held_across_trainings, numbers_html)
from bodega.report.uncertainty import Interval

BEST = Figure("BERT-ATTACK", Interval(0.6, 0.5, 0.7))


def finding(claim: str = "q1-hn-best", verdict: str = AGREE, **fields: object) -> Finding:
    values = {"paper": "best attacker: BERT-ATTACK (BODEGA 0.56)", "task": "HN",
              "evidence": "best BERT-ATTACK 0.600 [0.500, 0.700] over BERT; every other attacker distinguishable",
              "reason": "BERT-ATTACK is our best attacker too", "differs": "semantic", "quote": "",
              "numbers": (BEST,), "paper_value": "BERT-ATTACK 0.56", **fields}
    return Finding(claim, verdict=verdict, **values)


@pytest.mark.parametrize("verdict, colour", [(AGREE, "#2e7d32"), (DISAGREE, "#c62828"),
                                             (NOT_COMPARABLE, "#b45309"), (CANNOT_TELL, "#6b7280")])
def test_each_verdict_has_its_colour(verdict, colour):
    html = findings_html([finding(verdict=verdict)])
    assert f"background:{colour}" in html and f">{verdict}</span>" in html


def test_not_testable_here_is_a_grey_cannot_tell():
    untestable = finding(verdict=CANNOT_TELL, reason="not testable here: two sizes of one family")
    assert badge_label(untestable) == "not testable here"
    assert f"background:{BADGE_COLOURS[CANNOT_TELL]}" in badge(badge_label(untestable))
    assert badge_label(finding(verdict=CANNOT_TELL, reason="no finished run")) == CANNOT_TELL


def test_one_row_per_finding_with_its_reasons_folded():
    found = [finding(), finding("q1-pr-best", DISAGREE, task="PR2", quote="Genetic is best", reason="BAE wins")]
    html = findings_html(found)
    assert html.count('<tr class="finding">') == 2
    assert html.count("<details><summary>why</summary>") == 2
    folded = re.findall(r"<details>.*?</details>", html)[1]
    assert "“Genetic is best”" in folded and "BAE wins" in folded and "0.600 [0.500, 0.700]" in folded


def test_every_text_is_escaped():
    html = findings_html([finding(quote="scores <b>27%</b> & more", paper="A <script>", left_out="x<y")])
    assert "&lt;b&gt;27%&lt;/b&gt; &amp; more" in html and "A &lt;script&gt;" in html and "x&lt;y" in html
    assert "<b>" not in html and "<script>" not in html


def test_numbers_are_ours_against_the_papers():
    assert numbers_html(finding()) == "BERT-ATTACK 0.600 [0.500, 0.700] vs BERT-ATTACK 0.56"
    queries = finding("q3-queries-FC", task="FC", numbers=(Figure("PWWS", Interval(101.94, 82.2, 122.5), 1),),
                      paper_value="100 to 200")
    assert numbers_html(queries) == "PWWS 101.9 [82.2, 122.5] vs 100 to 200"
    assert numbers_html(finding(numbers=(BEST,), paper_value="")) == "BERT-ATTACK 0.600 [0.500, 0.700]"
    assert numbers_html(finding(evidence="–", numbers=())) == "–"


def test_the_numbers_come_from_the_finding_not_its_evidence_text():
    reworded = finding(evidence="the winner is BERT-ATTACK, scoring 0.600 [0.500, 0.700]; PWWS 0.100 [0.0, 0.2]")
    assert numbers_html(reworded) == numbers_html(finding())
    assert numbers_html(finding(numbers=())) == "–"  # the evidence still states intervals; none is carried


def test_an_ordering_shows_one_difference_per_pair_against_above_zero():
    gaps = (Figure("BiLSTM − BERT", Interval(0.098, 0.031, 0.172)),
            Figure("BiLSTM − GEMMA7B", Interval(0.027, -0.092, 0.157)))
    ordering = finding("q2-bilstm-PR2", paper="BiLSTM is the most vulnerable victim", numbers=gaps, paper_value="> 0")
    assert numbers_html(ordering) == ("BiLSTM − BERT 0.098 [0.031, 0.172]<br>BiLSTM − GEMMA7B 0.027 [-0.092, 0.157]"
                                      "<br>vs &gt; 0")
    ratio = finding("q2-fc-gemma7b-bert", numbers=(Figure("GEMMA7B / BERT", Interval(1.1, 0.9, 1.3)),),
                    paper_value="1.27")
    assert numbers_html(ratio) == "GEMMA7B / BERT 1.100 [0.900, 1.300] vs 1.27"


def test_a_proxy_is_not_set_against_the_papers_value():
    semantic = (Figure("HN", Interval(0.991, 0.986, 0.995)), Figure("FC", Interval(0.9, 0.8, 0.95)))
    proxy = finding("manual-analysis", paper="82.5% of the best adversarial examples keep the meaning",
                    evidence="mean semantic score: HN 0.991 [0.986, 0.995] (n=20)", numbers=semantic,
                    paper_value="82.5%", proxy=True)
    assert numbers_html(proxy) == ("proxy, not the paper's measure:<br>HN 0.991 [0.986, 0.995]<br>"
                                   "FC 0.900 [0.800, 0.950]")
    assert numbers_html(finding(numbers=semantic, paper_value="82.5%")).endswith("<br>vs 82.5%")


def test_headline_verdicts_count_and_badge_the_chosen_claims():
    found = [finding(), finding("q1-pr-best", DISAGREE, task="PR2"),
             finding("q2-gemma-FC", CANNOT_TELL, task="FC", reason="not testable here: one family"),
             finding("q3-queries-HN", NOT_COMPARABLE)]
    html = headline_html(found, [("best attacker", ("q1-hn-best", "q1-pr-best")), ("absent", ("q9-none",))])
    assert html.startswith("<p>4 claims: ")
    for verdict, text in ((AGREE, "1 agree"), (DISAGREE, "1 disagree"), (NOT_COMPARABLE, "1 not comparable"),
                          (CANNOT_TELL, "1 cannot tell (1 not testable here)")):
        assert re.search(f'background:{BADGE_COLOURS[verdict]};[^>]*>{re.escape(text)}</span>', html), text
    assert html.count('<tr class="headline">') == 1
    assert re.search(f'background:{BADGE_COLOURS[AGREE]};[^>]*>HN: agree</span>', html)
    assert re.search(f'background:{BADGE_COLOURS[DISAGREE]};[^>]*>PR2: disagree</span>', html)
    assert 'title="BERT-ATTACK 0.600 [0.500, 0.700]"' in html
    two = finding(numbers=(BEST, Figure("PWWS", Interval(0.4, 0.3, 0.5))))
    html = headline_html([two, finding("q1-pr-best", CANNOT_TELL, task="PR2", numbers=())],
                         [("best attacker", ("q1-hn-best", "q1-pr-best"))])
    assert 'title="BERT-ATTACK 0.600 [0.500, 0.700]; PWWS 0.400 [0.300, 0.500]"' in html
    assert html.count("title=") == 1  # a finding without numbers gets no hover text


def test_a_fragile_verdict_is_labelled_in_the_table_and_on_the_front_page():
    knife = finding("q2-bilstm-HN", DISAGREE, fragile="cannot tell under 4 of 50 bootstrap seeds")
    firm = finding("q2-bilstm-PR2", AGREE, task="PR2")
    table = findings_html([knife, firm])
    assert table.count('class="fragile-badge"') == 1
    assert 'title="cannot tell under 4 of 50 bootstrap seeds"' in table
    assert "<strong>Fragile:</strong> cannot tell under 4 of 50 bootstrap seeds" in table
    front = headline_html([knife, firm])
    assert "1 of them fragile" in front and front.count('class="fragile-badge"') == 1
    assert "<li>HN, best attacker: BERT-ATTACK (BODEGA 0.56): disagree, but cannot tell under 4 of 50" in front
    assert "Fragile verdicts" not in headline_html([firm])
    genetic = finding("q1-pr-genetic-queries", CANNOT_TELL, task="PR2", paper="on PR2, Genetic asks >800 queries",
                      fragile="not comparable without the marginal victims")
    assert "<li>PR2, Genetic asks &gt;800 queries: cannot tell, but" in headline_html([genetic])  # not "PR2, on PR2"


def test_the_front_page_leads_with_the_verdicts_that_hold_across_trainings():
    from bodega_book.findings import Reads

    every = (Reads("PR2", ("targeted",), every_training=True),)
    held = finding("q2-bilstm-PR2", AGREE, task="PR2", paper="BiLSTM is the most vulnerable victim", reads=every)
    shaky = finding("q2-bilstm-RD", AGREE, task="RD", reads=every, fragile="cannot tell on training 2 alone")
    once = finding("q4-targeting-HN", DISAGREE, task="HN", reads=every)  # HN's victims were trained once
    first_only = finding("q1-pr-best", AGREE, task="PR2")  # reads the first training only
    undecided = finding("q4-targeting-PR2", CANNOT_TELL, task="PR2", reads=every)
    waiting = finding("q2-bert-PR2", AGREE, task="PR2", reads=every, unfinished=("PR2-BERT-PWWS-T-t2",))
    found = [held, shaky, once, first_only, undecided, waiting]
    trainings = {"PR2": (3, 3), "RD": (3, 10), "HN": (1, 1)}
    html = headline_html(found, trainings=trainings)
    assert html.startswith("<p>Verdicts that hold across trainings (drawn on every training of the victims "
                           "compared, PR2 3, RD 3-10 per victim")
    lead = html[:html.index("</ul>")]
    assert "PR2, BiLSTM is the most vulnerable victim: " in lead and lead.count("<li>") == 1
    assert held_across_trainings(found, {"PR2": 3, "RD": 3, "HN": 1}) == [held]
    assert headline_html([shaky, once], trainings=trainings).startswith("<p>No verdict that compares victims")
    assert headline_html(found).startswith("<p>6 claims: ")  # one training per victim: no lead
