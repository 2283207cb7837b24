"""Worker processes for untrusted input, each held to limits enforced from outside it.

What a file or an editor's buffer holds may crash its parser (libcst's native parser overflows
its stack on 5,000 nested `[`), make it allocate without end, or keep a native parser busy for
minutes, holding the GIL so that no handler of the process's own ever runs. So every parse runs
in a worker process: the kernel refuses a worker more address space than it started with plus
`memory` bytes (RLIMIT_AS: a parse that asks for more fails with MemoryError, or its native
code aborts), and the parent kills a worker whose item has run longer than `seconds`. Only that
item is lost: the pool says which, and hands the rest of its batch to a new worker.

A worker can also stall through no fault of its item: a lock that another thread of the parent
held when it forked (pytest-xdist's, in the tests), or a machine too busy to run it. One that
used under a tenth of its time on the processor, or never began its batch, is replaced and
its item read once more (a CI run reported a small fixture file as read for longer than 60
s); a second stall on the same item loses it as a slow one would.

Each worker has a pipe of its own, and no queue, lock or thread is shared between processes,
so a worker killed at any moment leaves nothing the parent could wait on: an answer cut short
reads as the pipe's end. The parent never waits without a deadline. Workers write which item
they are on, and since when, to shared memory (`progress`), so the parent times them and knows
which item a dead one was reading without asking.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Generic, Iterable, Iterator, Sequence, TypeVar

from metriclint.base import signals

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

T = TypeVar("T")
R = TypeVar("R")

_LOOK_SECONDS = 0.5  # the longest wait between two looks at the workers' clocks
_STOP_SECONDS = 2.0  # how long a worker asked to stop has before it is killed
_REAP_SECONDS = 5.0  # how long a killed worker's exit is waited for (SIGKILL is never refused)
_IDLE = 0.0  # a worker's clock between items
_BUSY_SHARE = 0.1  # a worker that used less of its item's time on the processor than this stalled
_SLOTS = 3  # shared per worker: its item's place in its batch, since when, and its processor time then


@dataclass(frozen=True)
class _Raised:
    """What `work` raised, for the parent to raise again (an error no item should survive)."""

    error: Exception


@dataclass(frozen=True)
class Lost:
    """An item whose worker was killed for its time (`timed_out`), or died on it (a crash in
    native code, the memory limit hit there), or whose result could not be sent back (`error`)."""

    timed_out: bool = False
    error: str = ""


class Pool(Generic[T, R]):
    """Up to `count` worker processes, each running `start(*start_args)` once, then `work` on
    each item it is handed. Started when first needed and again after one is lost; used from
    one thread at a time."""

    def __init__(
        self,
        work: Callable[[T], R],
        count: int,
        seconds: float,
        memory: int,
        start: Callable[..., None] | None = None,
        start_args: tuple[Any, ...] = (),
    ) -> None:
        self.work, self.seconds, self.memory, self.start, self.start_args = work, seconds, memory, start, start_args
        self.context = multiprocessing.get_context()
        with signals.held():  # a file unlinked at once, in /dev/shm: no signal between the two
            self.progress = self.context.RawArray("d", _SLOTS * count)
        self.workers: list[_Worker | None] = [None] * count
        self.handed = [0.0] * count  # when each worker was handed its batch
        self.retried: set[int] = set()  # the items of this `map` read again after their worker stalled

    def map(self, items: Sequence[T], sizes: Iterable[int]) -> Iterator[R | Lost]:
        """`work(item)` for each of `items`, in order, each as soon as it and those before it
        are done; `sizes` are the batches' sizes, in order (their sum: the number of items). A
        worker still busy when this ends early (an exception, a signal) is killed."""
        queue = deque(_spans(len(items), sizes))
        self.retried = set()  # a standing pool maps again, its items numbered from 0 again
        done: dict[int, Any] = {}
        busy: dict[int, list[int]] = {}  # worker slot -> the items it holds, by index
        yielded = 0
        try:
            while yielded < len(items):
                self._hand_out(items, queue, busy)
                while yielded in done:
                    result = done.pop(yielded)
                    if isinstance(result, _Raised):
                        raise result.error  # as if `work` had run here
                    yield result
                    yielded += 1
                if yielded < len(items):
                    self._collect(busy, done, queue)
        except BaseException:
            for slot in busy:
                self._kill(slot)
            raise

    def _hand_out(self, items: Sequence[T], queue: deque[list[int]], busy: dict[int, list[int]]) -> None:
        for slot in range(len(self.workers)):
            if not queue:
                return
            if slot in busy:
                continue
            worker = self.workers[slot] or self._started(slot)
            batch = queue.popleft()
            busy[slot] = batch
            self.progress[_SLOTS * slot], self.progress[_SLOTS * slot + 1] = -1, _IDLE
            self.handed[slot] = time.monotonic()
            try:
                worker.hand.send([items[i] for i in batch])
            except OSError:  # it died between two batches: `_collect` finds it gone
                pass

    def _collect(self, busy: dict[int, list[int]], done: dict[int, Any], queue: deque[list[int]]) -> None:
        """Wait for an answer, a death or a deadline, and take what came."""
        workers = {slot: self.workers[slot] for slot in busy}
        ready = set(
            wait([w.answers for w in workers.values() if w] + [w.process.sentinel for w in workers.values() if w], self._timeout(busy))
        )
        now = time.monotonic()
        for slot, worker in workers.items():
            assert worker is not None
            if worker.answers in ready:
                self._answered(slot, busy, done, queue)
            elif worker.process.sentinel in ready:
                self._lose(slot, busy, done, queue, Lost())
            elif (since := self._since(slot)) is not None and now - since > self.seconds:
                self._overdue(slot, busy, done, queue)

    def _answered(self, slot: int, busy: dict[int, list[int]], done: dict[int, Any], queue: deque[list[int]]) -> None:
        worker = self.workers[slot]
        assert worker is not None
        try:
            results = worker.answers.recv()
        except (EOFError, OSError):  # killed while it answered
            self._lose(slot, busy, done, queue, Lost())
            return
        except Exception as error:  # noqa: BLE001 - an answer that does not unpickle here: find whose, one item a batch
            batch = busy.pop(slot)
            if len(batch) > 1:
                queue.extendleft([i] for i in reversed(batch))
            else:
                done[batch[0]] = Lost(error=f"{type(error).__name__}: {error}")
            return
        for index, result in zip(busy.pop(slot), results):
            done[index] = result

    def _overdue(self, slot: int, busy: dict[int, list[int]], done: dict[int, Any], queue: deque[list[int]]) -> None:
        """The worker at `slot` is past its deadline: its item is lost for its time, unless
        the worker stalled and the item was not read again yet; then the batch is, by another."""
        item = busy[slot][self._position(slot, busy)]
        if item in self.retried and not self._begun(slot):  # twice a worker that never began
            self._lose(slot, busy, done, queue, Lost(error=f"no process started to read it within {self.seconds:g} s"))
            return
        if item in self.retried or not self._stalled(slot):
            self._lose(slot, busy, done, queue, Lost(timed_out=True))
            return
        self.retried.add(item)
        self._kill(slot)
        queue.appendleft(busy.pop(slot))

    def _since(self, slot: int) -> float | None:
        """When the deadline of the worker at `slot` started: its item's start; the hand-out,
        where it has not begun its batch; none once it has read the whole batch (it is sending
        the answer, which may take long for a big one)."""
        started = self._started_at(slot)
        if started != _IDLE:
            return started
        return None if self._begun(slot) else self.handed[slot]

    def _begun(self, slot: int) -> bool:
        """Whether the worker at `slot` has begun the batch it holds (its place in it is set)."""
        return self.progress[_SLOTS * slot] >= 0

    def _stalled(self, slot: int) -> bool:
        """Whether the worker at `slot` never began its batch, or used less than `_BUSY_SHARE`
        of its item's time on the processor (where the system tells: Linux)."""
        if not self._begun(slot):
            return True
        started, worker = self._started_at(slot), self.workers[slot]
        used = _processor_seconds(worker.process.pid) if worker is not None else None
        return used is not None and used - self.progress[_SLOTS * slot + 2] < _BUSY_SHARE * (time.monotonic() - started)

    def _position(self, slot: int, busy: dict[int, list[int]]) -> int:
        """Where in its batch the worker at `slot` is (dead: where it was; not begun: 0)."""
        return min(max(0, int(self.progress[_SLOTS * slot])), len(busy[slot]) - 1)

    def _lose(self, slot: int, busy: dict[int, list[int]], done: dict[int, Any], queue: deque[list[int]], lost: Lost) -> None:
        """The worker at `slot` is dead or to be killed: its item is `lost`, the rest of its
        batch goes first to the next worker free (read again, those before it too: a batch is
        answered whole)."""
        at = self._position(slot, busy)
        self._kill(slot)
        batch = busy.pop(slot)
        done[batch[at]] = lost
        rest = batch[:at] + batch[at + 1 :]
        if rest:
            queue.appendleft(rest)

    def _timeout(self, busy: dict[int, list[int]]) -> float:
        started = [self._started_at(slot) for slot in busy if self._started_at(slot) != _IDLE]
        until = min((at + self.seconds - time.monotonic() for at in started), default=_LOOK_SECONDS)
        return max(0.0, min(_LOOK_SECONDS, until))

    def _started_at(self, slot: int) -> float:
        return float(self.progress[_SLOTS * slot + 1])

    def _started(self, slot: int) -> _Worker:
        # Two one-way pipes, not a socket pair: a linter opens no socket.
        (handed, hand), (answer, answers) = self.context.Pipe(duplex=False), self.context.Pipe(duplex=False)
        args = (handed, answers, self.progress, slot, self.work, self.seconds, self.memory, self.start, self.start_args)
        process = self.context.Process(target=_serve, args=args, daemon=True, name=f"metriclint-worker-{slot}")
        with signals.held():  # listed before a signal can land (base/signals.py)
            process.start()
            self.workers[slot] = worker = _Worker(process, hand, answer)
        handed.close()
        answers.close()
        return worker

    def _kill(self, slot: int) -> None:
        worker, self.workers[slot] = self.workers[slot], None
        if worker is not None:
            worker.process.kill()
            worker.end(_REAP_SECONDS)

    def close(self) -> None:
        """Ask each worker to stop and wait a little for it; kill those that do not."""
        running = [(slot, w) for slot, w in enumerate(self.workers) if w is not None]
        for _, worker in running:
            try:
                worker.hand.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + _STOP_SECONDS
        for slot, worker in running:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.exitcode is None:
                self._kill(slot)
            else:
                worker.end(0)
                self.workers[slot] = None

    def kill(self) -> None:
        for slot in range(len(self.workers)):
            self._kill(slot)

    def __enter__(self) -> Pool[T, R]:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        """A pool that ends with an exception (an interrupt, a signal's SystemExit) kills its
        workers rather than leave them reading files with the caller's stdout open."""
        if error is None:
            self.close()
        else:
            self.kill()


