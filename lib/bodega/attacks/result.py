"""What one attack on one text returns."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttackResult:
    """``adversarial`` is set only on success; ``error`` holds an exception's text."""

    adversarial: str | None
    success: bool
    error: str | None = None

    @classmethod
    def failure(cls) -> "AttackResult":
        """An attack that found nothing (no text, no error)."""
        return cls(None, False)
