"""TOML parsing on every supported Python: the standard library's `tomllib` from 3.11 on, and
before that `tomli`, the package it was taken from (the same parser, errors and messages)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

__all__ = ["tomllib"]
