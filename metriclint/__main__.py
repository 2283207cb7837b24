"""`python -m metriclint`, and the `metriclint` command (`run`). For `-m`, Python puts the
current folder first on the import path, so a checked tree's `re.py` or `dataclasses.py` would
be imported in place of the standard library's, and run: the folder is taken off the path
before anything else is imported (`os` and `sys` are loaded with the interpreter, from its own
library)."""

import os
import sys


def run() -> None:
    """Until the CLI sets its handlers (half a second of imports), an interrupt ends the run as
    the signal itself does (the shell's 130), not as a KeyboardInterrupt raised inside an
    import, with its traceback. `signal` is imported here, once the folder is off the path: it
    imports `enum`, which a checked tree may hold."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from metriclint.cli import main  # only once the handler is set

    main()


if __name__ == "__main__":
    if sys.path and os.path.realpath(sys.path[0] or os.curdir) == os.path.realpath(os.getcwd()):
        del sys.path[0]
    run()
