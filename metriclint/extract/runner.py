"""The per-file steps for a whole run: cache look-up, then, in parallel for the rest, extract
each file's mentions and read what each one states (the reading needs only the text; the
engine passes the function that does it, language/phrases.read with the run's vocabulary).

Results come back in the order of the files given, whatever order the workers finish in, so
every later step sees exactly what a plain loop would have produced.
"""

from __future__ import annotations

import gc
import os
import signal
from collections import deque
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, Iterator, Mapping, Sequence

from metriclint.base import signals
from metriclint.base.files import MAX_BYTES, read_regular
from metriclint.base.paths import display
from metriclint.extract import cache as cache_module
from metriclint.extract import kept, prune, transfer
from metriclint.extract.stat_index import StatIndex, Status
from metriclint.model import ConfigError, ReadFailure, Reading, Span
from metriclint.sources import Extraction, Options, Unreadable, extractor_for

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

Result = Extraction | ReadFailure
# A file's cache entry name (None: not to be cached), its result, and the digest of its code
# (kept.code_digest; None where not worked out): the worker works it out, in parallel.
Done = tuple[str | None, Result, str | None]
Progress = Callable[[int, int], None]  # files extracted, total
# What one text states: picklable, since each worker process gets it once when it starts.
Reader = Callable[[str], Sequence[Reading]]
Pause = Callable[[], AbstractContextManager[None]]


@dataclass(frozen=True)
class Settings:
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
class _Job:
    """A file the cache does not have. The worker reads it again rather than receive its
    bytes, so the sources of a large tree are never all in memory at once; it names the
    cache entry by the bytes it read, so an edit in between cannot file a stale result."""

    path: Path
    shown: str
    salt: bytes | None  # None: no cache
    max_bytes: int = MAX_BYTES
    test: bool = False  # a test: its texts are left unread, its code walked for keys only (Options.test)


def extract_all(files: list[Path], settings: Settings, progress: Progress | None = None, tests: AbstractSet[str] = frozenset()) -> list[Result]:
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
    files: list[Path], settings: Settings, progress: Progress | None = None, known: Mapping[str, str] | None = None,
    run_salt: bytes | None = None, tests: AbstractSet[str] = frozenset(),
) -> Extracted:
    """One result per file. A file the cache names by the entry `known` holds for it (by its
    shown path) is not read at all: its result is None, as the caller has what it needs of it.
    `run_salt`: the cache's salt for these settings, when the caller has it already. `tests`:
    the test files, as shown, whose texts are left unread."""
    results: list[Result | None] = [None] * len(files)
    entries: list[str | None] = [None] * len(files)
    codes: list[str | None] = [None] * len(files)
    shown_all: list[str] = []
    jobs: list[_Job] = []
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
            jobs.append(_Job(path, shown, run_salt, settings.max_bytes, shown in tests))
            pending.append(index)
            statuses.append(status)
    done = len(files) - len(jobs)
    if progress is not None:
        progress(done, len(files))
    # strict: zip asks `_run` for one more result, so its pools shut down as a finished run's do,
    # not as an interrupted one's (`_ended_with`).
    for index, status, job, (entry, result, code) in zip(pending, statuses, jobs, _run(jobs, settings), strict=True):
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


def _run(jobs: list[_Job], settings: Settings) -> Iterator[Done]:
    """Extract in worker processes, even a single file: a native parser that overflows its
    stack (20,000 nested `not`s) or never ends must cost that file, not the run. Results come
    in the order of `jobs`, each as soon as it and those before it are done.

    Workers take files in batches: one round trip per file cost as much as reading a small one.
    A worker that dies (out of memory, or a crash in a native parser) breaks the whole pool:
    the first batch without an answer is then read one file per process, so that only the
    file that kills its process is lost, and a new pool takes the rest.
    """
    if not jobs:
        return
    ready_readers(settings, (job.path.suffix for job in jobs))
    workers, options = max(1, min(settings.jobs, len(jobs))), settings.options
    # Imported here: multiprocessing is a tenth of a warm run's start-up, and a warm run has nothing to share.
    from concurrent.futures.process import BrokenProcessPool

    unanswered = deque(_batches(jobs, workers))
    while unanswered:
        with _pool(settings, workers) as pool, _ended_with(pool), settings.pause():
            for future in _submitted(pool, unanswered, options):
                try:
                    results = _answer(future)
                except BrokenProcessPool:
                    break
                except ConfigError:
                    raise
                except Exception:  # noqa: BLE001 - e.g. one result too deep to send back: find which
                    results = [_outcome(job, pool.submit(_extract_batch, [job], options)) for job in unanswered[0]]
                unanswered.popleft()
                yield from results
        if unanswered:
            yield from (_alone(job, settings) for job in unanswered.popleft())


