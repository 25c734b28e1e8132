"""The content identity of a victim the package did not train: what it runs, not what it is called.

A ``py:`` plug-in and a :func:`bodega.wrap`-ped function or object key the prediction cache and a
run folder's resume check by this identity together with their version. A name cannot serve:
two folders may each hold a ``victim.py`` with a ``build`` factory, and every lambda is called
``<lambda>``. The identity follows what the code reads: the module-level helpers and classes it calls, the
function a ``functools.partial`` wraps, the attributes it reads of a user's module, an object's state (the
weights a factory loaded); installed packages are named by their versions. Where no stable identity can be
found (a function whose source cannot be read, a value that cannot be read or pickled), the answer is None
and the victim's predictions are not cached, rather than served to another model.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import inspect
import os
import pickle
import sys
import types
from importlib import metadata
from pathlib import Path
from typing import Iterator

from bodega.io import file_sha256


_READING: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("files_read", default=None)
_HOOK: list[bool] = []  # whether this process's audit hook is installed (it cannot be removed, only idle)


def _record_open(event: str, args: tuple) -> None:
    """The audit hook: within :func:`files_read`, note each file opened for reading."""
    if event != "open":
        return
    files = _READING.get()
    if files is None or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
    writing = any(c in mode for c in "wax+") if isinstance(mode, str) else \
        isinstance(flags, int) and flags & os.O_ACCMODE != os.O_RDONLY
    if not writing:
        files.append(os.fsdecode(args[0]))


@contextlib.contextmanager
def files_read() -> Iterator[list[str]]:
    """The files Python code opens for reading within the block (a plug-in factory loading its weights), through
    an audit hook installed on first use and idle outside such blocks."""
    if not _HOOK:
        sys.addaudithook(_record_open)
        _HOOK.append(True)
    files: list[str] = []
    token = _READING.set(files)
    try:
        yield files
    finally:
        _READING.reset(token)


_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pyd", ".pth")


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """A file's sha256, hashed once per process for each (size, modification time) it has had."""
    return file_sha256(path)


def read_files_identity(paths: list[str]) -> str:
    """The content of the data files a factory read (code, installed files and system files left out): a
    byte-identical factory that loads another weights file is another model."""
    hashes = set()
    for name in paths:
        path = Path(name).resolve()
        text = str(path)
        if not path.is_file() or path.suffix in _CODE_SUFFIXES or text.startswith(_library_roots()) \
                or text.startswith(("/proc/", "/sys/", "/dev/")):
            continue  # code is identified by what it computes (a module imported once is read once)
        stat = path.stat()
        hashes.add(_file_sha256(text, stat.st_size, stat.st_mtime_ns))
    return hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()


def file_identity(path: str | Path, attribute: str) -> str:
    """A plug-in file's identity: the sha256 of its bytes and the factory's name."""
    return hashlib.sha256(f"file:{file_sha256(path)}:{attribute}".encode()).hexdigest()


def _code_digest(code: types.CodeType, digest, names: set[str]) -> None:
    """Feed what a code object computes (bytecode, names, constants, nested code) into ``digest``,
    and collect the global and attribute names it reads into ``names``."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    names.update(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _code_digest(constant, digest, names)
        else:
            digest.update(repr(constant).encode("utf-8", "surrogatepass"))


def _library_roots() -> tuple[str, ...]:
    """Where installed code lives (the interpreter's prefixes and site-packages): code there is named by its
    package's version, not hashed."""
    import site
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()["stdlib"], *site.getsitepackages()}
    with contextlib.suppress(Exception):
        roots.add(site.getusersitepackages())
    return tuple(os.path.realpath(root) + os.sep for root in roots)


def _is_library(module_name: str | None) -> bool:
    """Whether ``module_name`` is installed code (the standard library, a package in site-packages, this
    package), which a version names; a user's module (``__main__``, a script's folder) is hashed instead."""
    if not module_name or module_name == "__main__":
        return False
    top = module_name.split(".")[0]
    if top == "bodega" or top in sys.builtin_module_names or top in sys.stdlib_module_names:
        return True
    module = sys.modules.get(module_name) or sys.modules.get(top)
    file = getattr(module, "__file__", None)
    return file is not None and os.path.realpath(file).startswith(_library_roots())


def _version(module_name: str) -> str:
    top = module_name.split(".")[0]
    try:
        return metadata.version(top)
    except Exception:  # noqa: BLE001 - not an installed distribution: the module's own word, if any
        return str(getattr(sys.modules.get(top), "__version__", ""))


