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


def _code_digest(code: types.CodeType, digest) -> None:
    """Feed what a code object computes (bytecode, names, constants, nested code) into ``digest``."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _code_digest(constant, digest)
        else:
            digest.update(repr(constant).encode("utf-8", "surrogatepass"))


def function_identity(function: types.FunctionType) -> str | None:
    """A function's identity: its source, bytecode and closure values; None when one cannot be read."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    digest = hashlib.sha256(f"function:{function.__module__}.{function.__qualname__}\n{source}".encode())
    _code_digest(function.__code__, digest)
    for cell in function.__closure__ or ():
        try:
            digest.update(pickle.dumps(cell.cell_contents))
        except Exception:  # noqa: BLE001 - an unpicklable captured value has no stable identity
            return None
    if function.__defaults__:
        try:
            digest.update(pickle.dumps(function.__defaults__))
        except Exception:  # noqa: BLE001
            return None
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