def ready_readers(settings: Settings, suffixes: Iterable[str]) -> None:
    """Build here what every worker would build on its first files (the compiled phrase
    patterns and, for each kind of file, the parser's modules and the code knowledge), so that
    the workers fork with it: each built it again, about 0.3 CPU s per worker, a twentieth of a
    cold run on miles. The run reads texts itself after (the registry's descriptions), so
    little of it is extra work here. What is ready already costs next to nothing again."""
    for suffix in sorted(set(suffixes)):
        _parsed(suffix, "", b"", settings.options, settings.read)
    if settings.ready is not None:
        settings.ready()


def _pool(settings: Settings, workers: int) -> Executor:
    from concurrent.futures import ProcessPoolExecutor  # loaded already, see _run

    return ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(settings.read,))


@contextmanager
def _ended_with(pool: Executor) -> Iterator[None]:
    """The pool's workers end with the run: on an interrupt or a signal (SIGTERM, SIGHUP; the
    CLI turns them into SystemExit) they are killed and waited for, rather than left reading
    files and holding the caller's stdout and stderr open.

    The workers are the child processes started while the pool ran: a worker missed kept the
    run's output open for its whole file (seen under load). Each is listed before a signal can
    land (`_submitted`)."""
    import multiprocessing  # loaded already: the pool runs

    before = set(multiprocessing.active_children())
    try:
        yield
    except BaseException:
        workers = [p for p in multiprocessing.active_children() if p not in before]
        for process in workers:
            # SIGKILL, not SIGTERM: a worker that has not yet reset the SIGTERM handler it
            # inherited loses a SIGTERM, and then waits forever on a queue lock that a killed
            # sibling held; a worker holds nothing that needs cleaning up.
            process.kill()
        for process in workers:
            process.join()
        # Then the pool's manager thread, which finds its workers gone: left running, it closed
        # its wake-up pipe while the interpreter's exit handler was writing to it, a traceback
        # on stderr in one run of three under load (CPython 3.11).
        pool.shutdown(wait=True, cancel_futures=True)
        raise


def _alone(job: _Job, settings: Settings) -> Done:
    """One file in a process of its own: if that process dies too, the file is the cause."""
    with _pool(settings, 1) as pool, _ended_with(pool):
        return _outcome(job, _submitted(pool, [[job]], settings.options)[0])


def _submitted(pool: Executor, batches: Iterable[list[_Job]], options: Options) -> list[Future[list[Done]]]:
    """`batches` handed to `pool`, which forks its workers on the first. With the signals that
    end a run held (base/signals.py), so that each worker is listed by the time one lands."""
    with signals.held():
        return [pool.submit(_extract_batch, batch, options) for batch in batches]


