"""The engine: the pipeline's entry points, which the commands, the server and the live check call.

Takes the settings of one project (settings.Config) and, in an editor, its unsaved buffers;
gives what the files hold (`Collection`) and what the run found (`Analysis`: the report, with
the claims, sightings and code facts behind it).

- `collect` (collection.py): what the files hold, before any check; `files`: which files a run reads.
- `analyse` and `check` (analysis.py): the whole run, and the steps after `collect` on a collection.
- `judge` (warm.py): the whole run as far as its findings go, from what the last run kept.
- `revise`, `reregister` and `unchanged` (session.py): an editor's buffers over a collection.
"""

from metriclint.engine.analysis import Analysis, Attributed, analyse, check
from metriclint.engine.collection import Collection, collect, files
from metriclint.engine.session import reregister, revise, unchanged
from metriclint.engine.warm import judge
from metriclint.extract.runner import Progress

__all__ = [
    "Analysis",
    "Attributed",
    "Collection",
    "Progress",
    "analyse",
    "check",
    "collect",
    "files",
    "judge",
    "reregister",
    "revise",
    "unchanged",
]
