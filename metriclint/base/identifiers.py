"""What the spelling of a Python name says of what it names, for every stage that reads code
(the walk of one file and the project-wide step) without importing either's machinery."""

from __future__ import annotations


def class_like(name: str) -> bool:
    """Whether a (dotted) name's last part is written as a class's is (`pkg.Rollout`, PEP 8's
    CapWords): a call of it makes an object, a field holds a key, the project's classes are
    looked up for it (most names resolved are a function's or a method's, and looking each up
    was a tenth of the project-wide step on miles)."""
    return name.rsplit(".", 1)[-1][:1].isupper()
