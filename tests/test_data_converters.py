"""Each converter on the real corpus where ../shared/data has it, on small files written here otherwise."""
from __future__ import annotations

import csv
import json
import xml.sax.saxutils as sax
from pathlib import Path

import pytest

from bodega.data.converters import SOURCES, get_converter, raw_folder
from bodega.data.converters.common import RawDataError
from bodega.data.converters.fc import convert_fever, convert_feversymmetric
from bodega.data.converters.hn import convert_byarticle, convert_bypublisher
from bodega.data.converters.rd import convert_augmented, convert_rpdnn
from bodega.data.prepare import prepare
from bodega.data.splits import split_attack_dev
from bodega.data.tsv import Example, read_tsv
from bodega.tasks import TASKS, split_pair

RAW_ROOT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "raw"


def real(task: str, source: str | None = None) -> Path:
    folder = raw_folder(RAW_ROOT, task, source)
    if not folder.exists():
        pytest.skip(f"raw corpus for {task} not present at {folder}")
    return folder


def check_disjoint_pool(splits, pool_size: int) -> None:
    attack_ids = [(r.id, r.text) for r in splits.attack]
    dev_ids = [(r.id, r.text) for r in splits.dev]
    assert len(attack_ids) + len(dev_ids) == pool_size
    assert not set(attack_ids) & set(dev_ids)


# --- registry and split rules ----------------------------------------------------------------

def test_every_task_source_has_a_converter():
    for task in TASKS.values():
        for source in task.sources:
            assert callable(get_converter(task.name, source))
    assert set(SOURCES) == {source for task in TASKS.values() for source in task.sources}  # none unread


def test_the_raw_folder_of_each_tasks_default_source_is_the_one_fetch_writes():
    from bodega.data.corpora import corpus

    for task in TASKS:
        assert raw_folder("raw", task) == Path("raw") / corpus(task).folder
    assert raw_folder("raw", "fc", "fever") == Path("raw/FC/FEVER")


def test_unknown_source_lists_the_known_ones():
    with pytest.raises(KeyError, match="byarticle"):
        get_converter("HN", "tweets")


def rows(n: int) -> list[Example]:
    return [Example(i % 2, f"id{i}", f"text {i}") for i in range(n)]


def test_stride_rule_for_pools_of_800_or_more():
    pool = rows(1_000)
    attack, dev, note = split_attack_dev(pool)
    assert attack == pool[::2] and dev == pool[1::2] and "BODEGA" in note


@pytest.mark.parametrize("size, n_attack", [(628, 400), (799, 400), (450, 300), (9, 6)])
def test_small_pool_rule_is_seeded_and_keeps_pool_order(size, n_attack):
    pool = rows(size)
    attack, dev, note = split_attack_dev(pool)
    assert len(attack) == n_attack and len(dev) == size - n_attack
    assert split_attack_dev(pool) == (attack, dev, note)
    assert attack == [r for r in pool if r in set(attack)] and not set(attack) & set(dev)
    assert str(size) in note


# --- HN --------------------------------------------------------------------------------------

def test_hn_byarticle_real():
    raw = real("HN", "byarticle")
    splits = convert_byarticle(raw)
    assert len(splits.attack) == 400 and len(splits.dev) == 228
    check_disjoint_pool(splits, 628)
    assert not {r.text for r in splits.train} & {r.text for r in splits.attack + splits.dev}
    truth = (raw / "ground-truth-training-byarticle-20181122.xml").read_text(encoding="utf-8")
    dropped = 645 - len(splits.train)
    assert 0 <= dropped <= 5 and f"less {dropped} whose text" in splits.notes[0]
    assert truth.count('hyperpartisan="true"') - dropped <= sum(r.label for r in splits.train)
    first = splits.train[0]
    assert first.id.startswith("https://www.opednews.com/") and first.label == 1
    assert first.text.startswith("Kucinich: Reclaiming the money power\n")
    assert all("<p>" not in r.text and "\t" not in r.text for r in splits.train + splits.attack)
    assert convert_byarticle(raw).attack == splits.attack


