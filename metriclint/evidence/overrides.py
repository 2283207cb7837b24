"""What a method runs as on an instance of its class or of any subclass of the project: a
framework that calls a class's method (rules/code/frameworks.yaml `logged_returns`) calls it on
an instance of whichever class the project built, so where that method returns what another
method of its own class returns (`return self.compute_loss(data)`), each subclass's override of
that other method runs for the subclass's instances (model.Held, OVERRIDDEN). A subclass that
overrides the framework's method itself, and those below it, may call anything: left out."""

from __future__ import annotations

from metriclint.evidence.callees import Callees
from metriclint.model import FunctionFlow


def runs(callees: Callees, name: str, framework_method: str) -> tuple[FunctionFlow, ...]:
    """The method `name` (module.Class.method) as the class has it, then each override of it in
    the project's subclasses that leave `framework_method` as it is."""
    found = list(callees.targets(name, overridden=False))
    owner, method = name.rsplit(".", 1)
    start = callees.hierarchy.base(owner)
    direct = callees.direct
    below = callees.hierarchy.descendants(start.name, lambda shape: direct(f"{shape.name}.{framework_method}") is not None) if start else ()
    for shape in below:
        own = direct(f"{shape.name}.{method}")
        if own is not None and own not in found:
            found.append(own)
    return tuple(found)