@dataclass
class _Worker:
    process: Any  # multiprocessing's Process of the pool's context
    hand: Connection  # where its batches go
    answers: Connection  # where its results come from

    def end(self, seconds: float) -> None:
        self.process.join(seconds)
        self.hand.close()
        self.answers.close()
        if self.process.exitcode is not None:
            self.process.close()


def _spans(count: int, sizes: Iterable[int]) -> Iterator[list[int]]:
    start = 0
    for size in sizes:
        yield list(range(start, min(count, start + size)))
        start += size
    if start < count:
        yield list(range(start, count))


# -- in the worker ---------------------------------------------------------------------------


def _serve(
    handed: Connection,
    answers: Connection,
    progress: Any,
    slot: int,
    work: Callable[[Any], Any],
    seconds: float,
    memory: int,
    start: Callable[..., None] | None,
    start_args: tuple[Any, ...],
) -> None:
    signals.as_child()
    parent = os.getppid()
    if start is not None:
        start(*start_args)
    _limit(memory)
    gc.freeze()  # what a worker inherits from the parent needs no collection
    gc.disable()  # and its own garbage is collected between batches (`answered`)
    while True:
        try:
            while not handed.poll(_LOOK_SECONDS):
                if os.getppid() != parent:
                    return  # the parent was killed: its other workers hold this pipe open too
            batch = handed.recv()
        except EOFError:  # the parent is gone
            return
        if batch is None:
            return
        results = answered(batch, work, progress, slot, seconds)
        try:
            answers.send(results)
        except OSError:
            return
        except Exception:  # noqa: BLE001 - a result that does not pickle (too deep): the others are sent
            answers.send([_sendable(result) for result in results])