def article_xml(articles: list[tuple[str, str, str]]) -> str:
    body = "".join(f'<article id="{i}" title={sax.quoteattr(t)}>\n{html}\n</article>\n' for i, t, html in articles)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<articles>\n{body}</articles>\n'


def truth_xml(labels: list[tuple[str, bool]]) -> str:
    body = "".join(f"<article id='{i}' hyperpartisan='{str(h).lower()}' bias='left' "
                   f"url='https://example.org/{i}' labeled-by='publisher'/>\n" for i, h in labels)
    return f'<?xml version="1.0"?>\n<articles>\n{body}</articles>\n'


def write_bypublisher(raw: Path, n_train: int, n_test: int) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    for part, date, n in (("training", "20181122", n_train), ("test", "20181212", n_test)):
        ids = [f"{i:07d}" for i in range(n)]
        (raw / f"articles-{part}-bypublisher-{date}.xml").write_text(article_xml(
            [(i, f"Title {i}", f'<p>Hello <a href="http://x" type="external">world</a>\t{i}.</p> <p>Bye.</p>')
             for i in ids]), encoding="utf-8")
        (raw / f"ground-truth-{part}-bypublisher-{date}.xml").write_text(
            truth_xml([(i, int(i) % 3 == 0) for i in reversed(ids)]), encoding="utf-8")


def test_hn_bypublisher_rules(tmp_path):
    write_bypublisher(tmp_path, n_train=35, n_test=820)
    splits = convert_bypublisher(tmp_path)
    assert [r.id for r in splits.train] == [f"https://example.org/{i:07d}" for i in (30, 20, 10, 0)]
    assert [r.label for r in splits.train] == [1, 0, 0, 1]
    assert splits.train[0].text == "Title 0000030\n\nHello world0000030. Bye.\n"
    pool_ids = [f"https://example.org/{i:07d}" for i in reversed(range(820))]
    assert [r.id for r in splits.attack] == pool_ids[::2]
    assert [r.id for r in splits.dev] == pool_ids[1::2]


def test_hn_malformed_xml_names_file_and_line(tmp_path):
    write_bypublisher(tmp_path, n_train=3, n_test=3)
    path = tmp_path / "articles-test-bypublisher-20181212.xml"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[3] = lines[3].replace("</p>", "")  # an unclosed <p> on line 4
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(RawDataError, match=r"articles-test-bypublisher-20181212.xml:\d+: malformed XML"):
        convert_bypublisher(tmp_path)


def test_hn_article_without_label_attribute_names_file_and_line(tmp_path):
    write_bypublisher(tmp_path, n_train=3, n_test=3)
    path = tmp_path / "ground-truth-test-bypublisher-20181212.xml"
    path.write_text(path.read_text(encoding="utf-8").replace("hyperpartisan='false' ", "", 1), encoding="utf-8")
    with pytest.raises(RawDataError, match=r"ground-truth-test-bypublisher-20181212.xml:3: .*'hyperpartisan'"):
        convert_bypublisher(tmp_path)


def test_hn_missing_article_text_is_an_error(tmp_path):
    write_bypublisher(tmp_path, n_train=3, n_test=3)
    path = tmp_path / "articles-test-bypublisher-20181212.xml"
    path.write_text(article_xml([("0000000", "T", "x")]), encoding="utf-8")
    with pytest.raises(RawDataError, match="2 labelled articles have no text"):
        convert_bypublisher(tmp_path)


# --- FC --------------------------------------------------------------------------------------

