"""How a command ends: its exit status. 0 clean, 1 findings at or above --fail-on (or a
generated file out of date), 2 a usage, config, registry or internal error, 128 + N when
signal N ends the run, as a shell reports it."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, NoReturn

import click

from metriclint.model import ConfigError, Finding, Problem, Severity

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def exit_for(findings: Iterable[Finding], fail_on: Severity = Severity.ERROR) -> NoReturn:
    """Exit 1 when a finding is at least as severe as `fail_on`, else 0."""
    failing = {Severity.ERROR} if fail_on is Severity.ERROR else {Severity.ERROR, Severity.WARNING}
    sys.exit(EXIT_FINDINGS if any(f.severity in failing for f in findings) else EXIT_CLEAN)


def usage_error(problems: list[Problem]) -> NoReturn:
    for problem in problems:
        click.echo(str(problem), err=True)
    sys.exit(EXIT_USAGE)


@contextmanager
def usage_errors() -> Iterator[None]:
    """A bad config, registry or baseline: every problem as `file:line:col: message`, exit 2."""
    try:
        yield
    except ConfigError as error:
        usage_error(error.problems)


class Guarded(click.Group):
    """Commands whose unforeseen failure is one line and exit 2, not a traceback and exit 1: CI
    logs stay readable, and exit 1 keeps meaning "findings". `--verbose` or METRICLINT_DEBUG=1
    print the traceback too, for the report."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise  # click's own endings, and a closed pipe, which click handles as a reader expects
        except KeyboardInterrupt:
            sys.exit(128 + signal.SIGINT)  # as a shell reports a process that SIGINT ended: 130
        except Exception as error:  # noqa: BLE001 - the last guard
            if ctx.params.get("verbose") or os.environ.get("METRICLINT_DEBUG", "") not in ("", "0"):
                traceback.print_exc()
            detail = " ".join(str(error).split())
            click.echo(f"metriclint: internal error: {type(error).__name__}: {detail[:300]}; please report it", err=True)
            sys.exit(EXIT_USAGE)
