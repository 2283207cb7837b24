"""The probes of a bound: values outside [low, high] disprove a facet value (a clip threshold,
a definition's range)."""

from __future__ import annotations

import math

from metriclint.live.points import Fact, RunSource
from metriclint.live.probes.probe import LIMIT, RELATIVE, TINY, Outcome, Probe, Seen, earliest, shown_value


class Bound(Probe):
    """Values outside [low, high]; a disproof of `values` once one is found."""

    def __init__(self, low: float = -math.inf, high: float = math.inf) -> None:
        super().__init__()
        self.low, self.high = low, high
        self.outside = 0
        self.first: Seen | None = None

    @property
    def decided(self) -> bool:
        return self.outside >= LIMIT

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if value != value:
            self.skipped += 1
        elif value < self.low or value > self.high:
            self.outside += 1
            if self.first is None or step < self.first.step:
                self.first = earliest(self.first, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, Bound)
        self.outside += other.outside
        self.first = earliest(self.first, other.first)

    def counted(self) -> str:
        at_least = "at least " if self.decided else ""
        return f"{at_least}{self.outside} of the {self.count} values read"

    def outcome(self) -> Outcome:
        if self.count == self.skipped:
            return Outcome(undetermined="the run logged no number for it" if not self.count else "every value it logged is NaN")
        if self.outside:
            return Outcome({v: self.disproof() for v in self.values}, first=self.first)
        return Outcome(consistent=self.agreement())

    def disproof(self) -> str:
        raise NotImplementedError

    def agreement(self) -> str:
        raise NotImplementedError


class ClipBound(Bound):
    """clipping=after: every value at most the clip threshold (`max_grad_norm`), within 0.1%.

    Proves: a value above the threshold is no norm after clipping to it. Cannot prove the norm
    is after clipping (a norm before clipping may stay below the threshold all run), nor
    anything about clipping=before. Needs the threshold as a firm fact; one read from a
    default (presumed) only explains why the verdict is left open."""

    facet, values = "clipping", ("after",)

    def __init__(self, threshold: Fact) -> None:
        limit = float(threshold.value)
        super().__init__(high=limit * (1 + RELATIVE) + TINY)
        self.threshold = threshold

    def outcome(self) -> Outcome:
        found = super().outcome()
        if found.ruled_out and not self.threshold.firm:
            return Outcome(
                undetermined=f"{self.counted()} exceed max_grad_norm's default {shown_value(float(self.threshold.value))} "
                f"({self.threshold.where}), but the run does not record its own (pass --fact max_grad_norm=VALUE)",
                first=self.first,
            )
        return found

    def disproof(self) -> str:
        return f"{self.counted()} exceed max_grad_norm {shown_value(float(self.threshold.value))} ({self.threshold.where})"

    def agreement(self) -> str:
        return f"all {self.count} values are at most max_grad_norm {shown_value(float(self.threshold.value))}"


class DefinedBound(Bound):
    """A bound a definition forces, for the facet values named:

    - unit=fraction: in [0, 1]. quantity=nll: at least 0; log-prob: at most 0; perplexity: at
      least 1; entropy: at least 0 (a discrete distribution's). estimator=k2 (r²/2) and k3
      (e^r - 1 - r): at least 0, value by value, so any mean, sum, max or min of them too.
    - entropy, with a firm `vocab_size` V: at most log2(V), its largest value in any unit (nats
      are smaller).

    Proves: a value outside the bound is not that quantity. Cannot prove that a value inside is:
    every loss lies above 0. Percent and ratio have no bound (a percent may exceed 100)."""

    def __init__(self, facet: str, value: str, low: float, high: float, why: str) -> None:
        super().__init__(
            low - TINY * max(1.0, abs(low)) if math.isfinite(low) else low,
            high + TINY * max(1.0, abs(high)) if math.isfinite(high) else high,
        )
        self.facet, self.value, self.why = facet, value, why
        self.values = (value,)

    def disproof(self) -> str:
        return f"{self.counted()} lie outside {self.why}"

    def agreement(self) -> str:
        return f"all {self.count} values lie within {self.why}"


def defined_bounds(facet: str, value: str, vocab: Fact | None) -> DefinedBound | None:
    """The bound a definition forces on `facet`=`value`, if any."""
    if facet == "unit" and value == "fraction":
        return DefinedBound(facet, value, 0.0, 1.0, "[0, 1], where every fraction lies")
    if facet == "estimator" and value in ("k2", "k3"):
        return DefinedBound(facet, value, 0.0, math.inf, f"[0, inf), where every {value} estimate lies")
    if facet != "quantity":
        return None
    if value == "nll":
        return DefinedBound(facet, value, 0.0, math.inf, "[0, inf), where every negative log-likelihood lies")
    if value == "log-prob":
        return DefinedBound(facet, value, -math.inf, 0.0, "(-inf, 0], where every log-probability lies")
    if value == "perplexity":
        return DefinedBound(facet, value, 1.0, math.inf, "[1, inf), where every perplexity lies")
    if value == "entropy":
        if vocab is not None and vocab.firm and float(vocab.value) >= 2:
            top = math.log2(float(vocab.value))
            return DefinedBound(
                facet,
                value,
                0.0,
                top,
                f"[0, log2(vocab_size)] = [0, {top:.4g}] (vocab_size {shown_value(float(vocab.value))} at {vocab.where})",
            )
        return DefinedBound(facet, value, 0.0, math.inf, "[0, inf), where every entropy lies")
    return None
