"""SCPN on a tiny random model saved in the published file layout: loading, decoding, attacking."""
from __future__ import annotations

import argparse
import importlib.util
import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from attack_fakes import SENTENCES, OnesSemantic  # noqa: E402
from bodega.attacks import get_attacker, run_attack  # noqa: E402
from bodega.attacks.scpn.bpe import BPE, join_bpe  # noqa: E402
from bodega.attacks.scpn.files import UnsafeFileError, load_checkpoint, load_vocabulary_pickle  # noqa: E402
from bodega.attacks.scpn.networks import ParaphraseNetwork, ParseGenerator  # noqa: E402
from bodega.attacks.scpn.paraphraser import DEFAULT_TEMPLATES, Paraphraser, load_scpn_model  # noqa: E402
from bodega.attacks.scpn.parse import linearise  # noqa: E402
from bodega.data import Example, write_tsv  # noqa: E402
from bodega.io import read_jsonl  # noqa: E402

PTB_TAGSET = ("PAD ROOT ADJP -ADV ADVP -BNF CC CD -CLF -CLR CONJP -DIR DT -DTV EX -EXT FRAG FW -HLN IN INTJ JJ JJR "
              "JJS -LGS -LOC LS LST MD -MNR NAC NN NNS NNP NNPS -NOM NP NX PDT POS PP -PRD PRN PRP -PRP PRP$ PRP-S "
              "PRT -PUT QP RB RBR RBS RP RRC S SBAR SBARQ -SBJ SINV SQ SYM -TMP TO -TPC -TTL UCP UH VB VBD VBG VBN "
              "VBP VBZ -VOC VP WDT WHADJP WHADVP WHNP WHPP WP WP$ WP-S WRB X # `` '' . , : $ -LRB- -RRB- -NONE- * 0 T "
              "NUL > ( ) EOP").split()
"""The label list of the published parse vocabulary (miyyer/scpn data/ptb_tagset.txt): PAD first, EOP last."""
CODES = "#version: 0.2\nt h\nth e</w>\na t</w>\nc at</w>\ne v\ni l</w>\nev il</w>\n"
FIXED_PARSE = ("(ROOT (S (NP (DT The) (JJ evil) (NN enemy)) "
               "(VP (MD will) (VB attack) (NP (PRP$ our) (NN nation))) (. .)))")
DIMS = dict(d_word=8, d_hid=12, d_nt=6, d_trans=7)


def _units() -> list[str]:
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("0123456789.,!?'\"-;:")
    merged = ["th", "the", "at", "cat", "ev", "il", "evil"]
    return [u + "@@" for u in chars + merged] + chars + merged


def write_tiny_scpn(folder: Path, seed: int = 0) -> Path:
    """Random SCPN files in the published layout (checkpoint dicts, pickled vocabularies, BPE files)."""
    folder.mkdir(parents=True, exist_ok=True)
    units = _units()
    words = {u: i for i, u in enumerate(units + ["EOS"])}
    tags = {t: i for i, t in enumerate(PTB_TAGSET)}  # EOP last: the paraphrase net embeds all but it
    # the published parse_vocab.pkl is a Python 2, protocol-0 pickle of a list [unit -> id, id -> unit]
    (folder / "parse_vocab.pkl").write_bytes(pickle.dumps([words, {i: u for u, i in words.items()}], protocol=0))
    (folder / "ptb_tagset.pkl").write_bytes(pickle.dumps(tags, protocol=2))
    (folder / "bpe.codes").write_text(CODES, encoding="utf-8")
    counts = {u: 100 for u in units}
    counts["cat"] = 10  # below SCPN's threshold of 50: split back into c@@ at
    (folder / "vocab.txt").write_text("".join(f"{u} {n}\n" for u, n in counts.items()), encoding="utf-8")
    torch.manual_seed(seed)
    paraphraser = ParaphraseNetwork(DIMS["d_word"], DIMS["d_hid"], DIMS["d_nt"], DIMS["d_trans"],
                                    len(words), len(tags) - 1)
    generator = ParseGenerator(DIMS["d_nt"], DIMS["d_hid"], len(tags))
    for net, eos in ((paraphraser, words["EOS"]), (generator, tags["EOP"])):
        for parameter in net.parameters():
            torch.nn.init.normal_(parameter, std=1.5)
        with torch.no_grad():
            net.out_dense_2.bias[eos] -= 2.0  # random nets would otherwise often stop at once
    args = argparse.Namespace(use_input_parse=0, **DIMS)
    torch.save({"state_dict": paraphraser.state_dict(), "config_args": args}, folder / "scpn.pt")
    torch.save({"state_dict": generator.state_dict(),
                "config_args": argparse.Namespace(d_nt=DIMS["d_nt"], d_hid=DIMS["d_hid"])},
               folder / "parse_generator.pt")
    return folder


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny step-by-step decoding is slowed badly by thread hand-offs on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture()
def scpn_dir(tmp_path) -> Path:
    return write_tiny_scpn(tmp_path / "scpn")


