"""The numeric precision of every model forward, decided in one place.

``fp32`` (the default) is exact and the same on every machine. ``bf16`` stores transformer
weights in bfloat16: on a CPU with Intel AMX (``amx_bf16`` in /proc/cpuinfo) oneDNN runs
its matrix products on the tile units at about twice the fp32 rate (book: Performance), while a CPU
without AMX emulates or widens them and runs slower. ``auto`` takes bf16 only where it pays:
AMX-BF16, or a CUDA GPU with bf16. A bf16 victim is a different victim (its probabilities
move by up to 0.1 for the decoders), so the resolved precision is part of its identity:
recorded in victim.json, metrics.json and summary.json, and in cache and cell keys.

Victims receive their precision explicitly (:func:`bodega.victims.load_victim`). The models
an attack builds deep inside its recipes (the sentence encoder of its similarity constraint,
the language model proposing substitutes) read it from :func:`attack_precision`, which
:func:`using_precision` sets for the duration of one attack; outside it they stay fp32, so
the reported semantic scores stay BODEGA's fp32 numbers unless asked otherwise. Importing
this module imports nothing heavy and changes nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from bodega.errors import BodegaError

log = logging.getLogger(__name__)

PRECISIONS = ("fp32", "bf16", "auto")
DEFAULT = "fp32"
PRECISION_HELP = ("numeric precision of the transformer models: fp32 (default, exact), bf16 (bfloat16 weights; "
                  "about 2x faster where the CPU has AMX-BF16, slower elsewhere) or auto (bf16 only where the "
                  "CPU reports amx_bf16 or a CUDA GPU supports bf16)")
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Precision:
    """A resolved precision: ``name`` (fp32 or bf16) and the kernel family that runs it here."""

    name: str = DEFAULT
    kernels: str = "fp32"

    @property
    def is_bf16(self) -> bool:
        """Whether models should compute in bf16."""
        return self.name == "bf16"

    @property
    def dtype(self):
        """The torch dtype for this precision (torch is imported only when asked)."""
        import torch

        return torch.bfloat16 if self.is_bf16 else torch.float32

    def record(self) -> dict[str, str]:
        """What result files store: ``{"precision": ..., "kernels": ...}``."""
        return {"precision": self.name, "kernels": self.kernels}


FP32 = Precision()


def cpu_flags(path: str | Path = CPUINFO) -> frozenset[str]:
    """The CPU feature flags of the first processor in ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def cuda_bf16() -> bool:
    """Whether a CUDA GPU with bf16 is present (False without torch's CUDA build)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def bf16_kernels(flags: Iterable[str], gpu_bf16: bool = False) -> str:
    """The kernel family bf16 matrix products run on: ``cuda-bf16``, ``amx-bf16``, ``avx512-bf16``
    (bf16 dot products without the tile units: slower than fp32 here) or ``bf16-emulated``."""
    flags = set(flags)
    if gpu_bf16:
        return "cuda-bf16"
    if "amx_bf16" in flags:
        return "amx-bf16"
    if "avx512_bf16" in flags:
        return "avx512-bf16"
    return "bf16-emulated"


def resolve_precision(requested: str | Precision | None = None, flags: Iterable[str] | None = None,
                      gpu_bf16: bool | None = None) -> Precision:
    """``fp32``, ``bf16`` or ``auto`` (None: fp32) as the :class:`Precision` this machine runs.

    ``flags`` and ``gpu_bf16`` default to this machine's; tests pass their own. ``bf16`` where
    neither AMX-BF16 nor a bf16 GPU is present runs, but warns that it is slower than fp32.
    """
    if isinstance(requested, Precision):
        return requested
    name = (requested or DEFAULT).strip().lower()
    if name not in PRECISIONS:
        raise BodegaError(f"precision {requested!r}: choose one of {', '.join(PRECISIONS)} (--precision)")
    if name == "fp32":
        return FP32
    flags = cpu_flags() if flags is None else frozenset(flags)
    gpu = (cuda_bf16() if "amx_bf16" not in flags else False) if gpu_bf16 is None else gpu_bf16
    kernels = bf16_kernels(flags, gpu)
    fast = kernels in ("amx-bf16", "cuda-bf16")
    if name == "auto":
        return Precision("bf16", kernels) if fast else FP32
    if not fast:
        _warn_slow_bf16(kernels)
    return Precision("bf16", kernels)


@functools.lru_cache(maxsize=None)
def _warn_slow_bf16(kernels: str) -> None:
    """Say once per process that bf16 may run slowly here: a command resolves its precision for each model it
    loads, and the same line ten times hides the lines that differ."""
    log.warning("precision bf16 without AMX-BF16 or a bf16 GPU (kernels: %s) may run slower than fp32: the "
                "book's Performance chapter measured 0.74-0.8x with AVX512-BF16 alone and 0.2x with AVX2 on an "
                "Intel CPU; "
                "`python benchmarks/precision.py` measures this machine; --precision auto chooses fp32 here",
                kernels)


_ATTACK_PRECISION: contextvars.ContextVar[Precision] = contextvars.ContextVar("attack_precision", default=FP32)


def attack_precision() -> Precision:
    """The precision of the models an attack builds (fp32 outside :func:`using_precision`)."""
    return _ATTACK_PRECISION.get()


@contextlib.contextmanager
def using_precision(precision: Precision) -> Iterator[Precision]:
    """Within the block, attack models built on first use (encoder, substitute LM) take ``precision``."""
    token = _ATTACK_PRECISION.set(precision)
    try:
        yield precision
    finally:
        _ATTACK_PRECISION.reset(token)


def cast_model(model, precision: Precision | None = None):
    """``model`` in ``precision`` (default: :func:`attack_precision`): bf16 weights, or left as it is."""
    precision = attack_precision() if precision is None else precision
    return model.to(precision.dtype) if precision.is_bf16 else model
