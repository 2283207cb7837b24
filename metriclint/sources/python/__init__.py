"""Python: docstrings, comments, logged keys, tooltip texts and code facts, from one file.

Takes a `.py` file's path and bytes; gives its `Extraction`, with the code facts and the
function flows that evidence/ follows across modules.

`walk.py` is the single `ast` walk that `extract` runs, built in layers (`state.py` the
position and dispatch, `roots.py` what a value is, `sinks.py` where it is logged, `said.py` what
log messages say of it (their fields read by `messages.py`), `bindings.py` what names hold,
`frameworks.py` the keys a framework's entry point logs itself (whether a hook such as `on_log` may change
them: `hooks.py`; the callbacks a function of the project lists: `callback_lists.py`), `walk.py` definitions and docstrings); the walk follows values with the data
flow of `flow.py`, finds positions, literals and comments through `text.py`, turns texts into
mentions in `prose.py` (docstring sections from `docstrings.py`), reads what known calls compute
in `code_reader.py` (which of its values are this rank's own: `ranks.py`; which helpers reduce every
value of a dict they are handed: `reducers.py`) and takes tooltip tables
with `tables.py`. `cst.py` reads a file in syntax newer
than the running Python with libcst.
"""

from functools import partial

from metriclint.sources import DEFAULT_OPTIONS, Extractor, Options
from metriclint.sources.python.text import encoding
from metriclint.sources.python.walk import extract

__all__ = ["encoding", "extract", "extractor"]


def extractor(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor:
    """`extract` with the project's own logging functions and code knowledge, for a test file or
    not; `extract` is looked up when asked for, so a test may replace it."""
    return partial(extract, log_functions=options.log_functions, code=options.code, test=options.test)
