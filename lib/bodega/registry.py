"""One registry per kind of name: attackers, victim kinds, tasks and profiles.

Each entry has one canonical name; its aliases (BODEGA's spellings, older names found in
committed results) resolve to it in every look-up, case and ``_``/``-`` folded, so a file,
a summary or a command line written with an old spelling reads as the canonical name. The
canonical name is the one written to new files.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from bodega.errors import BodegaError, UnknownNameError

Entry = TypeVar("Entry")


def fold(name: str) -> str:
    """The form names are compared in: surrounding space dropped, case folded, ``_`` read as ``-``."""
    return name.strip().casefold().replace("_", "-")


class Registry(Mapping[str, Entry], Generic[Entry]):
    """Canonical name -> entry, in registration order; looking up an alias gives the canonical entry.

    ``loader`` (called once, before the first look-up) imports the modules that register the
    package's own entries, so that registering needs no central list.
    """

    def __init__(self, kind: str, loader: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        self._names: dict[str, str] = {}  # folded name or alias -> canonical name
        self._loader = loader

    def _load(self) -> None:
        loader, self._loader = self._loader, None  # cleared first: the modules it imports register entries
        if loader is not None:
            try:
                loader()
            except BaseException:
                self._loader = loader  # a failed import is raised again at the next look-up, not hidden
                raise

    def register(self, name: str, entry: Entry, aliases: tuple[str, ...] = ()) -> None:
        """Add ``entry`` under ``name`` (registering a name again replaces its entry); a name or alias
        that already means another entry is refused."""
        self._load()  # the package's own entries first, so that a clash is found here and not at a later look-up
        for spelling in (name, *aliases):
            taken = self._names.get(fold(spelling))
            if taken is not None and taken != name:
                raise BodegaError(f"{self.kind} name {spelling!r} is taken by {taken!r}; choose another name")
        self._entries[name] = entry
        self._names.update({fold(spelling): name for spelling in (name, *aliases)})

    def unregister(self, name: str) -> None:
        """Remove an entry and its aliases (a toy entry a test registered)."""
        canonical = self.canonical(name)
        del self._entries[canonical]
        self._names = {spelling: target for spelling, target in self._names.items() if target != canonical}

    def find(self, name: str) -> str | None:
        """The canonical name that ``name`` (a name or an alias, in any case) means, or None."""
        self._load()
        return self._names.get(fold(name)) if isinstance(name, str) else None

    def canonical(self, name: str) -> str:
        """The canonical name that ``name`` means; an unknown name is a user error listing the known ones."""
        found = self.find(name)
        if found is None:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self)}")
        return found

    def listing(self, names: list[str] | None = None) -> str:
        """The canonical names (or ``names``) as a sentence lists them, for help texts: ``HN, PR2, FC or RD``."""
        names = list(self) if names is None else names
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"

    def __getitem__(self, name: str) -> Entry:
        return self._entries[self.canonical(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)
