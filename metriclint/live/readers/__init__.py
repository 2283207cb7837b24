"""One module per kind of run file: each gives the streams of points a run holds and the
facts it records.

Takes a `--run` path; gives `Stream`s (points.py) and `Fact`s. `kinds.py` tells which reader a
path is for. A reader never unpickles anything and never loads a whole run into memory: it
reads record by record, and keeps only the points of the keys asked for.
"""
