"""User plug-ins named ``py:module:factory`` or ``py:path/to/file.py:factory``: one loader for victims and attackers.

A plug-in is a factory (any callable) in an importable module or in a Python file. The
loader never changes ``sys.path``: a module is imported as Python finds it (put its
folder on ``PYTHONPATH`` or install it), a file is loaded from its path. What the factory
builds is checked by protocol, for the one method the package calls on it
(``predict_proba`` of a victim, ``attack`` of an attacker), not by counting parameters,
so ``attack(victim, text, goal, rng=None, **options)`` fits as well as the plain form.
Every failure is a :class:`PluginError` naming the spec and the fix.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, NoReturn

from bodega.errors import BodegaError

PREFIX = "py:"
"""The prefix of a plug-in spec, for ``--victim`` and ``--attacker`` alike."""


class PluginError(BodegaError):
    """A ``py:`` spec that does not name a loadable factory, or whose product lacks the needed method."""


def is_plugin(spec: object) -> bool:
    """Whether ``spec`` is a ``py:`` plug-in string."""
    return isinstance(spec, (str, Path)) and str(spec).startswith(PREFIX)


STEM_CHARACTERS = 80
"""At most this many characters of a spec's stem are kept (its end: the file and the factory), so that a run folder
named after a plug-in in a deep folder stays within the 255 bytes a file name may have."""


def folder_name(spec: str) -> str:
    """A plug-in spec as one part of a folder name: a readable stem (each run of characters a folder name cannot
    hold read as ``_``, the last :data:`STEM_CHARACTERS` kept) and a short hash of the spec itself, so that two
    specs never share a folder (``py:plugins/x/att.py:build`` and ``py:plugins/x_att.py:build`` have one stem and
    two hashes)."""
    stem = re.sub(r"[^\w.-]+", "_", str(spec)).strip("_")
    if len(stem) > STEM_CHARACTERS:
        stem = "py_" + stem[-STEM_CHARACTERS:].lstrip("_.-")
    return f"{stem}_{hashlib.sha256(str(spec).encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def _split(spec: str, role: str) -> tuple[str, str]:
    body = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    source, sep, attribute = body.rpartition(":")
    if not sep or not source or not attribute or not attribute.isidentifier():
        raise PluginError(f"{role} {spec!r}: expected py:module:factory or py:path/to/file.py:factory, "
                          "e.g. py:my_package.victims:build")
    return source, attribute


def check_spec(spec: str, role: str = "plug-in") -> str:
    """``spec`` itself when it has the form of a plug-in and a file it names exists, without importing it
    (a grid checks its plug-ins when it is read; its cells load them)."""
    source, _ = _split(spec, role)
    if source.endswith(".py") and not Path(source).expanduser().is_file():
        raise PluginError(f"{role} {spec!r}: no file {source} (a relative path is read from {Path.cwd()})")
    return spec


def source_sha256(spec: str, role: str = "plug-in") -> str:
    """sha256 of the file that defines the factory ``spec`` names, found without running it (a module's
    parent packages are imported), so that a grid cell running a plug-in runs again when its code changes."""
    source, _ = _split(check_spec(spec, role), role)
    if source.endswith(".py"):
        path = Path(source).expanduser()
    else:
        try:
            found = importlib.util.find_spec(source)
        except ModuleNotFoundError:
            found = None
        if found is None or not found.origin or not Path(found.origin).is_file():
            raise PluginError(f"{role} {spec!r}: cannot find module {source!r}; put its folder on PYTHONPATH, "
                              "install it, or name its file: py:path/to/file.py:factory")
        path = Path(found.origin)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _module_from_file(path: Path, spec: str, role: str) -> ModuleType:
    if not path.is_file():
        raise PluginError(f"{role} {spec!r}: no file {path} (a relative path is read from {Path.cwd()})")
    resolved = path.resolve()
    # One module per file, named after its path, so that two files called mine.py never collide.
    name = f"bodega_plugin_{resolved.stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(f"{role} {spec!r}: {path} is not a Python file that can be imported")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # dataclasses and pickling look classes up by their module's name
    try:
        module_spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[name]
        _refuse_failure(error, f"{role} {spec!r}: loading {path} failed", f"run `python {path}` to see where")
    return module


def _refuse_failure(error: BaseException, what: str, fix: str) -> NoReturn:
    """Re-raise a plug-in's failure as one :class:`PluginError` line (``-v`` shows its traceback); an
    interrupt stays an interrupt, and the plug-in's own BodegaError passes as it is."""
    if isinstance(error, (KeyboardInterrupt, BodegaError)):
        raise error
    if isinstance(error, SystemExit):
        raise PluginError(f"{what}: it called sys.exit({error.code!r}); a plug-in must return or raise, "
                          "not end the process") from error
    if isinstance(error, SyntaxError):
        raise PluginError(f"{what}: syntax error at {error.filename}:{error.lineno}: {error.msg}; {fix}") from error
    raise PluginError(f"{what}: {type(error).__name__}: {error}; {fix}") from error


