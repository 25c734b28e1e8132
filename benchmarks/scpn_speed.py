"""CPU time of one SCPN paraphrase call (ten templates) at the published model's sizes.

The published weights cannot be downloaded here, so the networks are randomly
initialised at the published sizes: the paraphrase network with SCPN's training
defaults (d_word 300, d_trans 128, d_nt 56, d_hid 512), a 31,500-unit vocabulary
(the published parse_vocab.pkl has ids past 31,000) and the 103 labels of
ptb_tagset.txt; the parse generator with d_hid 256 (assumed; its training defaults
were not checked). Random weights rarely emit the end symbol, so decoding runs to the
step limits (150 parse steps, 40 sentence steps): an upper bound for a trained model.
Parses are the spaCy approximation. One thread.

    .venv/bin/python benchmarks/scpn_speed.py [--sentences 5] [--json book/data/scpn_speed.json]
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=5)
    parser.add_argument("--json", default=None, help="also write the times as JSON (the book reads it)")
    args = parser.parse_args()
    import torch

    from bodega.attacks.scpn.bpe import BPE
    from bodega.attacks.scpn.files import SCPNVocabularies
    from bodega.attacks.scpn.networks import ParaphraseNetwork, ParseGenerator
    from bodega.attacks.scpn.paraphraser import Paraphraser, SCPNModel
    from bodega.attacks.scpn.parse import SpacyParser

    torch.set_num_threads(1)
    torch.manual_seed(0)
    labels = ("PAD ROOT ADJP -ADV ADVP -BNF CC CD -CLF -CLR CONJP -DIR DT -DTV EX -EXT FRAG FW -HLN IN INTJ JJ JJR "
              "JJS -LGS -LOC LS LST MD -MNR NAC NN NNS NNP NNPS -NOM NP NX PDT POS PP -PRD PRN PRP -PRP PRP$ PRP-S "
              "PRT -PUT QP RB RBR RBS RP RRC S SBAR SBARQ -SBJ SINV SQ SYM -TMP TO -TPC -TTL UCP UH VB VBD VBG VBN "
              "VBP VBZ -VOC VP WDT WHADJP WHADVP WHNP WHPP WP WP$ WP-S WRB X # `` '' . , : $ -LRB- -RRB- -NONE- * 0 T "
              "NUL > ( ) EOP").split()
    tags = {t: i for i, t in enumerate(labels)}
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list(".,!?'")
    units = chars + [c + "@@" for c in chars] + [f"unit{i}" for i in range(31_500 - 2 * len(chars) - 1)]
    words = {u: i for i, u in enumerate(units + ["EOS"])}
    vocab = SCPNVocabularies(words, {i: u for u, i in words.items()}, tags)
    paraphraser_net = ParaphraseNetwork(300, 512, 56, 128, len(words), len(tags) - 1)
    generator = ParseGenerator(56, 256, len(tags))
    for net in (paraphraser_net, generator):
        for parameter in net.parameters():
            torch.nn.init.normal_(parameter, std=0.1)
    model = SCPNModel(generator.eval(), paraphraser_net.eval(), vocab, BPE((0, 2), {}))
    spacy_parser = SpacyParser()
    paraphraser = Paraphraser(model, parser=spacy_parser)
    sentences = ["The evil enemy will attack our great nation.",
                 "Corrupt traitors lie to destroy us, and the press helps them.",
                 "If the vote fails, the plan would destroy the village.",
                 "They say the deal was terrible for everyone who works here.",
                 "A terrible, corrupt deal from the government."][: args.sentences]
    spacy_parser(sentences[0])  # load spaCy outside the timing
    rows = []
    for sentence in sentences:
        started = time.perf_counter()
        parses = model.parse_generator.generate(
            torch.tensor([paraphraser.parse_ids(sentence)]),
            *_templates(paraphraser), tags["EOP"], 3, 150)
        parse_seconds = time.perf_counter() - started
        paraphraser.paraphrase(sentence)
        total = time.perf_counter() - started - parse_seconds
        print(f"{len(sentence.split()):2d} words: parse generator {parse_seconds:.2f} s "
              f"({max(map(len, parses))} steps); whole paraphrase() call, both networks, {total:.2f} s")
        rows.append({"words": len(sentence.split()), "parse_seconds": parse_seconds,
                     "parse_steps": max(map(len, parses)), "paraphrase_seconds": total})
    if args.json:
        import os
        import sys
        from datetime import datetime, timezone

        from bodega_book.page_data import write_page_data

        write_page_data("scpn_speed", args.json, {
            "command": "python benchmarks/scpn_speed.py " + " ".join(sys.argv[1:]),
            "date": datetime.now(timezone.utc).isoformat(timespec="minutes"), "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg()[0], "torch_threads": 1, "rows": rows})


def _templates(paraphraser):
    from bodega.attacks.scpn.paraphraser import _pad

    return _pad([[paraphraser.model.vocab.tags[t] for t in template.split()] for template in paraphraser.templates])


if __name__ == "__main__":
    main()