def test_fc_feversymmetric_real():
    raw = real("FC", "feversymmetric")
    splits = convert_feversymmetric(raw)
    check_disjoint_pool(splits, 712)
    assert len(splits.attack) == 400
    pool = [json.loads(line) for line in open(raw / "symmetric_v0.2/fever_symmetric_test.jsonl", encoding="utf-8")]
    assert sum(r.label for r in splits.attack + splits.dev) == sum(p["label"] == "REFUTES" for p in pool)
    pool_claims = {split_pair(r.text)[1] for r in splits.attack + splits.dev}
    assert not pool_claims & {split_pair(r.text)[1] for r in splits.train}
    assert 700 <= len(splits.train) <= 708
    texts = [r.text for rows in (splits.train, splits.attack, splits.dev) for r in rows]
    assert all(" ~ " in t and "-LRB-" not in t and "-RSB-" not in t for t in texts)


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def wiki_page(title: str, sentences: list[str]) -> dict:
    return {"id": title, "text": " ".join(sentences),
            "lines": "\n".join(f"{i}\t{s}\tlink" for i, s in enumerate(sentences))}


def write_fever(raw: Path, n_pool: int = 3) -> None:
    write_jsonl(raw / "wiki-pages" / "wiki-pages" / "wiki-001.jsonl", [
        wiki_page("Nikolaj_Coster-Waldau", ["Nikolaj is a Danish actor .", "He was born in 1970 ."]),
        wiki_page("Fox_Broadcasting_Company", ["Fox is an American network ."]),
        {"id": "", "text": "", "lines": ""},
    ])
    write_jsonl(raw / "wiki-pages" / "wiki-pages" / "wiki-002.jsonl", [
        wiki_page("Savages_-LRB-2012_film-RRB-", ["Savages is a 2012 film ."])])
    write_jsonl(raw / "train.jsonl", [
        {"id": 1, "label": "SUPPORTS", "claim": "Nikolaj worked with Fox.",
         "evidence": [[[9, 1, "Nikolaj_Coster-Waldau", 0], [9, 2, "Fox_Broadcasting_Company", 0]],
                      [[9, 3, "Nikolaj_Coster-Waldau", 0], [9, 4, "Nikolaj_Coster-Waldau", 1]],
                      [[9, 5, "Nikolaj_Coster-Waldau", 0], [9, 6, "Fox_Broadcasting_Company", 0]]]},
        {"id": 2, "label": "NOT ENOUGH INFO", "claim": "Unknown.", "evidence": [[[9, None, None, None]]]},
        {"id": 3, "label": "REFUTES", "claim": "Savages was made in 1999.",
         "evidence": [[[9, 7, "Savages_-LRB-2012_film-RRB-", 0]], [[9, 8, "Missing_page", 0]]]},
    ])
    write_jsonl(raw / "shared_task_dev.jsonl", [
        {"id": 10 + i, "label": "REFUTES", "claim": f"Fox is Danish {i}.",
         "evidence": [[[9, 9, "Fox_Broadcasting_Company", 0]]]} for i in range(n_pool)])


def test_fc_fever_rules(tmp_path):
    write_fever(tmp_path)
    splits = convert_fever(tmp_path)
    assert splits.train == [
        Example(0, "Wikipedia:Nikolaj_Coster-Waldau/Fox_Broadcasting_Company",
                "Nikolaj Coster-Waldau. Nikolaj is a Danish actor . Fox Broadcasting Company. "
                "Fox is an American network . ~ Nikolaj worked with Fox."),
        Example(0, "Wikipedia:Nikolaj_Coster-Waldau",
                "Nikolaj Coster-Waldau. Nikolaj is a Danish actor . He was born in 1970 . ~ Nikolaj worked with Fox."),
        Example(1, "Wikipedia:Savages_(2012_film)",
                "Savages (2012 film). Savages is a 2012 film . ~ Savages was made in 1999."),
    ]
    assert len(splits.attack) + len(splits.dev) == 3
    assert any("cite a sentence missing" in note for note in splits.notes)
    assert "skipped: 1 in train, 0 in the pool" in splits.notes[0]