def load_factory(spec: str, role: str = "plug-in") -> Callable[..., Any]:
    """The callable that ``spec`` names; ``role`` (``"victim"``, ``"attacker"``) words the error messages."""
    source, attribute = _split(str(spec), role)
    if source.endswith(".py"):
        module = _module_from_file(Path(source).expanduser(), spec, role)
    else:
        try:
            module = importlib.import_module(source)
        except ModuleNotFoundError as error:
            raise PluginError(f"{role} {spec!r}: cannot import {source!r} ({error}); put its folder on "
                              "PYTHONPATH, install it, or name its file: py:path/to/file.py:factory") from error
        except BaseException as error:
            _refuse_failure(error, f"{role} {spec!r}: importing {source} failed",
                            f"run `python -c 'import {source}'` to see where")
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise PluginError(f"{role} {spec!r}: {source} has no callable {attribute!r}")
    return factory


def plugin_identity(spec: str, role: str = "plug-in", product: object = None, read: list[str] | None = None
                    ) -> str | None:
    """The content identity of the victim ``spec``'s factory built: its file's sha256 and the factory's name,
    with what ``product`` runs (its class's code and every helper it reads, its state: the weights its factory
    loaded from whichever file, :func:`bodega.identity.object_identity`) and the content of the files ``read``
    while it was built (:func:`bodega.identity.files_read`).

    A spec names code by where it is (``py:victim.py:build`` in two folders is two models), and one file can
    build two models (its factory reads another weights file), so the cache and resume checks key by this
    rather than by the spec. None where the module has no source file (a built-in or namespace module) or
    the product has no stable identity (state that cannot be read): such a victim is not cached."""
    from bodega.identity import file_identity, object_identity, read_files_identity

    source, attribute = _split(str(spec), role)
    if source.endswith(".py"):
        path = Path(source).expanduser()
    else:
        module = sys.modules.get(source) or importlib.import_module(source)
        path = Path(getattr(module, "__file__", None) or "")
    if not path.is_file():
        return None
    made = object_identity(product) if product is not None else ""
    if made is None:
        return None
    files = read_files_identity(read) if read else ""
    return hashlib.sha256(f"{file_identity(path, attribute)}:{made}:{files}".encode()).hexdigest()


def require_method(product: object, method: str, spec: str, role: str, usage: str) -> object:
    """``product`` itself when it has a callable ``method``; otherwise a :class:`PluginError` that says
    what the factory returned and what it must return (``usage``, e.g. ``predict_proba(texts) -> [n, 2]``)."""
    if isinstance(product, type):
        raise PluginError(f"{role} {spec!r}: the factory returned the class {product.__name__}, not an object; "
                          f"return {product.__name__}(...), an object with {usage}")
    if not callable(getattr(product, method, None)):
        raise PluginError(f"{role} {spec!r}: the factory returned {type(product).__name__}, which has no "
                          f"{method} method; it must build an object with {usage}")
    return product


def call_factory(spec: str, role: str, **options: Any) -> object:
    """What the factory ``spec`` names builds from ``options``; its failure is one :class:`PluginError` line."""
    factory = load_factory(spec, role)
    try:
        return factory(**options)
    except BaseException as error:
        _refuse_failure(error, f"{role} {spec!r}: the factory failed", "fix the factory (-v shows the traceback)")


def build_plugin(spec: str, role: str, method: str, usage: str, **options: Any) -> object:
    """Load the factory ``spec`` names, call it with ``options`` and check its product has ``method``."""
    return require_method(call_factory(spec, role, **options), method, spec, role, usage)
