"""The victim kinds: what each is and which class implements it, imported only when asked for.

A new kind of victim is one :func:`register_victim_kind` call (here for the package's own kinds;
anywhere before use for a user's): commands, grids and reports read the kinds from
:data:`VICTIM_KINDS`, and ``victim.json`` records a victim's kind by its canonical name.
The registry is in size order, the order tables list victims in.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from bodega.registry import Registry


@dataclass(frozen=True)
class VictimKind:
    """A kind of victim classifier that ``bodega train`` trains and ``bodega attack`` loads.

    ``implementation`` is the class (see :class:`bodega.victims.torch_victim.TorchVictim` for what
    training and loading call on it) or ``"module:Class"``, imported when first needed so that
    listing kinds stays free of torch. ``pretrained``: fine-tuned from a pretrained model, not
    trained from scratch; ``in_paper``: one of BODEGA's victims; ``bf16_autocast``: trained under
    bf16 autocast when ``--precision bf16`` is asked for (fp32 master weights).
    """

    name: str
    implementation: str | type
    pretrained: bool = False
    in_paper: bool = False
    bf16_autocast: bool = False

    def victim_class(self) -> type:
        """The class that implements the kind, importing its module only now."""
        if not isinstance(self.implementation, str):
            return self.implementation
        module, _, name = self.implementation.partition(":")
        return getattr(importlib.import_module(module), name)


VICTIM_KINDS: Registry[VictimKind] = Registry("victim kind")
"""Every victim kind by its canonical name, smallest model first."""


def register_victim_kind(kind: VictimKind, aliases: tuple[str, ...] = ()) -> None:
    """Make ``kind`` known by its name (and ``aliases``) to training, loading, grids and reports."""
    VICTIM_KINDS.register(kind.name, kind, aliases)


# bf16 autocast: MiniLM's steps ran 1.37x faster on AMX at the same dev F1, MPNet's (the cpu BERT) 3.3x
# and the decoders' LoRA steps faster at the same dev F1 (book/data/precision.json); the BiLSTM gains nothing.
register_victim_kind(VictimKind("BiLSTM", "bodega.victims.bilstm:BiLSTMVictim", in_paper=True))
register_victim_kind(VictimKind("GloVeBiLSTM", "bodega.victims.bilstm:GloveBiLSTMVictim"))  # GloVe-started embeddings
register_victim_kind(VictimKind("MiniLM", "bodega.victims.bert:MiniLMVictim", pretrained=True,
                                bf16_autocast=True))  # a smaller encoder than BERT's role
register_victim_kind(VictimKind("BERT", "bodega.victims.bert:BertVictim", pretrained=True, in_paper=True,
                                bf16_autocast=True))
register_victim_kind(VictimKind("GEMMA2B", "bodega.victims.gemma:Gemma2BVictim", pretrained=True, in_paper=True,
                                bf16_autocast=True))
register_victim_kind(VictimKind("GEMMA7B", "bodega.victims.gemma:Gemma7BVictim", pretrained=True, in_paper=True,
                                bf16_autocast=True))


def normalise_kind(kind: str) -> str:
    """The canonical spelling of a victim kind, matched case-insensitively; an unknown kind raises."""
    return VICTIM_KINDS.canonical(kind)


def victim_class(kind: str) -> type:
    """The class that implements victim ``kind``, importing its module only now."""
    return VICTIM_KINDS[kind].victim_class()


def victim_module(kind: str) -> str:
    """The name of the module that implements victim ``kind``, without importing it (cell keys hash its code)."""
    implementation = VICTIM_KINDS[kind].implementation
    return implementation.partition(":")[0] if isinstance(implementation, str) else implementation.__module__


def victim_kinds(*, pretrained: bool | None = None, in_paper: bool | None = None) -> tuple[str, ...]:
    """The canonical names of the kinds, in size order, optionally only those (not) pretrained or in the paper."""
    return tuple(name for name, kind in VICTIM_KINDS.items()
                 if pretrained in (None, kind.pretrained) and in_paper in (None, kind.in_paper))
