"""metriclint: keeps what a codebase says its metrics mean consistent with what they are."""

__version__ = "0.1.0"
