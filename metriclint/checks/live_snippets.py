"""Pieces of the live rules' example projects: a training script whose docstring speaks for
`train/grad_norm`, and runs as JSON-lines logs with a config beside them."""

from textwrap import dedent

LOGGED = dedent('''\
    def log(grad_norm):
        """Args:
            grad_norm: Norm {wording}.
        """
        wandb.log({{"train/grad_norm": grad_norm}})
''')
REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n"
TWO_METRICS = REGISTRY + "  eval/loss:\n    description: Mean loss on the held-out set.\n"
CONFIG = "max_grad_norm: 1.0\n"


def run(*norms: float, extra: str = "") -> str:
    """A JSON-lines run logging `norms` at steps 1, 2, ...; `extra` adds a key=value pair to each record."""
    more = f", {extra}" if extra else ""
    return "".join(f'{{"step": {i}, "train/grad_norm": {norm}{more}}}\n' for i, norm in enumerate(norms, 1))


LIVE = ("live-check", ".", "--run", "run")