def _module_identity(module: types.ModuleType, names: set[str], seen: dict[int, object]) -> str | None:
    """An installed module by name and version; a user's module by its file and the attributes a function
    reads of it (``helpers.SCALE`` set at run time, ``helpers.predict``)."""
    if _is_library(module.__name__):
        return f"module:{module.__name__}@{_version(module.__name__)}"
    file = getattr(module, "__file__", None)
    parts = [f"module:{module.__name__}:{file_sha256(file) if file and Path(file).is_file() else ''}"]
    for name in sorted(names):
        if name in vars(module) and not isinstance(vars(module)[name], types.ModuleType):
            identity = _value_identity(vars(module)[name], seen)
            if identity is None:
                return None
            parts.append(f"{name}={identity}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _class_identity(cls: type, seen: dict[int, object]) -> str | None:
    """An installed class by name and version; a user's class by its source and every method's identity (the
    helpers and values those read included), its user-defined bases too."""
    if _is_library(cls.__module__):
        return f"class:{cls.__module__}.{cls.__qualname__}@{_version(cls.__module__)}"
    try:
        digest = hashlib.sha256(b"class:" + inspect.getsource(cls).encode())
    except (OSError, TypeError):
        return None
    for name, member in sorted(vars(cls).items()):
        function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else \
            member.fget if isinstance(member, property) else member
        if isinstance(function, types.FunctionType):
            identity = function_identity(function, seen)
        elif name.startswith("__") or isinstance(member, (staticmethod, classmethod, property)):
            continue  # the class's own bookkeeping (__module__, __dict__, __doc__ ...)
        else:  # a class attribute a factory may have set (weights loaded into the class)
            identity = _value_identity(member, seen)
        if identity is None:
            return None
        digest.update(f"{name}={identity}".encode())
    for base in cls.__bases__:
        identity = _value_identity(base, seen)
        if identity is None:
            return None
        digest.update(identity.encode())
    return digest.hexdigest()


def _state_identity(obj: object, seen: dict[int, object]) -> str | None:
    """A user's object: its class and its attributes, each by its own identity (a function it holds by its code,
    a model by its weights)."""
    cls = _class_identity(type(obj), seen)
    state = getattr(obj, "__dict__", None)
    if cls is None or not isinstance(state, dict):
        return None if cls is None else _pickled(obj, cls)
    values = _value_identity(dict(state), seen)
    return None if values is None else hashlib.sha256(f"object:{cls}:{values}".encode()).hexdigest()


def _pickled(value: object, prefix: str = "") -> str | None:
    try:
        return hashlib.sha256(prefix.encode() + pickle.dumps(value)).hexdigest()
    except Exception:  # noqa: BLE001 - unpicklable: no stable identity
        return None


_PLAIN = (str, bytes, int, float, complex, bool, type(None))


def _value_identity(value: object, seen: dict[int, object],
                    names: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The identity of a value a victim's code reads: code by what it computes (:func:`function_identity`), a
    module or class from an installed package by its version, a torch model by its weights, containers and a
    user's objects member by member, anything else by its pickled bytes; None when it has none."""
    if isinstance(value, _PLAIN):
        return _pickled(value)
    if id(value) in seen:
        return "recursive"
    seen[id(value)] = value  # held, so that no later (temporary) value takes its id
    if isinstance(value, types.ModuleType):
        return _module_identity(value, set(names), seen)
    if isinstance(value, types.FunctionType):
        return (f"function:{value.__module__}.{value.__qualname__}@{_version(value.__module__)}"
                if _is_library(value.__module__) else function_identity(value, seen))
    if isinstance(value, types.MethodType):
        function, owner = _value_identity(value.__func__, seen), _value_identity(value.__self__, seen)
        return None if function is None or owner is None else hashlib.sha256(
            f"method:{function}:{owner}".encode()).hexdigest()
    if isinstance(value, functools.partial):
        parts = [_value_identity(part, seen) for part in (value.func, value.args, value.keywords)]
        return None if None in parts else hashlib.sha256(("partial:" + ":".join(parts)).encode()).hexdigest()
    if isinstance(value, type):
        return _class_identity(value, seen)
    if isinstance(value, (tuple, list, set, frozenset, dict)):
        return _container_identity(value, seen)
    if "torch" in sys.modules and isinstance(value, sys.modules["torch"].nn.Module):
        cls = _class_identity(type(value), seen)
        return None if cls is None else hashlib.sha256(f"{cls}:{weights_identity(value)}".encode()).hexdigest()
    if not _is_library(type(value).__module__):
        return _state_identity(value, seen)
    return _pickled(value, f"{type(value).__module__}@{_version(type(value).__module__)}:")


def _container_identity(value: tuple | list | set | frozenset | dict, seen: dict[int, object]) -> str | None:
    """A container of plain values by its pickled bytes; one holding code or objects member by member."""
    items = list(value.items()) if isinstance(value, dict) else list(value)
    flat = [part for item in items for part in (item if isinstance(value, dict) else (item,))]
    if all(isinstance(part, _PLAIN) for part in flat):
        return _pickled(sorted(items, key=repr) if isinstance(value, (set, frozenset)) else value)
    parts = [_value_identity(part, seen) for part in flat]
    if None in parts:
        return None
    ordered = sorted(parts) if isinstance(value, (set, frozenset)) else parts
    return hashlib.sha256(f"{type(value).__name__}:{','.join(ordered)}".encode()).hexdigest()


def function_identity(function: types.FunctionType, _seen: dict[int, object] | None = None) -> str | None:
    """A function's identity: its source and bytecode, and every value it reads (captured, defaults, the
    module globals it names, the attributes it reads of a user's module); None when any of them cannot be
    read."""
    seen = {} if _seen is None else _seen
    seen[id(function)] = function  # held, so that no later value takes its id
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    digest = hashlib.sha256(f"function:{function.__module__}.{function.__qualname__}\n{source}".encode())
    names: set[str] = set()
    _code_digest(function.__code__, digest, names)
    values = [cell.cell_contents for cell in function.__closure__ or ()]
    values += [function.__defaults__, function.__kwdefaults__]
    values += [function.__globals__[name] for name in sorted(names) if name in function.__globals__]
    for value in values:
        identity = _value_identity(value, seen, names)
        if identity is None:
            return None
        digest.update(identity.encode())
    return digest.hexdigest()


def object_identity(obj: object) -> str | None:
    """The identity of what ``obj`` computes (a function, a bound method, a ``functools.partial``, an object
    with ``predict_proba``): see :func:`_value_identity`; None when some part of it has no stable identity."""
    return _value_identity(obj, {})


def weights_identity(model) -> str:
    """A torch model's identity: the sha256 of its parameters and buffers, by name (a pipeline's model)."""
    import torch

    digest = hashlib.sha256(b"weights:")
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
