"""The value tests: one per facet value a run's numbers can speak to, each an online,
mergeable accumulator.

A probe takes the points of one metric in one run (`add`), may be merged with the same probe
over another shard of the run (`merge`: counts add up, sketches join), and says what the values
show (`outcome`): values of a facet they rule out, a value they establish, or why they
decide nothing. Once a probe's verdict can no longer change (`decided`), its metric's points are
no longer routed to it. A disproof counts at most `LIMIT` disagreeing values: the message then
says "at least". The value quoted as the first to disagree is the one at the lowest step, so
that a run read whole and one read in shards quote the same.

Bounds are read only from a definition or a stated fact, never from words: a fraction lies in
[0, 1] by definition; "percent" and "ratio" bound nothing. Each probe's docstring says what it
proves and what it cannot; docs/live-check.md lists them.

Takes the points of a run's metrics (live/points.py) routed by the judge; gives each probe's
`Outcome`. One module per kind of test: `probe` (what a probe is), `bounds`, `aggregates`,
`steps`, `units`, `timing`.
"""

from metriclint.live.probes.aggregates import KlMean, RunningPeak
from metriclint.live.probes.bounds import Bound, ClipBound, DefinedBound, defined_bounds
from metriclint.live.probes.probe import LIMIT, Outcome, Probe, Seen, earliest
from metriclint.live.probes.steps import RanksAgree, Series, StepSketch, exp_pairs
from metriclint.live.probes.timing import StepDuration, Timing, schedule
from metriclint.live.probes.units import DeviceCapacity, UnitExact, capacity_units

__all__ = [
    "LIMIT",
    "Bound",
    "ClipBound",
    "DefinedBound",
    "DeviceCapacity",
    "KlMean",
    "Outcome",
    "Probe",
    "RanksAgree",
    "RunningPeak",
    "Seen",
    "Series",
    "StepDuration",
    "StepSketch",
    "Timing",
    "UnitExact",
    "capacity_units",
    "defined_bounds",
    "earliest",
    "exp_pairs",
    "schedule",
]
