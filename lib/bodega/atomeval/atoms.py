"""SROM atoms: subject, relation, object, modifiers and polarity, with the text span they came from.

An atom is one predication of a claim. The annotation guideline that the extractors and the
gold set follow is in ``atomeval/gold/README.md``. Atoms travel as JSON (LLM output, the gold
file, verdicts), so this module also holds the JSON schema and a validator that says exactly
what is wrong with an object (the LLM extractor retries with that message).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

POLARITIES = ("affirmed", "negated")
MODIFIER_TYPES = ("time", "place", "quantity", "manner", "scope", "agent", "other")

ATOM_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["atoms"],
    "properties": {
        "atoms": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["subject", "relation", "object", "modifiers", "polarity"],
                "properties": {
                    "subject": {"type": "string", "minLength": 1},
                    "relation": {"type": "string", "minLength": 1},
                    "object": {"type": "string"},
                    "modifiers": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["type", "value"],
                            "properties": {"type": {"enum": list(MODIFIER_TYPES)},
                                           "value": {"type": "string", "minLength": 1}},
                        },
                    },
                    "polarity": {"enum": list(POLARITIES)},
                    "span": {"type": "string"},
                },
            },
        }
    },
}


class AtomSchemaError(ValueError):
    """An object does not follow the atom schema; the message names the offending field."""


@dataclass(frozen=True)
class Modifier:
    """A modifier of an atom: its ``type`` and its text ``value``."""

    type: str
    value: str

    def to_dict(self) -> dict[str, str]:
        """The modifier as a JSON-ready dict."""
        return {"type": self.type, "value": self.value}


@dataclass(frozen=True)
class Atom:
    """One predication. ``object`` may be empty (intransitive or passive without object)."""

    subject: str
    relation: str
    object: str = ""
    modifiers: tuple[Modifier, ...] = ()
    polarity: str = "affirmed"
    span: str = ""

    @property
    def negated(self) -> bool:
        """True when the atom's polarity is ``negated``."""
        return self.polarity == "negated"

    def with_(self, **changes: Any) -> "Atom":
        """A copy of the atom with the given fields changed."""
        values = {**self.__dict__, **changes}
        return Atom(**values)

    def to_dict(self) -> dict[str, Any]:
        """The atom as a JSON-ready dict (modifiers as dicts)."""
        return {"subject": self.subject, "relation": self.relation, "object": self.object,
                "modifiers": [m.to_dict() for m in self.modifiers], "polarity": self.polarity,
                "span": self.span}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Atom":
        """An atom from a dict of the atom schema (validated first; missing optional fields get defaults)."""
        validate_atom(data)
        return cls(subject=data["subject"], relation=data["relation"], object=data.get("object", ""),
                   modifiers=tuple(Modifier(m["type"], m["value"]) for m in data.get("modifiers", [])),
                   polarity=data.get("polarity", "affirmed"), span=data.get("span", ""))

    def text(self) -> str:
        """A readable one-line rendering, for tables and diagnostics."""
        neg = "NOT " if self.negated else ""
        mods = "; ".join(m.value for m in self.modifiers)
        obj = f" | {self.object}" if self.object else ""
        return f"({self.subject} | {neg}{self.relation}{obj}{' | ' + mods if mods else ''})"


def validate_atom(data: Any, where: str = "atom") -> None:
    """Raise :class:`AtomSchemaError` naming the first field that breaks the schema."""
    if not isinstance(data, dict):
        raise AtomSchemaError(f"{where}: expected an object, got {type(data).__name__}")
    for key in ("subject", "relation"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise AtomSchemaError(f"{where}.{key}: must be a non-empty string")
    if not isinstance(data.get("object", ""), str):
        raise AtomSchemaError(f"{where}.object: must be a string (empty when there is none)")
    if data.get("polarity", "affirmed") not in POLARITIES:
        raise AtomSchemaError(f"{where}.polarity: must be one of {POLARITIES}, got {data.get('polarity')!r}")
    modifiers = data.get("modifiers", [])
    if not isinstance(modifiers, list):
        raise AtomSchemaError(f"{where}.modifiers: must be a list")
    for i, mod in enumerate(modifiers):
        if not isinstance(mod, dict) or not isinstance(mod.get("value"), str) or not mod["value"].strip():
            raise AtomSchemaError(f"{where}.modifiers[{i}]: needs a non-empty string 'value'")
        if mod.get("type") not in MODIFIER_TYPES:
            raise AtomSchemaError(f"{where}.modifiers[{i}].type: must be one of {MODIFIER_TYPES}")


def parse_atoms(payload: Any) -> list[Atom]:
    """Atoms from a decoded ``{"atoms": [...]}`` object, validated against the schema."""
    if not isinstance(payload, dict) or not isinstance(payload.get("atoms"), list):
        raise AtomSchemaError('expected an object {"atoms": [...]}')
    if not payload["atoms"]:
        raise AtomSchemaError("atoms: a claim has at least one atom")
    for i, item in enumerate(payload["atoms"]):
        validate_atom(item, f"atoms[{i}]")
    return [Atom.from_dict(item) for item in payload["atoms"]]
