"""Safe loading of the published SCPN files (two torch checkpoints, two pickled vocabularies).

A pickle can run arbitrary code when loaded, so no file here goes through plain
``pickle.load``: checkpoints are read with ``torch.load(weights_only=True)`` (tensors,
containers and the ``argparse.Namespace`` of training options only) and the vocabulary
pickles with an unpickler that admits nothing but builtin dicts, lists, tuples, strings
and numbers.
"""
from __future__ import annotations

import builtins
import io
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bodega.errors import BodegaError

SAFE_BUILTINS = frozenset({"dict", "list", "tuple", "str", "int", "float", "bool", "set", "frozenset"})


class UnsafeFileError(ValueError):
    """A file holds objects this loader refuses to build; the message names file and object."""


class _VocabularyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module in ("builtins", "__builtin__") and name in SAFE_BUILTINS:
            return getattr(builtins, name)
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def load_vocabulary_pickle(path: str | Path) -> Any:
    """A pickle of builtin containers only (Python 2 strings are read as UTF-8)."""
    try:
        return _VocabularyUnpickler(io.BytesIO(Path(path).read_bytes()), encoding="utf-8").load()
    except pickle.UnpicklingError as error:
        if str(error).startswith("refused global"):
            raise UnsafeFileError(
                f"{path}: not loaded ({error}); only dicts, lists, tuples, strings and numbers are accepted "
                "from a pickle, because unpickling anything else can run code. Convert the file to plain "
                "containers on a trusted machine.") from error
        raise BodegaError(f"{path}: not a readable pickle ({error}); download the SCPN files again") from error
    except (EOFError, UnicodeDecodeError) as error:
        raise BodegaError(f"{path}: not a readable pickle ({error}); download the SCPN files again") from error


def load_checkpoint(path: str | Path) -> tuple[dict, dict]:
    """(state_dict, training options) from a checkpoint ``{'state_dict': ..., 'config_args': Namespace}``."""
    import argparse

    import torch

    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            content = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise UnsafeFileError(
            f"{path}: torch.load(weights_only=True) refused it ({error}). This project loads checkpoints "
            "only that way, because a fully unpickled file can run code; re-save it on a trusted machine "
            "as {'state_dict': tensors, 'config_args': argparse.Namespace or dict}.") from error
    except (RuntimeError, EOFError) as error:
        raise BodegaError(f"{path}: not a readable torch checkpoint ({error}); "
                          "download the SCPN files again") from error
    if not isinstance(content, dict) or "state_dict" not in content or "config_args" not in content:
        keys = list(content)[:5] if isinstance(content, dict) else "-"
        raise BodegaError(f"{path}: expected a dict with 'state_dict' and 'config_args', "
                          f"found {type(content).__name__} with keys {keys}")
    args = content["config_args"]
    return content["state_dict"], dict(vars(args) if isinstance(args, argparse.Namespace) else args)


@dataclass
class SCPNVocabularies:
    """``words`` maps BPE unit -> id (with 'EOS'); ``tags`` maps parse label -> id (with 'EOP')."""

    words: dict[str, int]
    reverse_words: dict[int, str]
    tags: dict[str, int]

    @property
    def reverse_tags(self) -> dict[int, str]:
        """Parse label by id, to read generated parses."""
        return {i: t for t, i in self.tags.items()}


def load_vocabularies(folder: str | Path) -> SCPNVocabularies:
    """``parse_vocab.pkl`` = (unit -> id, id -> unit) and ``ptb_tagset.pkl`` = label -> id, checked."""
    folder = Path(folder)
    pair = load_vocabulary_pickle(folder / "parse_vocab.pkl")
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(x, dict) for x in pair)):
        raise BodegaError(f"{folder / 'parse_vocab.pkl'}: expected a pair (unit -> id, id -> unit)")
    tags = load_vocabulary_pickle(folder / "ptb_tagset.pkl")
    if not isinstance(tags, dict) or "EOP" not in tags:
        raise BodegaError(f"{folder / 'ptb_tagset.pkl'}: expected a dict label -> id that has 'EOP'")
    words, reverse = pair
    if "EOS" not in words:
        raise BodegaError(f"{folder / 'parse_vocab.pkl'}: the unit vocabulary has no 'EOS'")
    return SCPNVocabularies(words, reverse, tags)
