"""The probes of a unit: which divisor made a memory value (GB or GiB, MB or MiB), and no
value above the device's memory."""

from __future__ import annotations

import math

from metriclint.live.points import Fact, RunSource
from metriclint.live.probes.bounds import Bound
from metriclint.live.probes.probe import RELATIVE, Outcome, Probe, Seen, earliest


class UnitExact(Probe):
    """unit=GB/GiB (MB/MiB): which divisor made the value, where values keep a double's
    precision (JSON text, W&B, MLflow; not TensorBoard's float32).

    A count of bytes divided by 2^30 is exact: v * 2^30 is a whole number. Divided by 10^9 it is
    the double nearest b / 10^9: round(v * 10^9) / 10^9 gives v back. A value that only the
    decimal reading explains is GB, one that only the binary does is GiB; a value both or
    neither explain (a whole number of GB, a rounded or averaged value) says nothing. Proves: at
    least 3 values that only one reading explains, and none that only the other does, rule the
    other unit out. Cannot tell anything from rounded values, or from float32 ones."""

    facet = "unit"
    LEAST = 3

    def __init__(self, decimal: str, binary: str) -> None:
        super().__init__()
        self.decimal, self.binary = decimal, binary
        self.power = 9 if decimal == "GB" else 6
        self.values = (decimal, binary)
        self.only_decimal = self.only_binary = self.imprecise = 0
        self.first_decimal: Seen | None = None
        self.first_binary: Seen | None = None

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if not source.float64:
            self.imprecise += 1
            return
        if not math.isfinite(value) or value == 0:
            self.skipped += 1
            return
        scale = 10.0**self.power
        binary = (value * 2.0 ** (self.power * 10 // 3)).is_integer()
        try:
            decimal = round(value * scale) / scale == value
        except OverflowError:
            decimal = False
        if decimal and not binary:
            self.only_decimal += 1
            self.first_decimal = earliest(self.first_decimal, Seen(source.path, step, value, rank))
        elif binary and not decimal:
            self.only_binary += 1
            self.first_binary = earliest(self.first_binary, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, UnitExact)
        self.only_decimal += other.only_decimal
        self.only_binary += other.only_binary
        self.imprecise += other.imprecise
        self.first_decimal = earliest(self.first_decimal, other.first_decimal)
        self.first_binary = earliest(self.first_binary, other.first_binary)

    def outcome(self) -> Outcome:
        bits = 30 if self.power == 9 else 20
        if self.only_decimal >= self.LEAST and not self.only_binary:
            why = (
                f"{self.only_decimal} of its {self.count} values are a whole number of bytes divided by 10^{self.power}, "
                f"and none divided by 2^{bits}"
            )
            return Outcome({self.binary: why}, established=(self.decimal, why), first=self.first_decimal)
        if self.only_binary >= self.LEAST and not self.only_decimal:
            why = (
                f"{self.only_binary} of its {self.count} values are a whole number of bytes divided by 2^{bits}, "
                f"and none divided by 10^{self.power}"
            )
            return Outcome({self.decimal: why}, established=(self.binary, why), first=self.first_binary)
        if self.imprecise == self.count:
            return Outcome(undetermined="its values are stored as float32, which cannot tell GiB from GB")
        return Outcome(
            undetermined=f"{self.only_decimal} values read as {self.decimal} only and {self.only_binary} as {self.binary} only "
            f"(of {self.count}); rounded values read as neither"
        )


_BYTES = {"bytes": 1.0, "GB": 1e9, "GiB": 2.0**30, "MB": 1e6, "MiB": 2.0**20}


class DeviceCapacity(Bound):
    """unit=bytes/GB/GiB/MB/MiB of one device's memory (scope per-device, from a statement or
    the code): no value exceeds the device's memory (`device_memory`, in bytes, a firm fact).

    Proves: a value above the capacity in the claimed unit is not in that unit (a GiB figure
    above 80 GiB on an 80 GB device is GB, or a sum). Cannot prove the unit of a value below it."""

    facet = "unit"

    def __init__(self, unit: str, capacity: Fact) -> None:
        self.unit, self.capacity = unit, capacity
        self.values = (unit,)
        super().__init__(high=float(capacity.value) / _BYTES[unit] * (1 + RELATIVE))

    def disproof(self) -> str:
        size = float(self.capacity.value) / _BYTES[self.unit]
        return f"{self.counted()} exceed the device's memory, {size:.4g} {self.unit} (device_memory at {self.capacity.where})"

    def agreement(self) -> str:
        return f"all {self.count} values fit in the device's memory"


def capacity_units() -> tuple[str, ...]:
    return tuple(_BYTES)