def _batches(jobs: list[_Job], workers: int) -> Iterator[list[_Job]]:
    """`jobs` in order, in batches of a share of what is left: up to `_MAX_BATCH` files while
    much is left (a round trip per file cost as much as reading a small one), down to one at
    the end, so that the workers finish together. Batches of one size left a worker idle while
    the other read the last (miles, cold: 0.18 of 4 s)."""
    start = 0
    while start < len(jobs):
        size = max(1, min(_MAX_BATCH, (len(jobs) - start) // (workers * _SHARES)))
        yield jobs[start : start + size]
        start += size


_MAX_BATCH = 32
_SHARES = 4  # a batch is at most 1/_SHARES of what each worker has left to read
_DIED = "the process reading this file died (out of memory, or a crash in a parser); the run went on without it"
FILE_SECONDS = 60  # a file that takes longer to read is ML900; the worker goes on with the next one


class _TooSlow(BaseException):
    """Raised in a worker when a file's time is up. A BaseException, so that no `except
    Exception` between here and the parser turns it into another result."""


def _time_up(signum: int, frame: object) -> None:
    raise _TooSlow


_worker_read: Reader | None = None  # a worker's, set once when the pool starts it


def _start_worker(read: Reader) -> None:
    global _worker_read
    _worker_read = read
    signals.as_child()
    signal.signal(signal.SIGALRM, _time_up)
    transfer.send_by_fields(Result)
    gc.freeze()  # what a worker inherits from the parent needs no collection
    gc.disable()  # and its own garbage is collected between batches (_extract_batch)


def _extract_batch(batch: list[_Job], options: Options) -> list[Done]:
    assert _worker_read is not None, "called outside a pool started by _run"
    results = [_timed(job, options, _worker_read) for job in batch]
    if gc.get_count()[0] > _YOUNG_OBJECTS:
        gc.collect()
    return results


# A batch ends with a collection once more objects than this were made, and not freed, since
# the last one. Reference cycles are Markdown's (markdown-it's trees: about 1,150 objects a file
# on miles' docs), not Python's (114 objects in 1,189 files), so a batch of Python files leaves
# no garbage to find: collecting after every batch was 0.13 of a cold run's CPU seconds on miles.
_YOUNG_OBJECTS = 50_000


def _timed(job: _Job, options: Options, read: Reader) -> Done:
    """`_extract`, given `FILE_SECONDS` (the libcst fallback once ran past ten minutes on an 80 KB file)."""
    signal.setitimer(signal.ITIMER_REAL, FILE_SECONDS)
    try:
        return _extract(job, options, read)
    except _TooSlow:
        return None, _unreadable(job.shown, f"reading this file took longer than {FILE_SECONDS} s; it was skipped"), ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _answer(future: Future[list[Done]]) -> list[Done]:
    """The future's result, waited for in short steps. A signal may be delivered to any of the
    pool's threads; Python runs its handler in the main thread only once that thread runs
    again, which a wait without a timeout never does."""
    from concurrent.futures import TimeoutError as Pending  # loaded already; the builtin one only from Python 3.11

    while True:
        try:
            return future.result(timeout=_SIGNAL_CHECK_SECONDS)
        except Pending:
            continue


_SIGNAL_CHECK_SECONDS = 0.2


def _outcome(job: _Job, future: Future[list[Done]]) -> Done:
    """A worker's answer for one file; a worker that died, or an answer that could not be sent
    back, is this file's ML900 (not cached), and the run goes on with the next file."""
    from concurrent.futures.process import BrokenProcessPool  # loaded already: the pool runs

    try:
        return _answer(future)[0]
    except BrokenProcessPool:
        return None, _unreadable(job.shown, _DIED), ""
    except ConfigError:
        raise
    except Exception as error:  # noqa: BLE001 - e.g. a result too deep to send back
        return None, _internal(job.shown, error), ""


def _extract(job: _Job, options: Options, read: Reader) -> Done:
    """One file's cache entry name (None: not to be cached) and its extraction; any failure
    on this file is reported, never raised."""
    try:
        data = read_regular(job.path, job.max_bytes)
    except OSError as error:
        return None, _unreadable(job.shown, f"cannot read file: {error.strerror or error}"), ""
    cacheable, result = _parsed(job.path.suffix, job.shown, data, replace(options, test=True) if job.test else options, read)
    if job.salt is None or not cacheable:
        return None, result, None
    return cache_module.key(job.salt, job.shown, data), result, kept.code_digest(result)


def extract_buffer(path: Path, data: bytes, settings: Settings, test: bool = False) -> Result:
    """One file from bytes an editor holds (its unsaved buffer) instead of the disk; not
    cached, since the buffer is not the file the next run will read. `test`: it is a test file."""
    return _parsed(path.suffix, display(path), data, replace(settings.options, test=test), settings.read)[1]


def _parsed(suffix: str, shown: str, data: bytes, options: Options, read: Reader) -> tuple[bool, Result]:
    """A file's extraction from its bytes, its texts read with `read` unless it is a test's
    (a test states nothing: language/views.py), and whether it may be cached.

    This is the one place a file's failure becomes ML900: an error the sources foresee
    (`Unreadable`), nesting deeper than Python's recursion limit (which any recursive
    reader can hit), and one nobody foresaw, reported as ours so that users tell us.
    """
    extractor = extractor_for(suffix, options)
    if extractor is None:
        return True, Extraction()
    try:
        extraction = extractor(shown, data)
        return True, extraction if options.test else _read_texts(extraction, read)
    except Unreadable as error:
        return True, ReadFailure(Span(shown, error.line, error.column, error.line, error.column), error.message)
    except RecursionError:
        return True, _unreadable(shown, "nested too deeply to read")
    except ConfigError:
        raise  # metriclint's own rules data is broken: exit 2, not one ML900 per file
    except Exception as error:  # noqa: BLE001 - one odd file must not stop the run
        return False, _internal(shown, error)  # not cached: the next version may read it


def reread(result: Result, read: Reader) -> Result:
    """`result` with its texts read again by `read` (a vocabulary with other facets): what a
    file states changes with the registry's facets, what it holds does not."""
    return _read_texts(result, read) if isinstance(result, Extraction) else result


def _read_texts(extraction: Extraction, read: Reader) -> Extraction:
    return replace(extraction, texts=tuple((mention, tuple(read(mention.text))) for mention, _ in extraction.texts))


def _internal(shown: str, error: Exception) -> ReadFailure:
    return _unreadable(shown, f"internal error while reading this file: {type(error).__name__}: {error}; please report it")


def _unreadable(shown: str, message: str) -> ReadFailure:
    return ReadFailure(Span(shown, 1, 1, 1, 1), message)