def answered(batch: list[Any], work: Callable[[Any], Any], progress: Any, slot: int, seconds: float) -> list[Any]:
    """`work` on each item of `batch`, each marked in `progress` while it runs, and each
    given twice `seconds` of CPU time by the kernel, which ends a worker its parent no longer
    watches (killed itself, say)."""
    results = []
    for position, item in enumerate(batch):
        progress[_SLOTS * slot] = position
        progress[_SLOTS * slot + 2] = _limit_cpu(2 * seconds)
        progress[_SLOTS * slot + 1] = time.monotonic()
        try:
            results.append(work(item))
        except Exception as error:  # noqa: BLE001 - raised in the parent, in its turn
            results.append(_Raised(error))
    progress[_SLOTS * slot + 1] = _IDLE
    if gc.get_count()[0] > YOUNG_OBJECTS:
        gc.collect()
    return results


# A batch ends with a collection once more objects than this were made, and not freed, since
# the last one. Reference cycles are Markdown's (markdown-it's trees: about 1,150 objects a file
# on miles' docs), not Python's (114 objects in 1,189 files), so a batch of Python files leaves
# no garbage to find: collecting after every batch was 0.13 of a cold run's CPU seconds on miles.
YOUNG_OBJECTS = 50_000


def _sendable(result: object) -> object:
    from multiprocessing.reduction import ForkingPickler

    try:
        ForkingPickler.dumps(result)
    except Exception as error:  # noqa: BLE001 - reported for its item, as the parent reports a death
        return Lost(error=f"{type(error).__name__}: {error}")
    return result