def _reference_module(name: str):
    """OpenAttack's SCPN file loaded by path (without importing OpenAttack), or skip."""
    spec = importlib.util.find_spec("OpenAttack")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("OpenAttack is not installed: no reference implementation to compare with")
    path = Path(spec.submodule_search_locations[0]) / "attackers" / "scpn" / f"{name}.py"
    module_spec = importlib.util.spec_from_file_location(f"reference_scpn_{name}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def test_bpe_merges_splits_rare_units_and_matches_reference(scpn_dir):
    bpe = BPE.from_files(scpn_dir / "bpe.codes", scpn_dir / "vocab.txt")
    assert bpe.segment("the cat evil tea") == "the c@@ at evil t@@ e@@ a"
    assert join_bpe(bpe.segment("the cat evil tea").split()) == ["the", "cat", "evil", "tea"]
    subword = _reference_module("subword")
    with (open(scpn_dir / "vocab.txt", encoding="utf-8") as vocab,
          open(scpn_dir / "bpe.codes", encoding="utf-8") as codes):
        reference = subword.BPE(codes, "@@", subword.read_vocabulary(vocab, 50), None)
    text = "the cat sat at the theatre , evil devil ! a"
    assert bpe.segment(text) == reference.segment(text)


def test_published_layout_loads_and_paraphrases_deterministically(scpn_dir):
    model = load_scpn_model(scpn_dir)
    paraphraser = Paraphraser(model, parser=lambda sentence: FIXED_PARSE)
    first = paraphraser.paraphrase("The evil cat will attack our nation.")
    assert first == paraphraser.paraphrase("The evil cat will attack our nation.")
    assert len(first) == len(DEFAULT_TEMPLATES) == 10
    made = [p for p in first if p]
    assert len(set(made)) > 1, "the templates should give different paraphrases"
    units = set(model.vocab.words) - {"EOS"}
    words = {w for p in made for w in p.split()}
    # every output word is a concatenation of vocabulary units
    assert all(re.fullmatch(r"[a-z0-9.,!?'\";:\-]+", w) for w in words)
    if importlib.util.find_spec("spacy") is not None:  # the default parser: the spaCy approximation
        assert len(Paraphraser(model).paraphrase("Why would the evil cat attack?")) == 10
    sentence = paraphraser.units("The evil cat will attack our nation.")
    assert sentence[-1] == model.vocab.words["EOS"] and all(0 <= i < len(units) + 1 for i in sentence)


def _padded(rows: list[list[int]]):
    padded = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
    for i, row in enumerate(rows):
        padded[i, : len(row)] = torch.tensor(row)
    return padded, torch.tensor([len(r) for r in rows])


def _never_ending(net, eos: int):
    """The net with its end symbol made impossible, so every beam runs to max_steps.

    The generation bias forbids it; copying could still bring it in from the input, so the
    copy gate is held at 1/2 (its vectors zeroed) and the forbidden score dominates.
    """
    state = {k: v.clone() for k, v in net.state_dict().items()}
    state["out_dense_2.bias"][eos] = -1e4
    for name in ("copy_hid_v", "copy_att_v", "copy_inp_v"):
        state[name].zero_()
    net.load_state_dict(state)
    return state


def test_beam_search_matches_the_reference_networks(scpn_dir):
    """Same weights, same beams as OpenAttack's SCPN code (while no beam ends; it treats ended beams oddly)."""
    models = _reference_module("models")
    model = load_scpn_model(scpn_dir)
    tags, words = model.vocab.tags, model.vocab.words
    parse = torch.tensor([[tags[t] for t in linearise(FIXED_PARSE)]])
    templates, lengths = _padded([[tags[t] for t in template.split()] for template in DEFAULT_TEMPLATES])

    state = _never_ending(model.parse_generator, tags["EOP"])
    reference_parser = models.ParseNet(DIMS["d_nt"], DIMS["d_hid"], len(tags))
    reference_parser.load_state_dict(state)
    ours = model.parse_generator.generate(parse, templates, lengths, tags["EOP"], beam=3, max_steps=8)
    with torch.no_grad():
        theirs = reference_parser.eval().batch_beam_search(parse, templates, torch.tensor([parse.size(1)]),
                                                           lengths, tags["EOP"], beam_size=3, max_steps=8)
    assert ours == [theirs[i][0][3] for i in range(len(DEFAULT_TEMPLATES))]
    assert all(len(seq) == 9 for seq in ours)

    # target parses for the paraphrase net: the templates without EOP (its parse embedding omits EOP)
    parses, parse_lengths = _padded([[tags[t] for t in template.split()[:-1]] for template in DEFAULT_TEMPLATES])
    sentence = torch.tensor([[words[u] for u in "the evil c@@ at".split()] + [words["EOS"]]])
    state = _never_ending(model.paraphraser, words["EOS"])
    reference_net = models.SCPN(DIMS["d_word"], DIMS["d_hid"], DIMS["d_nt"], DIMS["d_trans"], len(words),
                                len(tags) - 1, 0)
    reference_net.load_state_dict(state)
    mine = model.paraphraser.generate(sentence, parses, parse_lengths, words["EOS"], beam=3, max_steps=6)
    with torch.no_grad():
        theirs = reference_net.eval().batch_beam_search(sentence, parses, torch.tensor([sentence.size(1)]),
                                                        parse_lengths, words["EOS"], beam_size=3, max_steps=6)
    assert mine == [theirs[i][0][3] for i in range(len(DEFAULT_TEMPLATES))]
    assert all(len(seq) == 7 for seq in mine)
    assert len({tuple(seq) for seq in mine}) > 1, "the target parse should steer the output"


def test_unsafe_files_are_refused(tmp_path):
    (tmp_path / "bad.pkl").write_bytes(pickle.dumps({"a": np.int64(1)}))
    with pytest.raises(UnsafeFileError, match="bad.pkl.*refused global numpy"):
        load_vocabulary_pickle(tmp_path / "bad.pkl")
    torch.save({"state_dict": {}, "config_args": Path("x")}, tmp_path / "bad.pt")
    with pytest.raises(UnsafeFileError, match="bad.pt.*weights_only=True"):
        load_checkpoint(tmp_path / "bad.pt")


def test_spacy_parse_approximation_uses_published_labels():
    pytest.importorskip("spacy")
    from bodega.attacks.scpn.parse import SpacyParser

    parser = SpacyParser()
    labels = linearise(parser("If it rains, the evil enemy will attack our nation."))
    assert labels[:4] == ["(", "ROOT", "(", "S"] and labels[-1] == "EOP"
    for text in ("Why would a well-known  \"expert\" lie about it?", "Sales rose 5% (again) - great news!",
                 "Corrupt traitors lie. They destroy us."):
        labels = linearise(parser(text))
        assert set(labels) <= set(PTB_TAGSET), text
        assert labels.count("(") == labels.count(")"), text


class ExactTextVictim:
    """Calls exactly the original sentences non-credible; any rewrite flips it."""

    name, task, weights_hash = "exact", "PR2", "exact-v1"

    def predict_proba(self, texts):
        p1 = np.array([1.0 if t in SENTENCES else 0.0 for t in texts])
        return np.stack([1 - p1, p1], axis=1)

    def predict(self, texts):
        return self.predict_proba(texts).argmax(axis=1)


def test_attacker_through_the_runner(scpn_dir, tmp_path):
    pytest.importorskip("bodega.scoring", reason="the scoring package is needed to finish a run")
    script = tmp_path / "parser.py"
    script.write_text(f"import sys\nsys.stdin.read()\nprint({FIXED_PARSE!r})\n", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    write_tsv(data / "attack.tsv", [Example(1, f"doc-{i}", s) for i, s in enumerate(SENTENCES)])

    options = dict(scpn_dir=str(scpn_dir), parser=f"{sys.executable} {script}")
    summary = run_attack("PR2", ExactTextVictim(), data, "SCPN", tmp_path / "run", semantic=OnesSemantic(),
                         attacker_options=options, progress=False).run
    records = list(read_jsonl(tmp_path / "run" / "records.jsonl"))
    assert len(records) == len(SENTENCES) and all(r["error"] is None for r in records)
    succeeded = [r for r in records if r["success"]]
    assert succeeded and all(r["adversarial"] not in SENTENCES for r in succeeded)
    # one batch of paraphrases per example, plus the runner's original and confirming queries
    assert all(r["queries"] <= 1 + len(DEFAULT_TEMPLATES) + 1 for r in records)
    assert summary.config.attacker == "SCPN"
    attacker = get_attacker("SCPN", scpn_dir=str(scpn_dir), parser=lambda s: FIXED_PARSE)
    assert attacker.paraphraser.paraphrase(SENTENCES[0]) == attacker.paraphraser.paraphrase(SENTENCES[0])
