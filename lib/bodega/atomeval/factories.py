"""AtomEval's parts built from their names on the command line: LLM clients, extractors, rewriters, the gate.

A spec (``rules``, ``spacy``, ``saved:<tables run>``, ``openai:<model>[@<url>]``, ``transformers:<path or role>``)
is turned into its object here and only here, so every command and the notebook read a name the same way.
"""
from __future__ import annotations

from pathlib import Path

from bodega.errors import MissingFileError, UnknownNameError


def make_client(spec: str, threads: int | None = None, precision: str = "auto", batch_size: int = 8):
    """``openai:<model>[@<base_url>]`` or ``transformers:<path or resource role>`` -> a chat client.

    A resource role (e.g. ``transformers:smollm2-instruct``, the ``cpu`` profile's ``llm``) is resolved
    through :mod:`bodega.resources`; anything else after ``transformers:`` is a model folder.
    """
    from bodega.atomeval.llm import OpenAIChatClient, TransformersChatClient

    kind, _, rest = spec.partition(":")
    if kind == "openai" and rest:
        model, _, base_url = rest.partition("@")
        return OpenAIChatClient(model=model, **({"base_url": base_url} if base_url else {}))
    if kind == "transformers" and rest:
        path, label = local_model_path(rest)
        return TransformersChatClient(path, threads=threads, label=label, precision=precision,
                                      batch_size=batch_size)
    raise UnknownNameError(f"unknown LLM spec {spec!r} (--rewriter, --extractor); use openai:<model>[@<base_url>] "
                           "or transformers:<path or resource role, e.g. smollm2-instruct>")


def local_model_path(name: str) -> tuple[str, str | None]:
    """(model folder, label): a resource role is resolved and labelled by its name, a path is used as is."""
    from bodega.resources import SPECS, resolve

    if name in SPECS:
        return str(resolve(name).path), name
    if not Path(name).exists():
        raise MissingFileError(f"{name}: neither a model folder nor a resource role "
                               f"(roles: {', '.join(sorted(SPECS))})")
    return name, None


def make_extractor(spec: str = "spacy", threads: int | None = None, precision: str = "auto", batch_size: int = 8,
                   cache: str | Path | None = None):
    """``spacy`` (the dependency-parse extractor) or an LLM spec (see :func:`make_client`; a local model
    decodes ``batch_size`` claims at a time in ``precision`` and keeps its outcomes in the JSON-lines
    ``cache`` when given)."""
    if spec == "spacy":
        from bodega.atomeval.extract_spacy import SpacyExtractor

        return SpacyExtractor()
    from bodega.atomeval.extract_llm import LLMExtractor
    from bodega.atomeval.rewrite_cache import RewriteCache

    return LLMExtractor(make_client(spec, threads, precision, batch_size),
                        cache=RewriteCache(Path(cache)) if cache else None)


def make_rewriter(spec: str = "rules", threads: int | None = None, cache: str | Path | None = None,
                  precision: str = "auto", batch_size: int = 8):
    """``rules``, ``saved:<tables dir>`` (rewrites of an earlier run) or an LLM spec (see :func:`make_client`).

    An LLM rewriter keeps its answers in the JSON-lines ``cache`` when given (see
    :mod:`bodega.atomeval.rewrite_cache`) and decodes ``batch_size`` claims at a time in ``precision``."""
    if spec == "rules":
        from bodega.atomeval.rewriters import RuleRewriter

        return RuleRewriter()
    if spec.startswith("saved:"):
        from bodega.atomeval.rewriters import SavedRewriter

        return SavedRewriter(spec.removeprefix("saved:"))
    from bodega.atomeval.rewrite_cache import RewriteCache
    from bodega.atomeval.rewriters import LLMRewriter

    client = make_client(spec, threads, precision, batch_size)
    if hasattr(client, "stop_strings"):
        client.stop_strings = ("\n",)  # only an answer's first line is kept: stop decoding there
    return LLMRewriter(client, cache=RewriteCache(Path(cache)) if cache else None, batch_size=batch_size)


def make_gate(profile: str = "cpu", extractor: str = "spacy", precision: str = "auto",
              cache: str | Path | None = None):
    """The gate with the profile's NLI model (none in ``cpu``); ``cache`` keeps an LLM extractor's outcomes."""
    from bodega.atomeval.gate import Gate
    from bodega.atomeval.models import load_nli

    return Gate(make_extractor(extractor, precision=precision, cache=cache), nli=load_nli(profile))
