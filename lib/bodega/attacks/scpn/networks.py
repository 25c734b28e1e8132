"""The two SCPN networks with the published parameter names, and a batched beam search.

``ParseGenerator`` completes a template (the top of a parse) into a full linearised
parse, attending over the input sentence's parse; ``ParaphraseNetwork`` writes the
sentence again under a target parse, attending over the sentence (BiLSTM encoder) and
the parse, with a copy mechanism. Attribute names and shapes follow the released model
(``scpn.pt``/``parse_generator.pt``) so its state dicts load unchanged; the scores mix
copy and generation log-probabilities as the released decoder does.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _uninitialised(*shape: int) -> nn.Parameter:
    return nn.Parameter(torch.empty(*shape))


def _attend(query: torch.Tensor, weight: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Bilinear attention weights (N, T) of ``query @ weight`` over ``keys`` (N, T, H), masked."""
    scores = ((query @ weight).unsqueeze(1) * keys).sum(dim=2)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)


def _mask(lengths: torch.Tensor, width: int) -> torch.Tensor:
    return torch.arange(width, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)


def _run_lstm(lstm: nn.LSTM, embedded: torch.Tensor, lengths: torch.Tensor):
    """Outputs (B, T, H·dirs) zero past each length, and final hidden states, for padded input."""
    packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    outputs, (hidden, _) = lstm(packed)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=embedded.size(1))
    return outputs, hidden


@dataclass
class _Context:
    """What a decoding step attends to; tensors indexed by group (one group per template)."""

    source_ids: torch.Tensor  # (1, L) ids of the input, for copying
    source_states: torch.Tensor  # (1, L, H)
    target_states: torch.Tensor  # (G, T, H) encoded target parse / template
    target_mask: torch.Tensor  # (G, T)


class _CopyDecoder(nn.Module):
    """One decoding step shared by both networks (their forms differ only in sizes and layers)."""

    def _step(self, previous: torch.Tensor | None, hidden, cell, group: torch.Tensor, context: _Context):
        n = hidden.size(1)
        if previous is None:
            word = torch.zeros(n, self.output_embedding.embedding_dim, device=hidden.device)
        else:
            word = self.output_embedding(previous)
        target = context.target_states[group]
        weights = _attend(hidden[-1], self.att_parse_W, target, context.target_mask[group])
        decoder_input = torch.cat([word, (weights.unsqueeze(2) * target).sum(1)], dim=1)
        _, (hidden, cell) = self.decoder(decoder_input.unsqueeze(1), (hidden, cell))
        top = hidden[-1]
        source = context.source_states.expand(n, -1, -1)
        source_mask = torch.ones(source.shape[:2], dtype=torch.bool, device=top.device)
        attention = _attend(top, self.att_W, source, source_mask)
        attended = (attention.unsqueeze(2) * source).sum(1)
        p_copy = torch.sigmoid(decoder_input @ self.copy_inp_v + attended @ self.copy_att_v + top @ self.copy_hid_v)
        copy = torch.zeros(n, self.out_dense_2.out_features, device=top.device)
        copy = torch.log(copy.scatter_add(1, context.source_ids.expand(n, -1), attention) + 1e-20)
        generate = torch.log_softmax(self.out_dense_2(self.out_dense_1(torch.cat([top, attended], dim=1))), dim=1)
        return p_copy * copy + (1 - p_copy) * generate, hidden, cell

    @torch.no_grad()
    def _beam_search(self, hidden, context: _Context, eos: int, beam: int, max_steps: int) -> list[list[int]]:
        """Best sequence per group (without EOS); finished beams keep their score and stay."""
        groups = context.target_states.size(0)
        layers, _, size = hidden.shape
        hidden = hidden.expand(layers, groups, size).contiguous()
        cell = torch.zeros_like(hidden)
        group = torch.arange(groups)
        scores = torch.zeros(groups, 1)
        sequences = torch.zeros(groups, 1, 0, dtype=torch.long)
        finished = torch.zeros(groups, 1, dtype=torch.bool)
        previous = None
        for _ in range(max_steps + 1):
            log_probs, hidden, cell = self._step(previous, hidden, cell, group, context)
            width = scores.size(1)
            log_probs = log_probs.view(groups, width, -1)
            vocab = log_probs.size(2)
            done_row = torch.full((vocab,), float("-inf"))
            done_row[eos] = 0.0
            log_probs = torch.where(finished.unsqueeze(2), done_row, log_probs)
            total = (scores.unsqueeze(2) + log_probs).view(groups, -1)
            scores, flat = total.topk(min(beam, total.size(1)), dim=1)
            origin, token = flat // vocab, flat % vocab
            rows = (torch.arange(groups).unsqueeze(1) * width + origin).view(-1)
            hidden, cell = hidden[:, rows], cell[:, rows]
            sequences = torch.cat([sequences[torch.arange(groups).unsqueeze(1), origin], token.unsqueeze(2)], dim=2)
            finished = finished[torch.arange(groups).unsqueeze(1), origin] | (token == eos)
            previous = token.view(-1)
            group = torch.arange(groups).repeat_interleave(scores.size(1))
            if bool(finished.all()):
                break
        best = []
        for tokens in sequences[:, 0].tolist():
            best.append(tokens[: tokens.index(eos)] if eos in tokens else tokens)
        return best


