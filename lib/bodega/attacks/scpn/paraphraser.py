"""Sentence + syntactic templates -> paraphrases, with the published SCPN pipeline's steps.

Tokens (word/punctuation runs, lower-cased) are BPE-segmented and mapped to the unit
vocabulary (unknown units dropped, EOS appended); the sentence's parse is linearised;
the parse generator completes every template into a full parse (beam 3, at most 150
steps) and the paraphrase network writes the sentence under each (beam 3, at most 40
steps), as in OpenAttack's SCPN attacker.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bodega.attacks.scpn.bpe import BPE, join_bpe
from bodega.attacks.scpn.files import SCPNVocabularies, load_checkpoint, load_vocabularies
from bodega.attacks.scpn.parse import Parser, linearise, resolve_parser
from bodega.errors import BodegaError

DEFAULT_TEMPLATES = (
    "( ROOT ( S ( NP ) ( VP ) ( . ) ) ) EOP",
    "( ROOT ( S ( VP ) ( . ) ) ) EOP",
    "( ROOT ( NP ( NP ) ( . ) ) ) EOP",
    "( ROOT ( FRAG ( SBAR ) ( . ) ) ) EOP",
    "( ROOT ( S ( S ) ( , ) ( CC ) ( S ) ( . ) ) ) EOP",
    "( ROOT ( S ( LST ) ( VP ) ( . ) ) ) EOP",
    "( ROOT ( SBARQ ( WHADVP ) ( SQ ) ( . ) ) ) EOP",
    "( ROOT ( S ( PP ) ( , ) ( NP ) ( VP ) ( . ) ) ) EOP",
    "( ROOT ( S ( ADVP ) ( NP ) ( VP ) ( . ) ) ) EOP",
    "( ROOT ( S ( SBAR ) ( , ) ( NP ) ( VP ) ( . ) ) ) EOP",
)
"""The ten templates of the SCPN paper's adversarial evaluation, as OpenAttack's default."""

WORD = re.compile(r"\w+|[^\w\s]+")


class UnknownParseLabel(ValueError):
    """The parse has a label the parse vocabulary lacks (the parser's tag set differs)."""


@dataclass
class SCPNModel:
    """The loaded SCPN: parse generator and paraphrase network (in eval mode), their vocabularies and the BPE."""

    parse_generator: object
    paraphraser: object
    vocab: SCPNVocabularies
    bpe: BPE


def load_scpn_model(folder: str | Path) -> SCPNModel:
    """The published files in ``folder`` (see :data:`bodega.attacks.recipes.scpn.SCPN_FILES`), evaluated."""
    from bodega.attacks.scpn.networks import ParaphraseNetwork, ParseGenerator

    folder = Path(folder)
    vocab = load_vocabularies(folder)
    state, args = load_checkpoint(folder / "scpn.pt")
    if args.get("use_input_parse"):
        raise BodegaError(f"{folder / 'scpn.pt'}: trained with use_input_parse=1; the published model and this "
                          "decoder use the sentence alone (use_input_parse=0)")
    paraphraser = ParaphraseNetwork(args["d_word"], args["d_hid"], args["d_nt"], args["d_trans"],
                                    len(vocab.words), len(vocab.tags) - 1)
    _load_state(paraphraser, state, folder / "scpn.pt")
    state, args = load_checkpoint(folder / "parse_generator.pt")
    generator = ParseGenerator(args["d_nt"], args["d_hid"], len(vocab.tags))
    _load_state(generator, state, folder / "parse_generator.pt")
    bpe = BPE.from_files(folder / "bpe.codes", folder / "vocab.txt", threshold=50)
    return SCPNModel(generator.eval(), paraphraser.eval(), vocab, bpe)


def _load_state(net, state: dict, path: Path) -> None:
    try:
        net.load_state_dict(state)
    except RuntimeError as error:
        raise BodegaError(f"{path}: its weights do not fit the SCPN architecture: {error}") from error


class Paraphraser:
    """Paraphrases one text under each template; ``parser`` gives its bracketed parse."""

    def __init__(self, model: SCPNModel, parser: Parser | str | None = None,
                 templates: tuple[str, ...] = DEFAULT_TEMPLATES, beam: int = 3):
        self.model = model
        self.parser = resolve_parser(parser)
        self.templates = tuple(templates)
        self.beam = beam
        tags = model.vocab.tags
        for template in self.templates:
            unknown = [label for label in template.split() if label not in tags]
            if unknown:
                raise UnknownParseLabel(f"template {template!r} has labels outside ptb_tagset.pkl: {unknown}")

    def units(self, text: str) -> list[int]:
        """Unit ids of the text (unknown units dropped) followed by EOS."""
        tokens = " ".join(WORD.findall(text)).lower()
        words = self.model.vocab.words
        return [words[u] for u in self.model.bpe.segment(tokens).split() if u in words] + [words["EOS"]]

    def parse_ids(self, text: str) -> list[int]:
        """The text's linearised parse as label ids; a label the vocabulary lacks raises :class:`UnknownParseLabel`."""
        labels = linearise(self.parser(text))
        unknown = sorted({label for label in labels if label not in self.model.vocab.tags})
        if unknown:
            raise UnknownParseLabel(f"the parse of {text[:60]!r} has labels outside ptb_tagset.pkl: {unknown}")
        return [self.model.vocab.tags[label] for label in labels]

    def paraphrase(self, text: str) -> list[str | None]:
        """One paraphrase per template (None where the generated parse or sentence is empty)."""
        import torch

        tags = self.model.vocab.tags
        parse = torch.tensor([self.parse_ids(text)])
        rows = [[tags[label] for label in t.split()] for t in self.templates]
        templates, lengths = _pad(rows)
        full = self.model.parse_generator.generate(parse, templates, lengths, tags["EOP"], self.beam, 150)
        embeddable = self.model.paraphraser.trans_embs.num_embeddings
        usable = [i for i, p in enumerate(full) if p and max(p) < embeddable]
        out: list[str | None] = [None] * len(full)
        if not usable:
            return out
        parses, parse_lengths = _pad([full[i] for i in usable])
        sentence = torch.tensor([self.units(text)])
        eos = self.model.vocab.words["EOS"]
        written = self.model.paraphraser.generate(sentence, parses, parse_lengths, eos, self.beam, 40)
        reverse = self.model.vocab.reverse_words
        for i, ids in zip(usable, written):
            words = join_bpe([reverse[t] for t in ids])
            out[i] = " ".join(words) if words else None
        return out


def _pad(rows: list[list[int]]):
    import torch

    lengths = torch.tensor([len(r) for r in rows])
    padded = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
    for i, row in enumerate(rows):
        padded[i, : len(row)] = torch.tensor(row)
    return padded, lengths
