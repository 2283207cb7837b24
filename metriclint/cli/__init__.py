"""The command line: `metriclint check`, `audit`, `fix`, ... (commands.py), the project options
they share (project.py), how they end (status.py), and `generate` (generate.py).

Takes the command line; gives the engine's settings, and prints what the engine found.
"""

from metriclint.cli.commands import main

__all__ = ["main"]