class ParseGenerator(_CopyDecoder):
    """Template (top levels of a parse) + input parse -> full target parse."""

    def __init__(self, d_nt: int, d_hid: int, len_voc: int):
        super().__init__()
        self.trans_embs = nn.Embedding(len_voc, d_nt)
        self.encoder = nn.LSTM(d_nt, d_hid, num_layers=1, batch_first=True)
        self.decoder = nn.LSTM(d_nt + d_hid, d_hid, num_layers=1, batch_first=True)
        self.out_dense_1 = nn.Linear(d_hid * 2, d_hid)
        self.out_dense_2 = nn.Linear(d_hid, len_voc)
        self.att_W = _uninitialised(d_hid, d_hid)
        self.att_parse_W = _uninitialised(d_hid, d_hid)
        self.copy_hid_v = _uninitialised(d_hid, 1)
        self.copy_att_v = _uninitialised(d_hid, 1)
        self.copy_inp_v = _uninitialised(d_nt + d_hid, 1)

    @property
    def output_embedding(self) -> nn.Embedding:
        """The embedding of the parse labels it generates: the decoder reads its previous output through it."""
        return self.trans_embs

    def generate(self, parse: torch.Tensor, templates: torch.Tensor, template_lengths: torch.Tensor,
                 eos: int, beam: int = 3, max_steps: int = 150) -> list[list[int]]:
        """``parse`` (1, L) ids of the input parse; one full parse per template row."""
        source, last = _run_lstm(self.encoder, self.trans_embs(parse), torch.tensor([parse.size(1)]))
        target, _ = _run_lstm(self.encoder, self.trans_embs(templates), template_lengths)
        context = _Context(parse, source, target, _mask(template_lengths, templates.size(1)))
        return self._beam_search(last, context, eos, beam, max_steps)


class ParaphraseNetwork(_CopyDecoder):
    """Sentence (BPE ids) + target parse -> paraphrase with that syntax."""

    def __init__(self, d_word: int, d_hid: int, d_nt: int, d_trans: int, len_voc: int, len_trans_voc: int,
                 use_input_parse: bool = False):
        super().__init__()
        self.word_embs = nn.Embedding(len_voc, d_word)
        self.trans_embs = nn.Embedding(len_trans_voc, d_nt)
        self.encoder = nn.LSTM(d_word + (d_trans if use_input_parse else 0), d_hid, num_layers=1,
                               bidirectional=True, batch_first=True)
        self.encoder_proj = nn.Linear(d_hid * 2, d_hid)
        self.decoder = nn.LSTM(d_word + d_hid, d_hid, num_layers=2, batch_first=True)
        self.trans_encoder = nn.LSTM(d_nt, d_trans, num_layers=1, batch_first=True)
        self.out_dense_1 = nn.Linear(d_hid * 2, d_hid)
        self.out_dense_2 = nn.Linear(d_hid, len_voc)
        self.att_parse_proj = nn.Linear(d_trans, d_hid)
        self.att_W = _uninitialised(d_hid, d_hid)
        self.att_parse_W = _uninitialised(d_hid, d_hid)
        self.copy_hid_v = _uninitialised(d_hid, 1)
        self.copy_att_v = _uninitialised(d_hid, 1)
        self.copy_inp_v = _uninitialised(d_word + d_hid, 1)

    @property
    def output_embedding(self) -> nn.Embedding:
        """The embedding of the BPE units it generates: the decoder reads its previous output through it."""
        return self.word_embs

    def generate(self, sentence: torch.Tensor, parses: torch.Tensor, parse_lengths: torch.Tensor,
                 eos: int, beam: int = 3, max_steps: int = 40) -> list[list[int]]:
        """``sentence`` (1, L) BPE ids ending in EOS; one paraphrase per target parse row."""
        states, (last, _) = self.encoder(self.word_embs(sentence))
        source = self.encoder_proj(states)
        last = self.encoder_proj(torch.cat([last[0], last[1]], dim=1))
        target, _ = _run_lstm(self.trans_encoder, self.trans_embs(parses), parse_lengths)
        context = _Context(sentence, source, self.att_parse_proj(target), _mask(parse_lengths, parses.size(1)))
        hidden = last.unsqueeze(0).expand(2, 1, last.size(1))
        return self._beam_search(hidden, context, eos, beam, max_steps)
