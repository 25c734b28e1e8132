"""Loading a transformers folder a user names without ever running code that the folder ships.

A folder whose ``config.json`` or ``tokenizer_config.json`` has an ``auto_map`` asks transformers
to import Python files from the folder; in a terminal transformers would even ask mid-run whether
to run them. Every load in the package passes ``trust_remote_code=False``, and a folder a user
names (``hf:``, ``--trim-tokenizer``, ``--semantic-path``) is checked first, so that such a folder
is refused with one line naming it instead of a prompt or a traceback.
"""
from __future__ import annotations

import json
from pathlib import Path

from bodega.errors import BodegaError

CONFIG_FILES = ("config.json", "tokenizer_config.json", "preprocessor_config.json")


def refuse_custom_code(folder: str | Path, option: str) -> None:
    """Raise when ``folder`` asks for its own code (an ``auto_map``); ``option`` names where it was given."""
    folder = Path(folder).expanduser()
    for name in CONFIG_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BodegaError(f"{option} {folder}: {name} is not readable JSON ({error}); give a folder written "
                              "by save_pretrained") from None
        if isinstance(config, dict) and config.get("auto_map"):
            raise BodegaError(f"{option} {folder}: {name} names custom code (auto_map), which the package never "
                              "runs; give a folder of a standard transformers architecture")
