"""Pieces of example projects that several rules' examples share."""

REGISTRY = """version: 1
metrics:
  train/grad_norm:
    aliases: [grad_norm]
    semantics:
      clipping: before
"""

TOOLTIP_CONFIG = (
    '[tool.metriclint]\n[[tool.metriclint.tooltips]]\npath = "ui/*.js"\ntable = "DESCRIPTIONS"\nmatch = "substring"\nstrip-prefix = true\n'
)

WANDB = 'def log(total):\n    wandb.log({"train/grad_norm": total})\n'
