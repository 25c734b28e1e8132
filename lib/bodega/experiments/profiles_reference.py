"""``parameters/profiles.yaml``: a readable export of :mod:`bodega.profiles`, the one source of truth.

The file is generated (``bodega grid profiles``) and a test checks it is current, so the
parameters folder documents the profiles without a second copy that could drift.
"""
from __future__ import annotations

from dataclasses import asdict

import yaml

from bodega.profiles import PROFILES

HEADER = ("# Generated from lib/bodega/profiles.py by `bodega grid profiles`; do not edit by hand.\n"
          "# models: model role -> resource role of bodega.resources (null: the profile has none).\n")


def profiles_yaml() -> str:
    """``profiles.py`` as YAML, for the generated reference file that readers and other tools read."""
    data = {name: {k: v for k, v in asdict(profile).items() if k != "name"} for name, profile in PROFILES.items()}
    return HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
