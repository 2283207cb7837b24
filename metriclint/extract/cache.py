"""Per-file extraction results, kept between runs under `.metriclint_cache/`.

An entry's name is a hash of the file's bytes, its shown path and the run's salt (metriclint
version and code, the Python version, the parsers' versions, the built-in rules, the phrases
the registry adds to them, the config's extra logging functions, the code knowledge the
registry declares), so an entry is never stale: a change to any of them simply names other
entries. Entries are written to a temporary file and renamed into place, so two runs racing on
one entry each write a whole file.

The folder may come from elsewhere (a CI cache, another machine), so anyone can write an
entry at a name they can compute. An entry is therefore sealed with a key kept outside the
folder (trust.py): one not sealed with this machine's key is not used. What it holds is JSON
(base/plain.py), which builds only plain values, rebuilt into an extraction of exactly the
expected types and about the file it is named for; an entry that fails either check, or whose
decoding raises, is deleted, counted as dropped, and its file read again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

import yaml

from metriclint import __version__
from metriclint.base import files, plain
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_regular
from metriclint.extract import prune, trust
from metriclint.model import ReadFailure
from metriclint.sources import Extraction, Options

FORMAT = "v3"  # v3: sealed (trust.py)
Entry = Extraction | ReadFailure
_encode, _decode = plain.encoder(Entry), plain.decoder(Entry)
# The distributions whose parsers make an extraction: a new version may read a file differently.
_PARSERS = re.compile(r"(libcst|tree_sitter\w*|markdown_it_py|mdit_py_plugins|pyyaml|pathspec)-([^-]+)\.dist-info", re.IGNORECASE)


def salt(reading: bytes, options: Options) -> bytes:
    """Everything besides the file itself that changes what its extraction holds: what the
    texts are read with (`reading`, the vocabulary's fingerprint: not the registry's bytes, whose
    comments, descriptions and metrics change no file's extraction) and the config's options."""
    described = f"metriclint {__version__} {FORMAT} python {sys.version} {parsers()} {sorted(options.log_functions)} {options.code}\0"
    digest = hashlib.sha256(described.encode())
    # metriclint's own code counts too, so an edited checkout never reads a stale entry.
    for base, pattern in ((rules_dir(), "*"), (Path(__file__).parent.parent, "*.py")):
        for path in sorted(p for p in base.rglob(pattern) if p.is_file()):
            digest.update(path.relative_to(base).as_posix().encode() + b"\0" + read_regular(path) + b"\0")
    digest.update(b"reading\0" + reading)
    return digest.digest()


def parsers() -> str:
    """The installed versions of the parsers, from their metadata folders' names beside PyYAML
    (where pip installs them all); read without importing any of them."""
    folder = Path(yaml.__file__).parent.parent
    try:
        names = os.listdir(folder)
    except OSError:
        return ""
    return " ".join(sorted(f"{m.group(1).lower()}={m.group(2)}" for name in names if (m := _PARSERS.fullmatch(name))))


def key(run_salt: bytes, shown: str, data: bytes) -> str:
    return hashlib.sha256(run_salt + shown.encode("utf-8", "surrogateescape") + b"\0" + data).hexdigest()


class Cache:
    """The entries of one project's run; `close` prunes what the last runs do not need (prune.py)."""

    def __init__(self, directory: Path, project: Path = Path("."), limit: int = prune.DEFAULT_LIMIT) -> None:
        self.directory = directory
        self.entries = directory / FORMAT
        self.usage = prune.Usage(project)
        self.limit = limit
        self.writable: bool | None = None  # whether the folder is metriclint's (prune.ready), once asked
        self.secret = trust.key()  # None: nothing is read or written

    def _ready(self) -> bool:
        if self.secret is None:
            return False
        if self.writable is None:
            self.writable = prune.ready(self.directory)
        return self.writable

    def get(self, entry: str, shown: str, file: Path | None = None) -> Entry | None:
        """The entry for the file shown as `shown` (at `file`), or None: missing, unreadable, not
        sealed with this key, or not an extraction of that file (then it is deleted, so the next
        run writes a true one, and counted as dropped)."""
        if self.secret is None:
            return None
        path = self.entries / entry[:2] / entry
        try:
            sealed = read_regular(path, self.limit)  # not max-file-size: an entry may be twice its file
        except OSError:
            return None
        data = trust.unseal(self.secret, "entry", entry, sealed)
        found = None
        if data is not None:
            try:
                found = _decode(json.loads(data), shown)
            except Exception:  # noqa: BLE001 - whatever an entry makes the decoding raise, its file is read instead
                trust.dropped()
        if not isinstance(found, (Extraction, ReadFailure)):
            path.unlink(missing_ok=True)
            return None
        self.usage.note(entry, file or Path(shown))
        return found

    def put(self, entry: str, value: Entry, file: Path) -> None:
        """Best effort: a cache that cannot be written only costs the next run time."""
        folder = self.entries / entry[:2]
        try:
            data = json.dumps(_encode(value), ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError, KeyError, RecursionError):  # too deep to write, or of no plain form (a bug): not kept
            return
        if len(data) > self.limit:  # more than the whole cache may hold: pruned at once, never read
            return
        if not self._ready() or self.secret is None:
            return
        data = trust.seal(self.secret, "entry", entry, data)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            files.write_new(folder / entry, data)
        except OSError as error:
            prune.unwritable(self.directory, error)
            return
        self.usage.note(entry, file)

    def close(self) -> None:
        """The end of a whole run: record what it used, and prune what no recent run needs."""
        if self.usage.entries and self._ready():
            prune.prune(self.directory, self.entries, self.usage, self.limit)
