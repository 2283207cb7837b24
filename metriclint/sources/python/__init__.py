"""Python: docstrings, comments, logged keys, tooltip texts and code facts, from one file.

`walk.py` is the single `ast` walk that `extract` runs; the walk follows values with the data
flow of `flow.py`, finds positions, literals and comments through `text.py`, turns texts into
mentions in `prose.py` (docstring sections from `docstrings.py`), reads what known calls compute
in `code.py` and takes tooltip tables with `tables.py`. `cst.py` reads a file in syntax newer
than the running Python with libcst.
"""

from metriclint.sources.python.walk import extract

__all__ = ["extract"]
