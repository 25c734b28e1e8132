"""The content identity of a victim the package did not train: what it runs, not what it is called.

A ``py:`` plug-in and a :func:`bodega.wrap`-ped function or object key the prediction cache and a
run folder's resume check by this identity together with their version. A name cannot serve:
two folders may each hold a ``victim.py`` with a ``build`` factory, and every lambda is called
``<lambda>``. Where no stable identity can be found (a function whose source cannot be read, a
closure over a value that cannot be pickled, an object that cannot be pickled), the answer is
None and the victim's predictions are not cached, rather than served to another model.
"""
from __future__ import annotations

import hashlib
import inspect
import pickle
import types
from pathlib import Path

from bodega.io import file_sha256


def file_identity(path: str | Path, attribute: str) -> str:
    """A plug-in file's identity: the sha256 of its bytes and the factory's name."""
    return hashlib.sha256(f"file:{file_sha256(path)}:{attribute}".encode()).hexdigest()


def _code_digest(code: types.CodeType, digest, names: set[str]) -> None:
    """Feed what a code object computes (bytecode, names, constants, nested code) into ``digest``,
    and collect the global names it reads into ``names``."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    names.update(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _code_digest(constant, digest, names)
        else:
            digest.update(repr(constant).encode("utf-8", "surrogatepass"))


def _value_identity(value: object, seen: set[int]) -> str | None:
    """The identity of a value a function reads: a module by name, a function or class by its code,
    anything else by its pickled bytes; None when it has none."""
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, types.FunctionType):
        return function_identity(value, seen)
    try:
        if isinstance(value, type):
            return hashlib.sha256(inspect.getsource(value).encode()).hexdigest()
        return hashlib.sha256(pickle.dumps(value)).hexdigest()
    except Exception:  # noqa: BLE001 - unpicklable, or a class without readable source: no stable identity
        return None


def function_identity(function: types.FunctionType, _seen: set[int] | None = None) -> str | None:
    """A function's identity: its source and bytecode, and every value it reads (captured, defaults, the
    module globals it names); None when any of them cannot be read."""
    seen = set() if _seen is None else _seen
    if id(function) in seen:  # recursion: the function is already being hashed
        return "recursive"
    seen.add(id(function))
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
        identity = _value_identity(value, seen)
        if identity is None:
            return None
        digest.update(identity.encode())
    return digest.hexdigest()


def object_identity(obj: object) -> str | None:
    """The identity of what ``obj`` computes: a function's (see :func:`function_identity`), else the
    sha256 of the object pickled with its class's source; None when either cannot be read."""
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        function = obj.__func__ if isinstance(obj, types.MethodType) else obj
        identity = function_identity(function)
        if identity is None or not isinstance(obj, types.MethodType):
            return identity
        owner = object_identity(obj.__self__)
        return None if owner is None else hashlib.sha256(f"{identity}:{owner}".encode()).hexdigest()
    try:
        state = pickle.dumps(obj)
        source = inspect.getsource(type(obj))
    except Exception:  # noqa: BLE001 - unpicklable, or a class without readable source
        return None
    return hashlib.sha256(b"object:" + source.encode() + b"\n" + state).hexdigest()


def weights_identity(model) -> str:
    """A torch model's identity: the sha256 of its parameters and buffers, by name (a pipeline's model)."""
    import torch

    digest = hashlib.sha256(b"weights:")
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
