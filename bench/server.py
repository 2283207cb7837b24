"""Time `metriclint server` on one tree: how soon the diagnostics of a one-line edit arrive,
against a warm `metriclint check --changed-only FILE` in the same run, and the server's memory.

    pip install -e '.[server]'
    python bench/server.py /path/to/miles [--file miles/utils/x.py] [--registry metrics.yaml]

The tree is copied to a temporary folder (the server and the checks write their cache there).
The bench starts the real server over stdio, as an editor does, opens FILE, and waits for the
first analysis. Then, round after round, it replaces one blank line of the buffer with a
comment (a new one each time, an incremental change, as typing sends it), times the change
until the server publishes the diagnostics of that buffer version, waits a moment, and again;
after each round's edits it writes a one-line change to FILE on disk and times
`metriclint check --changed-only FILE` (a warm cache: one file is read again), so both drift
alike on a shared machine. Memory is read from /proc (Linux): the server's resident set and
its peak, and its worker processes' if any are alive.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from run import _IGNORED, quietly

IDLE = 0.3  # seconds between edits: far longer than the server's debounce, so each edit is analysed alone
LOAD_TIMEOUT = 600.0


class Session:
    """A server process and the client that speaks to it; remembers when each diagnostics
    version arrives."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.client = LanguageClient("metriclint-bench", "1")
        self.stop = threading.Event()
        self.waiting: dict[tuple[str, int | None], asyncio.Future[float]] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            self.published(params)

        assert process.stdin is not None and process.stdout is not None
        self.client.protocol.set_writer(process.stdin)
        self.reading = asyncio.create_task(run_async(stop_event=self.stop, reader=process.stdout, protocol=self.client.protocol))

    def published(self, params: types.PublishDiagnosticsParams) -> None:
        future = self.waiting.pop((params.uri, params.version), None)
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    def expect(self, uri: str, version: int) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting[uri, version] = future
        return future

    async def close(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.process.wait()
        self.stop.set()
        await self.reading


class Buffer:
    """The open FILE: each edit turns one blank line into a different comment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.line = next((i for i, text in enumerate(self.lines) if not text.strip()), len(self.lines))
        if self.line == len(self.lines):
            self.lines.append("")
        self.version = 1

    def change(self) -> types.DidChangeTextDocumentParams:
        old = self.lines[self.line]
        self.version += 1
        self.lines[self.line] = f"# edited {self.version}"
        where = types.Range(types.Position(self.line, 0), types.Position(self.line, len(old)))
        document = types.VersionedTextDocumentIdentifier(self.version, self.path.as_uri())
        return types.DidChangeTextDocumentParams(document, [types.TextDocumentContentChangePartial(where, self.lines[self.line])])


def memory(pid: int) -> tuple[float, float, float]:
    """The resident MiB of `pid` now and at its peak, and the resident MiB of its children now."""

    def status(of: int) -> dict[str, float]:
        fields = Path(f"/proc/{of}/status").read_text().splitlines()
        return {k: int(v.split()[0]) / 1024 for k, v in (f.split(":", 1) for f in fields) if k in ("VmRSS", "VmHWM")}

    children = [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    own = status(pid)
    return own["VmRSS"], own["VmHWM"], sum(status(c).get("VmRSS", 0.0) for c in children)


def timed_check(tree: Path, target: Path, registry: list[str], round_: int) -> float:
    """A one-line change of `target` on disk, then a warm `check --changed-only` of it."""
    lines = target.read_text(encoding="utf-8").splitlines()
    lines.append(f"# changed on disk {round_}")
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "metriclint", "check", "--changed-only", str(target), "-q", *registry]
    start = time.perf_counter()
    subprocess.run(command, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


async def bench(tree: Path, target: Path, registry: list[str], rounds: int, edits: int, log: Path) -> None:
    options = {"registry": registry[1]} if registry else None
    with log.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "metriclint",
            "server",
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    session = Session(process)
    buffer = Buffer(target)
    folder = types.WorkspaceFolder(tree.as_uri(), tree.name)
    start = time.perf_counter()
    await session.client.initialize_async(
        types.InitializeParams(
            types.ClientCapabilities(), root_uri=tree.as_uri(), workspace_folders=[folder], initialization_options=options
        )
    )
    session.client.initialized(types.InitializedParams())
    text = target.read_text(encoding="utf-8")
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(target.as_uri(), "python", 1, text)))
    change = buffer.change()
    first = session.expect(target.as_uri(), buffer.version)
    session.client.text_document_did_change(change)
    loaded = await asyncio.wait_for(first, LOAD_TIMEOUT) - start
    print(f"first analysis (load + one edit): {loaded:.2f} s", flush=True)
    quietly([sys.executable, "-m", "metriclint", "check", str(tree), "-q", *registry])  # the cache is warm for the checks

    latencies: list[float] = []
    checks: list[float] = []
    for round_ in range(rounds):
        for _ in range(edits):
            await asyncio.sleep(IDLE)
            change = buffer.change()
            arrived = session.expect(target.as_uri(), buffer.version)
            sent = time.perf_counter()
            session.client.text_document_did_change(change)
            latencies.append(await asyncio.wait_for(arrived, 60) - sent)
        checks.append(await asyncio.to_thread(timed_check, tree, target, registry, round_))
    rss, peak, workers = memory(process.pid)
    await session.close()

    median, check = statistics.median(latencies), statistics.median(checks)
    ninetieth = sorted(latencies)[int(0.9 * (len(latencies) - 1))]
    print(
        f"edits: {len(latencies)}, diagnostics after the change: median {median:.3f} s, p90 {ninetieth:.3f} s, max {max(latencies):.3f} s"
    )
    print(f"warm check --changed-only FILE: median {check:.2f} s of {len(checks)}")
    print(f"server memory: {rss:.0f} MiB resident ({peak:.0f} MiB peak), workers alive: {workers:.0f} MiB")
    print(f"\n{'target':30} {'measured':>9} {'limit':>7}  ok")
    for name, value, limit in (
        ("edit median s", median, 0.25),
        ("edit / check --changed-only", median / check, 0.5),
        ("resident MiB", rss, 300.0),
    ):
        print(f"{name:30} {value:9.3f} {limit:7.2f}  {'yes' if value <= limit else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", help="The tree to open as the workspace folder.")
    parser.add_argument("--file", help="The Python file to edit, relative to TREE (default: the middle one by path).")
    parser.add_argument("--registry", help="The registry, relative to TREE or absolute (passed as a workspace setting).")
    parser.add_argument("--rounds", type=int, default=5, help="Rounds of edits, each followed by one timed check.")
    parser.add_argument("--edits", type=int, default=6, help="Timed edits per round.")
    args = parser.parse_args()

    source = Path(args.tree).resolve()
    with tempfile.TemporaryDirectory(prefix="metriclint-server-bench-") as scratch:
        tree = Path(scratch) / source.name
        shutil.copytree(source, tree, ignore=_IGNORED, symlinks=True)
        files = sorted(tree.rglob("*.py"))
        target = tree / args.file if args.file else files[len(files) // 2]
        registry = ["--registry", str((source / args.registry).resolve())] if args.registry else []
        print(f"tree: {source} ({len(files)} .py files), file: {target.relative_to(tree)}, python {sys.version.split()[0]}", flush=True)
        asyncio.run(bench(tree, target, registry, args.rounds, args.edits, Path(scratch) / "server.log"))


if __name__ == "__main__":
    main()
