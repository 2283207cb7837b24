"""A pretraining loop's report, printed line by line the way Megatron-style trainers print it
(written for metriclint's benchmark: only the printed format matches the runs it reads)."""

import math
from typing import Any


def training_log(
    writer: Any,
    iteration: int,
    train_iters: int,
    elapsed_ms: float,
    learning_rate: float,
    batch_size: int,
    lm_loss: float,
    loss_scale: float,
    grad_norm: float,
) -> None:
    """Logs and prints one reporting interval.

    Args:
        grad_norm: The gradient norm after clipping.
    """
    writer.add_scalar("learning-rate", learning_rate, iteration)
    writer.add_scalar("lm loss", lm_loss, iteration)
    writer.add_scalar("grad-norm", grad_norm, iteration)
    writer.add_scalar("iteration-time", elapsed_ms, iteration)
    line = " iteration {:8d}/{:8d} |".format(iteration, train_iters)
    line += " elapsed time per iteration (ms): {:.1f} |".format(elapsed_ms)
    line += " learning rate: {:.3E} |".format(learning_rate)
    line += " global batch size: {:5d} |".format(batch_size)
    line += " lm loss: {:.6E} |".format(lm_loss)
    line += " loss scale: {:.1f} |".format(loss_scale)
    line += " grad norm: {:.3f} |".format(grad_norm)
    print(line)


def validation_log(writer: Any, iteration: int, loss: float) -> None:
    ppl = math.exp(min(20, loss))
    writer.add_scalar("lm loss validation", loss, iteration)
    writer.add_scalar("lm loss validation ppl", ppl, iteration)
    print(" validation loss at iteration {} | lm loss value: {:.6E} | lm loss PPL: {:.6E} | ".format(iteration, loss, ppl))
