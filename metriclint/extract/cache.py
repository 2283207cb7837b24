"""Per-file extraction results, kept between runs under `.metriclint_cache/`.

An entry's name is a hash of the file's bytes, its shown path and the run's salt (metriclint
version, the built-in rules, the registry, the config's extra logging functions), so an entry is never
stale: a change to any of them simply names other entries. Entries are written to a temporary
file and renamed into place, so two runs racing on one entry each write a whole file; an entry
that cannot be read back (truncated, foreign, from another Python) counts as missing.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import os
import pickle
import tempfile
from pathlib import Path
from typing import Callable

from metriclint import __version__
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_regular
from metriclint.sources import Options

FORMAT = "v1"


def salt(registry: Path | None, options: Options) -> bytes:
    """Everything besides the file itself that changes what its extraction holds."""
    digest = hashlib.sha256(f"metriclint {__version__} {FORMAT} {sorted(options.log_functions)}\0".encode())
    # metriclint's own code counts too, so an edited checkout never reads a stale entry.
    for base, pattern in ((rules_dir(), "*"), (Path(__file__).parent.parent, "*.py")):
        for path in sorted(p for p in base.rglob(pattern) if p.is_file()):
            digest.update(path.relative_to(base).as_posix().encode() + b"\0" + read_regular(path) + b"\0")
    digest.update(b"registry\0" + (read_regular(registry) if registry is not None else b""))
    return digest.digest()


def key(run_salt: bytes, shown: str, data: bytes) -> str:
    return hashlib.sha256(run_salt + shown.encode("utf-8", "surrogateescape") + b"\0" + data).hexdigest()


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.entries = directory / FORMAT

    def get(self, entry: str) -> object | None:
        try:
            data = read_regular(self.entries / entry[:2] / entry)
            return _Loader(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - any unreadable entry is a miss, never a crash
            return None

    def put(self, entry: str, value: object) -> None:
        """Best effort: a cache that cannot be written only costs the next run time."""
        folder = self.entries / entry[:2]
        try:
            if not self.directory.is_dir():
                _create(self.directory)
            folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as stream:
                    _Writer(stream, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
                os.replace(temporary, folder / entry)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass


def _create(directory: Path) -> None:
    """A cache folder that git and backup tools leave alone, as ruff's and pytest's are."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ".gitignore").write_text("# Created by metriclint.\n*\n", encoding="utf-8")
    (directory / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# metriclint cache\n", encoding="utf-8")


class _Writer(pickle.Pickler):
    """Writes a dataclass as a call of its constructor. The default for frozen dataclasses
    with slots restores each object through `dataclasses.fields()`, which made reading a warm
    miles run's 51,000 cached objects take a quarter of the run."""

    def reducer_override(self, obj: object) -> tuple[Callable[..., object], tuple[object, ...]]:
        names = _constructor_fields(type(obj))
        return NotImplemented if names is None else (type(obj), tuple(getattr(obj, name) for name in names))


def _constructor_fields(cls: type) -> tuple[str, ...] | None:
    """The fields a dataclass's constructor takes, in order; None if it is not one that the
    constructor alone rebuilds (a field outside `__init__`). Worked out once per class."""
    try:
        return _CONSTRUCTORS[cls]
    except KeyError:
        pass
    fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else None
    found = _CONSTRUCTORS[cls] = tuple(f.name for f in fields) if fields is not None and all(f.init for f in fields) else None
    return found


_CONSTRUCTORS: dict[type, tuple[str, ...] | None] = {}


class _Loader(pickle.Unpickler):
    """Unpickles only metriclint's own dataclasses and enums: a cache folder comes with the
    checked-out tree, and an arbitrary pickle in it must not run code."""

    def find_class(self, module: str, name: str) -> type:
        found = _ALLOWED.get((module, name))
        if found is None:
            if module == "metriclint" or module.startswith("metriclint."):
                found = super().find_class(module, name)
            if not (isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, enum.Enum))):
                raise pickle.UnpicklingError(f"{module}.{name} is not allowed in the cache")
            _ALLOWED[(module, name)] = found
        return found


# The classes entries have named, checked once per run, not once per entry (a warm miles run
# reads 1,092 entries naming 5,000 classes).
_ALLOWED: dict[tuple[str, str], type] = {}
