"""prometheus_client metrics: the key each call creates, and its help text as that key's tooltip
(fixtures/prom_help and its silent twin hold the whole project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke, write_project

from metriclint.sources.python.walk import extract

REGISTRY = "version: 1\nmetrics:\n  unrelated_total:\n    description: Something else.\n"


def _keys(source: str) -> list[str]:
    return [use.key for use in extract("m.py", source.encode()).keys]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('Gauge("loss", "Latest loss", namespace="job", subsystem="ft", unit="ratio")', ["job_ft_loss_ratio"]),
        ('Gauge("loss", "Latest loss", (), "job")', ["job_loss"]),  # the namespace given by position
        ('Histogram("wait_seconds", "Wait", unit="seconds")', ["wait_seconds"]),  # the unit is not added twice
        ('Gauge(documentation="Latest loss", name=NAME)', ["job_loss_latest"]),
        ('Gauge("loss", "Latest loss", namespace=ns)', []),  # without its namespace the key would be another
        ('Gauge(TWO, "Latest loss")', []),  # one of two strings: no key is known
        ('Gauge("train/loss", "Latest loss")', []),  # prometheus_client refuses the name
        ('Gauge(f"{ns}_loss", "Latest loss")', []),
        ('Gauge("loss")', []),  # no help text
        ('Gauge(*spec, "loss", "Latest loss")', []),  # after `*spec`, no argument's place is known
    ],
)
def test_the_key_a_call_creates(call: str, expected: list[str]) -> None:
    source = (
        "from prometheus_client import Gauge, Histogram\n"
        'NAME = "job_loss_latest"\n'
        'if fast:\n    TWO = "a_loss"\nelse:\n    TWO = "b_loss"\n'
        f"def make(ns):\n    return {call}\n"
    )
    assert _keys(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        'from prometheus_client import Gauge as G\nG("up", "Up")\n',
        'import prometheus_client\nprometheus_client.Counter("up", "Up")\n',
        'import prometheus_client as pc\npc.Info("up", "Up")\n',
        'from prometheus_client.metrics import Enum\nEnum("up", "Up", states=["a", "b"])\n',
    ],
)
def test_a_metric_class_is_known_by_its_import(source: str) -> None:
    assert _keys(source) == ["up"]


@pytest.mark.parametrize(
    "source",
    [
        'import collections\nimport prometheus_client\ncollections.Counter("up", "Up")\n',
        'from enum import Enum\nimport prometheus_client\nEnum("up", "Up")\n',
        'import prometheus_client\nfrom dials import Gauge\nGauge("up", "Up")\n',
        'from prometheus_client import *\nGauge("up", "Up")\n',  # where Gauge comes from is not written
    ],
)
def test_a_class_of_the_same_name_from_elsewhere_is_not_a_metric(source: str) -> None:
    assert _keys(source) == []


def _unregistered(base: Path) -> list[str]:
    report = json.loads(invoke("check", str(base), "--format", "json", "--no-cache").stdout)
    return [f"{f['path']}:{f['line']} {f['metric']}" for f in report["findings"] if f["rule"] == "ML004"]


def test_a_constant_of_another_module_is_found_by_the_end_of_its_import_path(in_tmp: Path) -> None:
    """The module's own name starts at its source root (`src.pkg.series`), the import names
    the package as installed (`pkg.series`)."""
    write_project(
        in_tmp,
        {
            "src/pkg/series.py": 'LOSS = "job_loss_latest"\n',
            "src/pkg/exporter.py": "from prometheus_client import Gauge\nfrom pkg.series import LOSS\n\nG = Gauge(LOSS, 'Latest loss')\n",
        },
        REGISTRY,
    )
    assert _unregistered(in_tmp) == ["src/pkg/exporter.py:4 job_loss_latest"]


def test_a_constant_two_modules_could_be_or_none_defines_names_no_metric(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "a/series.py": 'LOSS = "a_loss"\n',
            "b/series.py": 'LOSS = "b_loss"\n',
            "exporter.py": (
                "from prometheus_client import Gauge\nimport series\nfrom outside.names import UP\n\n"
                "G = Gauge(series.LOSS, 'Latest loss')\nU = Gauge(UP, 'Up')\n"
            ),
        },
        REGISTRY,
    )
    assert _unregistered(in_tmp) == []