def test_fc_malformed_json_line_names_file_and_line(tmp_path):
    write_fever(tmp_path)
    with open(tmp_path / "shared_task_dev.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"id": 99, "label": "REFUTES", "claim": \n')
    with pytest.raises(RawDataError, match=r"shared_task_dev.jsonl:4: invalid JSON"):
        convert_fever(tmp_path)


def test_fc_unknown_label_names_file_and_line(tmp_path):
    write_jsonl(tmp_path / "symmetric_v0.2" / "fever_symmetric_dev.jsonl",
                [{"id": "1", "label": "SUPPORTS", "claim": "a", "evidence": "b"}])
    write_jsonl(tmp_path / "symmetric_v0.2" / "fever_symmetric_test.jsonl",
                [{"id": "2", "label": "SUPPORTS", "claim": "c", "evidence": "d"},
                 {"id": "3", "label": "MAYBE", "claim": "e", "evidence": "f"}])
    with pytest.raises(RawDataError, match=r"fever_symmetric_test.jsonl:2: label 'MAYBE'"):
        convert_feversymmetric(tmp_path)


# --- RD --------------------------------------------------------------------------------------

def test_rd_rpdnn_real():
    raw = real("RD", "rpdnn")
    splits = convert_rpdnn(raw)
    check_disjoint_pool(splits, 680)
    assert len(splits.attack) == 400
    pool_ids = {r.id for r in splits.attack + splits.dev}
    assert not pool_ids & {r.id for r in splits.train}
    assert len({r.id for r in splits.train}) == len(splits.train)
    labels = [r.label for r in splits.train]
    assert labels == sorted(labels, reverse=True)  # rumours first
    assert all(r.id.startswith("https://twitter.com/twitter/status/") for r in splits.train)
    assert not any("&amp;" in r.text or "\n" in r.text for r in splits.train + splits.attack + splits.dev)


def write_rpdnn(raw: Path, rows: list[list[str]]) -> None:
    folder = raw / "charliehebdo"
    folder.mkdir(parents=True)
    for part in ("train", "heldout", "test"):
        with open(folder / f"all_rnr_{part}_set_combined.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["tweet_id", "created_at", "text", "label", "user_id", "user_name"])
            for row in rows:
                writer.writerow(row if part != "test" else [str(int(row[0]) + 1000)] + row[1:])


def test_rd_rpdnn_rules(tmp_path):
    write_rpdnn(tmp_path, [["12", "t", "a &amp;lt; b\nnext", "0", "1", "u"], ["11", "t", "rumour", "1", "1", "u"]])
    splits = convert_rpdnn(tmp_path)
    # Every training tweet's text also occurs in the pool here, so train is empty.
    assert splits.train == []
    assert [(r.id[-4:], r.label, r.text) for r in splits.attack + splits.dev] == [
        ("1011", 1, "rumour"), ("1012", 0, "a &lt; b next")]


def test_rd_malformed_csv_row_names_file_and_line(tmp_path):
    write_rpdnn(tmp_path, [["11", "t", "multi\nline text", "1", "1", "u"], ["12", "t", "x", "yes", "1", "u"]])
    with pytest.raises(RawDataError, match=r"all_rnr_test_set_combined.csv:4: label must be 0 or 1"):
        convert_rpdnn(tmp_path)


def write_thread(event: Path, kind: str, thread: str, source: dict, reactions: dict[str, dict]) -> None:
    folder = event / kind / thread
    (folder / "source-tweets").mkdir(parents=True)
    (folder / "source-tweets" / f"{thread}.json").write_text(json.dumps(source), encoding="utf-8")
    if reactions:
        (folder / "reactions").mkdir()
        for name, tweet in reactions.items():
            (folder / "reactions" / f"{name}.json").write_text(json.dumps(tweet), encoding="utf-8")


def write_augmented(raw: Path) -> None:
    for event in ("charliehebdo", "ferguson"):
        for kind in ("rumours", "non-rumours"):
            (raw / event / kind).mkdir(parents=True)
    write_thread(raw / "ferguson", "non-rumours", "200", {"text": "calm\nday"}, {})
    write_thread(raw / "ferguson", "rumours", "300",
                 {"text": "shots &amp; sirens", "full_text": "shots fired &amp; sirens"},
                 {"302": {"text": "really?"}, "301": {"text": "source?"}})
    write_thread(raw / "charliehebdo", "non-rumours", "100", {"text": "Je suis Charlie"}, {})
    (raw / "ferguson" / "rumours" / ".DS_Store").write_text("", encoding="utf-8")


def test_rd_augmented_rules(tmp_path):
    write_augmented(tmp_path)
    splits = convert_augmented(tmp_path)
    assert splits.train == [
        Example(1, "https://twitter.com/twitter/status/300", "shots fired & sirens\nsource?\nreally?"),
        Example(0, "https://twitter.com/twitter/status/200", "calm day"),
    ]
    assert [r.text for r in splits.attack + splits.dev] == ["Je suis Charlie"]


def test_rd_augmented_malformed_tweet_names_file(tmp_path):
    write_augmented(tmp_path)
    (tmp_path / "ferguson" / "non-rumours" / "200" / "source-tweets" / "200.json").write_text(
        '{"text":\n', encoding="utf-8")
    with pytest.raises(RawDataError, match=r"200\.json:\d+: invalid JSON"):
        convert_augmented(tmp_path)


# --- missing corpora and the prepare entry point ------------------------------------------

@pytest.mark.parametrize("task, source, needed", [
    ("HN", "byarticle", "zenodo.org/record/1489920"), ("HN", "bypublisher", "by-publisher part"),
    ("FC", "feversymmetric", "FeverSymmetric"), ("FC", "fever", "fever.ai"),
    ("RD", "rpdnn", "RPDNN"), ("RD", "augmented", "augmented rumour"), ("PR2", "semeval2020", "SemEval-2020"),
])
def test_missing_raw_folder_names_the_corpus(tmp_path, task, source, needed):
    with pytest.raises(RawDataError) as error:
        get_converter(task, source)(tmp_path / "absent")
    assert "does not exist" in str(error.value) and needed in str(error.value)


def test_bypublisher_in_shared_data_lacks_the_article_text():
    raw = real("HN", "bypublisher")
    with pytest.raises(RawDataError, match="lacks articles-training-bypublisher"):
        convert_bypublisher(raw)


def test_prepare_writes_the_three_files_and_notes(tmp_path):
    write_augmented(tmp_path / "raw")
    prepare("RD", tmp_path / "raw", tmp_path / "out", source="augmented")
    assert [r.text for r in read_tsv(tmp_path / "out" / "train.tsv")][1] == "calm day"
    summary = json.loads((tmp_path / "out" / "splits.json").read_text(encoding="utf-8"))
    assert summary["source"] == "augmented" and summary["counts"]["train"] == {"rows": 2, "positive": 1}
    assert summary["notes"]


def test_prepare_missing_converts_only_absent_tasks(tmp_path, capsys):
    from bodega.cli import main

    write_rpdnn(raw_folder(tmp_path / "raw", "RD"), [["11", "t", "rumour", "1", "1", "u"],
                                                     ["12", "t", "calm", "0", "1", "u"]])
    args = ["data", "prepare-missing", "--raw-root", str(tmp_path / "raw"), "--out-root", str(tmp_path / "data"),
            "--tasks", "RD,FC", "--skip-hash-check"]  # a stand-in for the corpus, not the listed files
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "RD: rpdnn: train 0, attack 2, dev 0" in out and "FC: NOT PREPARED: raw folder" in out
    written = {name: (tmp_path / "data" / "RD" / name).stat().st_mtime_ns for name in ("train.tsv", "attack.tsv",
                                                                                      "dev.tsv")}
    assert main(args) == 0
    assert f"RD: already prepared under {tmp_path / 'data' / 'RD'}" in capsys.readouterr().out
    assert {name: (tmp_path / "data" / "RD" / name).stat().st_mtime_ns for name in written} == written
