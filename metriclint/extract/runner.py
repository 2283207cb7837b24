"""The per-file steps for a whole run: cache look-up, then, in parallel for the rest, extract
each file's mentions and read what each one states (the reading needs only the text; the
engine passes the function that does it, language/phrases.read with the run's vocabulary).

Results come back in the order of the files given, whatever order the workers finish in, so
every later step sees exactly what a plain loop would have produced.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, Iterator, Mapping, Sequence

from metriclint.base.files import MAX_BYTES, read_regular, too_large
from metriclint.base.paths import display
from metriclint.extract import cache as cache_module
from metriclint.extract import kept, prune, transfer
from metriclint.extract.stat_index import StatIndex, Status
from metriclint.model import ConfigError, ReadFailure, Reading, Span
from metriclint.sources import Extraction, Options, Unreadable, directives, extractor_for

if TYPE_CHECKING:
    from metriclint.extract import workers

Result = Extraction | ReadFailure
# A file's cache entry name (None: not to be cached), its result, and the digest of its code
# (kept.code_digest; None where not worked out): the worker works it out, in parallel.
Done = tuple[str | None, Result, str | None]
Progress = Callable[[int, int], None]  # files extracted, total
# What one text states: picklable, since each worker process gets it once when it starts.
Reader = Callable[..., Sequence[Reading]]  # (text, values=()): language/phrases.read with the run's vocabulary
Pause = Callable[[], AbstractContextManager[None]]


@dataclass(frozen=True, kw_only=True)
class ExtractSettings:
    jobs: int  # worker processes for the files the cache does not have
    cache_dir: Path | None  # None: no cache
    options: Options  # what the sources need from the config (part of the cache key)
    read: Reader
    # What `read` depends on besides the built-in rules (its vocabulary's fingerprint), and which
    # files it is not asked about (the test globs): part of the cache key, so a registry edit
    # that leaves the phrases alone keeps every entry.
    reading: bytes
    max_bytes: int = MAX_BYTES  # a larger file is ML900 (`max-file-size`)
    project: Path = Path(".")  # the project root: the cache keeps the last few runs of each project
    cache_limit: int = prune.DEFAULT_LIMIT  # bytes of entries the cache folder keeps (`max-cache-size`)
    # Held while results arrive: the command line pauses garbage collection there (cli.py);
    # an embedding program may leave its collector alone.
    pause: Pause = nullcontext
    # Builds what `read` builds on its first text (compiled patterns, loaded rules): run before
    # the workers fork, so that they share it (see `ready_readers`).
    ready: Callable[[], object] | None = None


@dataclass(frozen=True)
class Job:
    """A file the cache does not have. The worker reads it again rather than receive its
    bytes, so the sources of a large tree are never all in memory at once; it names the
    cache entry by the bytes it read, so an edit in between cannot file a stale result."""

    path: Path
    shown: str
    salt: bytes | None  # None: no cache
    max_bytes: int = MAX_BYTES
    test: bool = False  # a test: its texts are dropped, its code walked for keys only (Options.test)
    data: bytes | None = None  # what an editor holds for the file (its unsaved buffer), read instead of it


def extract_all(
    files: list[Path], settings: ExtractSettings, progress: Progress | None = None, tests: AbstractSet[str] = frozenset()
) -> list[Result]:
    """One result per file, in the order of `files`; `tests`: the test files, as shown."""
    return extract_changed(files, settings, progress, tests=tests).results  # type: ignore[return-value]


@dataclass(frozen=True)
class Extracted:
    """Per file, in the order of the files given: how it is shown, its result (None: skipped,
    see `extract_changed`), its cache entry's name (None: not cached) and, for a file a worker
    read, the digest of its code (kept.code_digest; None: not worked out)."""

    shown: list[str]
    results: list[Result | None]
    entries: list[str | None]
    codes: list[str | None]


def extract_changed(
    files: list[Path],
    settings: ExtractSettings,
    progress: Progress | None = None,
    known: Mapping[str, str] | None = None,
    run_salt: bytes | None = None,
    tests: AbstractSet[str] = frozenset(),
) -> Extracted:
    """One result per file. A file the cache names by the entry `known` holds for it (by its
    shown path) is not read at all: its result is None, as the caller has what it needs of it.
    `run_salt`: the cache's salt for these settings, when the caller has it already. `tests`:
    the test files, as shown, whose texts are left unread."""
    results: list[Result | None] = [None] * len(files)
    entries: list[str | None] = [None] * len(files)
    codes: list[str | None] = [None] * len(files)
    shown_all: list[str] = []
    jobs: list[Job] = []
    pending: list[int] = []
    store = cache_module.Cache(settings.cache_dir, settings.project, settings.cache_limit) if settings.cache_dir is not None else None
    if store is not None and run_salt is None:
        run_salt = cache_module.salt(settings.reading, settings.options)
    stats = StatIndex(settings.cache_dir, settings.project, run_salt, settings.cache_limit) if settings.cache_dir and run_salt else None
    statuses: list[Status | None] = []  # of the files in `jobs`, taken before they are read
    with settings.pause():
        for index, path in enumerate(files):
            shown = display(path)
            shown_all.append(shown)
            status = None
            if store is not None and run_salt is not None and stats is not None:
                status = stats.status(path, settings.max_bytes)
                try:  # an unchanged file's entry is named without reading it
                    name = stats.entry(shown, status) or cache_module.key(run_salt, shown, read_regular(path, settings.max_bytes))
                except OSError:
                    name = None  # the worker reports it
                if name is not None:
                    skipped = known is not None and known.get(shown) == name
                    cached = None if skipped else store.get(name, shown, path)
                    if skipped:
                        store.usage.note(name, path)  # kept by the pruning, for a run that needs it whole
                    if skipped or cached is not None:
                        results[index], entries[index] = cached, name
                        stats.note(shown, status, name)
                        continue
            jobs.append(Job(path, shown, run_salt, settings.max_bytes, shown in tests))
            pending.append(index)
            statuses.append(status)
    done = len(files) - len(jobs)
    if progress is not None:
        progress(done, len(files))
    # strict: zip asks `run_jobs` for one more result, so its pools shut down as a finished run's do,
    # not as an interrupted one's (`_ended_with`).
    for index, status, job, (entry, result, code) in zip(pending, statuses, jobs, run_jobs(jobs, settings), strict=True):
        results[index], entries[index], codes[index] = result, entry, code
        if store is not None and entry is not None:
            store.put(entry, result, files[index])
            if stats is not None:
                stats.note(job.shown, status, entry)
        done += 1
        if progress is not None:
            progress(done, len(files))
    if store is not None:
        store.close()
    if stats is not None:
        stats.close()
    return Extracted(shown_all, results, entries, codes)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def run_jobs(jobs: list[Job], settings: ExtractSettings) -> Iterator[Done]:
    """Extract in worker processes, even a single file or buffer: a native parser that
    overflows its stack (20,000 nested `not`s), runs away with memory or never ends must cost
    that file, not the run (extract/workers.py holds each worker to `FILE_SECONDS` and
    `FILE_MEMORY`). Results come in the order of `jobs`, each as soon as it and those before
    it are done.

    Workers take files in batches: one round trip per file cost as much as reading a small one.
    A buffer goes to the project's standing worker when there is one (`standing`)."""
    if not jobs:
        return
    ready_readers(settings, (job.path.suffix for job in jobs))
    workers = max(1, min(settings.jobs, len(jobs)))
    kept = _standing_pool(settings) if all(job.data is not None for job in jobs) else None
    with nullcontext(kept) if kept is not None else start_pool(settings, workers) as pool, settings.pause():
        for job, outcome in zip(jobs, pool.map(jobs, batch_sizes(len(jobs), workers)), strict=True):
            yield _done(job, outcome)


