"""What the last run made of each file of a project, kept so that a warm run neither decodes
nor reads again the texts and code of an unchanged file (engine.judge).

Per project, `kept/<project>.json` in the cache folder holds, for each file by its shown path:
the cache entry it was read from; the digest of what its code holds (`code_digest`); its light
extraction (the keys it logs, its tables, flags and suppressions); and what its texts state
under the last run's metric index (a FileView, with that index's digest). For the project it
holds what the code of all the files makes (CodeProducts), with the digest of its inputs, and
what the texts that are no file's (registry descriptions, tooltips) state. It
is only ever a shortcut: where an entry, the index or the code inputs differ, that part is
worked out again from the files' extractions.

Like the entries (cache.py) it is sealed with this machine's key (trust.py) and is plain JSON
rebuilt into checked types: each file's parts must be about that file and the code products
about the project's files. One not sealed with the key, or not of its shape, counts as absent.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metriclint.base import files, plain
from metriclint.base.files import read_regular
from metriclint.extract import prune, trust
from metriclint.model import CodeProducts, FileView, ReadFailure, Reading
from metriclint.sources import Extraction

VERSION = 1
Light = Extraction | ReadFailure
_products, _encode_products = plain.spanning_decoder(CodeProducts), plain.encoder(CodeProducts)
_readings, _encode_readings = plain.decoder(tuple[Reading, ...]), plain.encoder(tuple[Reading, ...])
_DIGEST = re.compile(r"[0-9a-f]{64}")
_NOT_CODE = frozenset({"texts", "tables", "suppressions"})  # the parts of an extraction no code fact nor key comes from


class _Part:
    """How one of a file's kept parts is written and read. Most files log nothing and state
    nothing (tests, data, docs of other things): the empty part is written and read as one
    constant rather than field by field (Megatron-LM: 2,262 light extractions and 2,405 views
    of 2,451 files, two thirds of reading and writing the kept file)."""

    def __init__(self, kind: object, empty: object) -> None:
        self.encode, self.decode = plain.encoder(kind), plain.decoder(kind)
        self.empty, self.written = empty, self.encode(empty)

    def write(self, value: object) -> object:
        return self.written if value == self.empty else self.encode(value)

    def read(self, part: object, shown: str) -> Any:
        return self.empty if part == self.written else self.decode(part, shown)


_LIGHT, _VIEW = _Part(Light, Extraction()), _Part(FileView, FileView())


@dataclass(frozen=True)
class File:
    """One file as the last run left it."""

    entry: str  # its cache entry's name
    code: str | None  # `code_digest` of its extraction
    light: Light  # `light(result)`
    index: str  # the digest of what `view` was worked out under (engine/warm.py)
    view: FileView


@dataclass(frozen=True)
class Kept:
    files: dict[str, File] = field(default_factory=dict)
    code_key: str = ""  # the digest of what `products` were worked out from (engine/warm.py)
    products: CodeProducts = CodeProducts()
    readings: dict[str, tuple[Reading, ...]] = field(default_factory=dict)  # what the texts that are no file's state


def light(result: Light) -> Light:
    """What a warm run needs of an unchanged file's extraction: what it logs, the tables, flags
    and suppressions it holds and whether its code went unread, not its texts nor its code flows."""
    if isinstance(result, ReadFailure):
        return result
    return Extraction(
        keys=result.keys, suppressions=result.suppressions, tables=result.tables, flags=result.flags, code_unread=result.code_unread
    )


def code_digest(result: Light) -> str | None:
    """The digest of all a file gives the project's code facts and keys (everything but its
    texts, tables and suppressions): a comment or docstring edit leaves it alone. None for
    code flows nested too deeply to digest, which the cache does not keep either."""
    if isinstance(result, ReadFailure):
        return ""
    parts = tuple(getattr(result, f.name) for f in dataclasses.fields(result) if f.name not in _NOT_CODE)
    try:
        return plain.fingerprint(parts).hex()
    except RecursionError:
        return None


def digest(*parts: object) -> str:
    """A digest of plain values (strings, numbers, lists) that says what a kept part was
    worked out from."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def load(directory: Path, project: Path, salt: str, limit: int) -> Kept:
    """The last run's, if it was sealed with this machine's key (trust.py), made under `salt`
    and is of its shape; else nothing (a sealed one not of its shape counts as dropped)."""
    secret, path = trust.key(), _path(directory, project)
    try:
        data = trust.unseal(secret, "kept", path.name, read_regular(path, limit)) if secret is not None else None
    except OSError:
        return Kept()
    if data is None:
        return Kept()
    try:
        return _checked(json.loads(data), salt)
    except Exception:  # noqa: BLE001 - whatever the decoding raises: the files' extractions are worked out again
        trust.dropped()
        return Kept()


def save(directory: Path, project: Path, salt: str, kept: Kept) -> None:
    """Best effort: what cannot be written costs the next run time only."""
    try:
        value = {
            "version": VERSION,
            "salt": salt,
            "files": {s: [f.entry, f.code, _LIGHT.write(f.light), f.index, _VIEW.write(f.view)] for s, f in kept.files.items()},
            "code": [kept.code_key, _encode_products(kept.products)],
            "readings": [[text, _encode_readings(said)] for text, said in kept.readings.items()],
        }
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        target, secret = _path(directory, project), trust.key()
        if secret is None or not prune.ready(directory):
            return
        target.parent.mkdir(exist_ok=True)
        files.replace(target, trust.seal(secret, "kept", target.name, data))
    except OSError as error:
        prune.unwritable(directory, error)
    except (ValueError, RecursionError):
        return


def _path(directory: Path, project: Path) -> Path:
    return directory / "kept" / f"{prune.project_name(project)}.json"


def _checked(value: object, salt: str) -> Kept:
    if not isinstance(value, dict) or value.get("version") != VERSION or value.get("salt") != salt:
        return Kept()
    found: dict[str, File] = {}
    for shown, parts in value["files"].items():
        entry, code, light_part, index, view = parts
        if not all(isinstance(d, str) and _DIGEST.fullmatch(d) for d in (entry, index)) or not isinstance(code, (str, type(None))):
            return Kept()
        found[shown] = File(entry, code, _LIGHT.read(light_part, shown), index, _VIEW.read(view, shown))
    code_key, products = value["code"]
    if not isinstance(code_key, str) or not all(isinstance(text, str) for text, _ in value["readings"]):
        return Kept()
    readings = {text: _readings(said, "") for text, said in value["readings"]}
    return Kept(found, code_key, _products(products, frozenset(found)), readings)
