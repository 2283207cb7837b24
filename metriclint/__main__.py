"""`python -m metriclint`. For `-m`, Python puts the current folder first on the import path,
so a checked tree's `re.py` or `dataclasses.py` would be imported in place of the standard
library's, and run: the folder is taken off the path before anything else is imported (`os`
and `sys` are loaded with the interpreter, from its own library)."""

import os
import signal
import sys

# Until the CLI sets its handlers, an interrupt ends the run as the signal itself does (the
# shell's 130), not as a KeyboardInterrupt raised inside an import, with its traceback.
signal.signal(signal.SIGINT, signal.SIG_DFL)

if sys.path and os.path.realpath(sys.path[0] or os.curdir) == os.path.realpath(os.getcwd()):
    del sys.path[0]

from metriclint.cli import main  # noqa: E402 - only once the path is safe

main()
