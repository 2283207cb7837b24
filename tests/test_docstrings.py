"""The docstring splitter: which name each piece of text documents, in all three styles."""

from __future__ import annotations

import pytest

from metriclint.sources.python.docstrings import parse

GOOGLE = """Log one step.

    Formats the metrics.

    Args:
        args: Configuration.
        grad_norm (float): Gradient norm after
            clipping, from the optimizer.
        *extra: More.

    Returns:
        The formatted dict.

    Example:
        >>> log_step(1, 2)
    """
NUMPY = """Log one step.

    Parameters
    ----------
    grad_norm : float
        Norm after clipping,
        on every rank.
    step : int
        Step.

    Returns
    -------
    total : float
        The total norm.
    """
SPHINX = """Log one step.

    :param grad_norm: Norm after
        clipping.
    :type grad_norm: float
    :param int step: The step.
    :returns: the norm
    :raises ValueError: never
    """


def blocks(doc: str) -> list[tuple[str, str, list[str]]]:
    lines = doc.split("\n")
    return [(b.kind, b.name, [lines[i][s:e] for i, s, e in b.pieces]) for b in parse(lines)]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            GOOGLE,
            [
                ("text", "", ["Log one step."]),
                ("text", "", ["Formats the metrics."]),
                ("param", "args", ["Configuration."]),
                ("param", "grad_norm", ["Gradient norm after", "clipping, from the optimizer."]),
                ("param", "extra", ["More."]),
                ("returns", "", ["The formatted dict."]),
            ],
        ),
        (
            NUMPY,
            [
                ("text", "", ["Log one step."]),
                ("param", "grad_norm", ["Norm after clipping,", "on every rank."]),
                ("param", "step", ["Step."]),
                ("returns", "total", ["The total norm."]),
            ],
        ),
        (
            SPHINX,
            [
                ("text", "", ["Log one step."]),
                ("param", "grad_norm", ["Norm after", "clipping."]),
                ("param", "step", ["The step."]),
                ("returns", "", ["the norm"]),
            ],
        ),
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_styles(doc: str, expected: list[tuple[str, str, list[str]]]) -> None:
    assert blocks(doc) == expected


def test_attributes_section() -> None:
    doc = "Stats.\n\n    Attributes:\n        grad_norm: Clipped norm.\n    "
    assert blocks(doc)[1] == ("attribute", "grad_norm", ["Clipped norm."])