def _limit(memory: int) -> None:
    """At most `memory` bytes of address space more than this process holds now, where the
    system says how much that is (Linux), and no core file left in the checked tree by a
    parser's crash."""
    if resource is None:
        return
    _lower(resource.RLIMIT_CORE, 0)
    try:
        with open("/proc/self/statm", encoding="ascii") as status:
            size = int(status.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return
    _lower(resource.RLIMIT_AS, size + memory)


def _limit_cpu(seconds: float) -> float:
    """SIGXCPU, which ends the process, once it has used `seconds` more CPU time than now;
    the CPU time it has used."""
    used = time.process_time()
    if resource is not None:
        _lower(resource.RLIMIT_CPU, math.ceil(used + seconds), raise_soft=True)
    return used


def _processor_seconds(pid: int) -> float | None:
    """The CPU time process `pid` has used, as `time.process_time` counts it in the process,
    where /proc tells (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except (OSError, ValueError):
        return None
    try:  # utime and stime, the 14th and 15th fields, in clock ticks
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError, OSError):
        return None


def _lower(kind: int, limit: int, raise_soft: bool = False) -> None:
    """The soft limit of `kind` set to `limit`, or to the hard limit if that is lower; only
    lowered unless `raise_soft`."""
    assert resource is not None
    try:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if raise_soft or soft == resource.RLIM_INFINITY or limit < soft:
            resource.setrlimit(kind, (limit, hard))
    except (OSError, ValueError):
        pass