def ready_readers(settings: ExtractSettings, suffixes: Iterable[str]) -> None:
    """Build here what every worker would build on its first files (the compiled phrase
    patterns and, for each kind of file, the parser's modules and the code knowledge), so that
    the workers fork with it: each built it again, about 0.3 CPU s per worker, a twentieth of a
    cold run on miles. The run reads texts itself after (the registry's descriptions), so
    little of it is extra work here. What is ready already costs next to nothing again."""
    for suffix in sorted(set(suffixes)):
        extract_bytes(suffix, "", b"", settings.options, settings.read)
    if settings.ready is not None:
        settings.ready()


def start_pool(settings: ExtractSettings, count: int) -> workers.Pool[Job, Done]:
    from metriclint.extract import workers  # multiprocessing: only a run that reads a file starts a pool

    return workers.Pool(work, count, FILE_SECONDS, FILE_MEMORY, start_worker, (settings.read, settings.options, FILE_MEMORY))


# The project's standing pool and what it was started for (its reader's fingerprint and the
# options), while `standing` holds them: None outside it.
_standing: dict[Path, tuple[tuple[bytes, Options], workers.Pool[Job, Done]]] | None = None


@contextmanager
def standing() -> Iterator[None]:
    """Inside, each project keeps one worker for the buffers it is handed (an editor's, one
    keystroke after another), rather than start one per buffer; all are ended as it ends."""
    global _standing
    _standing = {}
    try:
        yield
    finally:
        pools, _standing = _standing, None
        for _, pool in pools.values():
            pool.kill()


