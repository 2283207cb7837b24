"""The checks: claims, sightings, code evidence and read failures in, findings out.

Takes one run's claims, sightings, code claims, tooltip bindings and read failures (model/)
and the registry; gives findings (model.Finding), before any selection or suppression.

One module per rule (`ml001.py` ...), each holding its check, its documentation and its good
and bad examples (`rule.py` says what a rule is). `RULES` lists them in code order; the
pipeline runs every rule that has a check, and `metriclint rules` and `explain` print them.
ML011-ML014 hold statements against a run's values: `metriclint live-check` (metriclint/live/)
reports them.
"""

from metriclint.checks.ml001 import ML001
from metriclint.checks.ml002 import ML002
from metriclint.checks.ml003 import ML003
from metriclint.checks.ml004 import ML004
from metriclint.checks.ml005 import ML005
from metriclint.checks.ml006 import ML006
from metriclint.checks.ml007 import ML007
from metriclint.checks.ml008 import ML008
from metriclint.checks.ml010 import ML010
from metriclint.checks.ml011 import ML011
from metriclint.checks.ml012 import ML012
from metriclint.checks.ml013 import ML013
from metriclint.checks.ml014 import ML014
from metriclint.checks.ml900 import ML900
from metriclint.checks.rule import Corpus, Example, Kind, Rule

RULES: tuple[Rule, ...] = (ML001, ML002, ML003, ML004, ML005, ML006, ML007, ML008, ML010, ML011, ML012, ML013, ML014, ML900)

__all__ = [
    "RULES",
    "Corpus",
    "Example",
    "Kind",
    "Rule",
    "ML001",
    "ML002",
    "ML003",
    "ML004",
    "ML005",
    "ML006",
    "ML007",
    "ML008",
    "ML010",
    "ML011",
    "ML012",
    "ML013",
    "ML014",
    "ML900",
]