def _standing_pool(settings: ExtractSettings) -> workers.Pool[Job, Done] | None:
    if _standing is None:
        return None
    wanted = (settings.reading, settings.options)
    found = _standing.get(settings.project)
    if found is not None and found[0] == wanted:
        return found[1]
    if found is not None:  # the registry's phrases changed: a worker with the new ones
        found[1].kill()
    pool = start_pool(settings, 1)
    _standing[settings.project] = (wanted, pool)
    return pool


def batch_sizes(count: int, workers: int) -> Iterator[int]:
    """The sizes of the batches `count` files go in: a share of what is left, up to `_MAX_BATCH`
    files while much is left (a round trip per file cost as much as reading a small one), down
    to one at the end, so that the workers finish together. Batches of one size left a worker
    idle while the other read the last (miles, cold: 0.18 of 4 s)."""
    start = 0
    while start < count:
        size = max(1, min(_MAX_BATCH, (count - start) // (workers * _SHARES)))
        yield size
        start += size


_MAX_BATCH = 32
_SHARES = 4  # a batch is at most 1/_SHARES of what each worker has left to read
FILE_SECONDS = 60  # a file that takes longer to read is ML900: its worker is killed
# Address space a worker may take beyond its own to read a file, or the file is ML900: a
# 15 MB generated module of 75,000 functions peaks at 1.8 GiB (and takes longer than FILE_SECONDS).
FILE_MEMORY = 2 * 2**30
_DIED = "the process reading this file died (out of memory, or a crash in a parser); the run went on without it"


def _done(job: Job, outcome: Done | workers.Lost) -> Done:
    """A worker's answer for one file; a file whose worker died or was killed, or whose result
    could not be sent back, is ML900 (not cached), and the run goes on with the next file."""
    from metriclint.extract import workers  # imported by `start_pool`, which made the outcome

    if not isinstance(outcome, workers.Lost):
        return outcome
    if outcome.timed_out:
        return None, _unreadable(job.shown, f"reading this file took longer than {FILE_SECONDS} s; it was skipped"), ""
    if outcome.error:
        return None, _internal_message(job.shown, outcome.error), ""
    return None, _unreadable(job.shown, _DIED), ""


_worker_read: Reader | None = None  # a worker's, set once when the pool starts it
_worker_options: Options | None = None


def start_worker(read: Reader, options: Options, memory: int = FILE_MEMORY) -> None:
    """A worker's reader and options, and the memory limit it was given, which its ML900 says
    (a worker that did not fork has its own copy of this module's constant)."""
    global _worker_read, _worker_options, FILE_MEMORY
    _worker_read, _worker_options, FILE_MEMORY = read, options, memory
    transfer.send_by_fields(Result)


def work(job: Job) -> Done:
    assert _worker_read is not None and _worker_options is not None, "called outside a pool started by run_jobs"
    return extract_file(job, _worker_options, _worker_read)


def extract_file(job: Job, options: Options, read: Reader) -> Done:
    """One file's cache entry name (None: not to be cached) and its extraction; any failure
    on this file is reported, never raised."""
    try:
        data = read_regular(job.path, job.max_bytes) if job.data is None else job.data
    except OSError as error:
        return None, _unreadable(job.shown, f"cannot read file: {error.strerror or error}"), ""
    cacheable, result = extract_bytes(job.path.suffix, job.shown, data, replace(options, test=True) if job.test else options, read)
    if job.salt is None or not cacheable:
        return None, result, None
    return cache_module.key(job.salt, job.shown, data), result, kept.code_digest(result)


def extract_buffer(path: Path, data: bytes, settings: ExtractSettings, test: bool = False) -> Result:
    """One file from bytes an editor holds (its unsaved buffer, or standard input) instead of
    the disk, read in a worker as a file is; not cached, since the buffer is not the file the
    next run will read. `test`: it is a test file."""
    if len(data) > settings.max_bytes:  # refused before it is handed to a worker, as a file is before it is read
        return _unreadable(display(path), f"cannot read file: {too_large(len(data), settings.max_bytes).strerror}")
    [(_, result, _)] = run_jobs([Job(path, display(path), None, settings.max_bytes, test, data)], settings)
    return result


def extract_bytes(suffix: str, shown: str, data: bytes, options: Options, read: Reader) -> tuple[bool, Result]:
    """A file's extraction from its bytes, its texts read with `read`, and whether it may be
    cached. A test's texts and tables are dropped: a test states and names nothing, and shows
    no dashboard's tooltips (docs/configuration.md, Test files).

    This is the one place a file's failure becomes ML900: an error the sources foresee
    (`Unreadable`), nesting deeper than Python's recursion limit (which any recursive
    reader can hit), and one nobody foresaw, reported as ours so that users tell us.
    """
    if options.test and suffix not in _TEST_CODE and directives.MARK not in data:
        return True, Extraction()  # a test's data or docs: what they state is dropped below, and they hold no directive
    extractor = extractor_for(suffix, options)  # after: a kind only tests have is not even loaded
    if extractor is None:
        return True, Extraction()
    try:
        extraction = extractor(shown, data)
        return True, replace(extraction, texts=(), tables=()) if options.test else _read_texts(extraction, read)
    except Unreadable as error:
        return True, ReadFailure(Span(shown, error.line, error.column, error.line, error.column), error.message)
    except RecursionError:
        return True, _unreadable(shown, "nested too deeply to read")
    except MemoryError:  # the worker's limit (FILE_MEMORY)
        return False, _unreadable(shown, f"reading this file needed more than {FILE_MEMORY // 2**20:,} MiB of memory; it was skipped")
    except ConfigError:
        raise  # metriclint's own rules data is broken: exit 2, not one ML900 per file
    except Exception as error:  # noqa: BLE001 - one odd file must not stop the run
        return False, _internal(shown, error)  # not cached: the next version may read it


# The kinds of file of which a test gives more than texts and tables, which are dropped: Python,
# whose keys keep a registry entry alive (sources/python/test_files.py). Of a test's JSON, YAML,
# Markdown or JavaScript only a suppression comment could count; one without any is not parsed,
# as a Python test that writes no key is not (Megatron-LM's 927 JSON files of golden values took
# 0.55 of the extraction's 10 CPU s), so it is no ML900 either.
_TEST_CODE = frozenset({".py"})


def reread(result: Result, read: Reader) -> Result:
    """`result` with its texts read again by `read` (a vocabulary with other facets): what a
    file states changes with the registry's facets, what it holds does not."""
    return _read_texts(result, read) if isinstance(result, Extraction) else result


def _read_texts(extraction: Extraction, read: Reader) -> Extraction:
    return replace(extraction, texts=tuple((mention, tuple(read(mention.text, values=mention.values))) for mention, _ in extraction.texts))


def _internal(shown: str, error: Exception) -> ReadFailure:
    return _internal_message(shown, f"{type(error).__name__}: {error}")


def _internal_message(shown: str, error: str) -> ReadFailure:
    return _unreadable(shown, f"internal error while reading this file: {error}; please report it")


def _unreadable(shown: str, message: str) -> ReadFailure:
    return ReadFailure(Span(shown, 1, 1, 1, 1), message)
