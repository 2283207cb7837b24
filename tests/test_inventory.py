"""The inventory: keys reach a sink (rules/sinks.yaml) through dicts of metrics that cross
functions, objects and attributes (sources/python/bags.py, evidence/logged_bags.py,
evidence/callees.py). Each idiom comes with a twin whose dict never reaches a tracker."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES, copy_fixture, invoke, run_apart, write_project

from metriclint.base import marked_yaml
from metriclint.base.builtin import rules_dir
from metriclint.base.marked_yaml import NodeReader
from metriclint.knowledge import sinks
from metriclint.model import Bag, Item, MetricsEntry, Span, flattened
from metriclint.sources import python
from metriclint.sources.python.flatteners import flattened_param

LOGGER = """\
import wandb


class Tracker:
    def publish(self, scalars, step):
        wandb.log({f"train/{name}": value for name, value in scalars.items()}, step=step)
"""
QUIET = LOGGER.replace('wandb.log({f"train/{name}": value for name, value in scalars.items()}, step=step)', "print(scalars, step)")


def _logged(project: Path) -> list[str]:
    """The keys the audit says the code logs."""
    result = invoke("audit", str(project), "--format", "json", "--no-cache")
    return sorted(m["key"] for m in json.loads(result.stdout)["metrics"] if m["logged"])


# Three more classes that define a method of the name under test: more than the by-name
# fallback reads (evidence/callees.py MAX_CANDIDATES), so only the mechanism a case pins finds the
# method meant. Their keys are logged only if that fallback took them.
DECOYS = """

            class Gauge:
                def {method}(self):
                    return {{"depth": self.level}}


            class Scale:
                def {method}(self):
                    return {{"width": 1.0}}


            class Probe:
                def {method}(self):
                    return {{"wattage": 1.0}}
            """


# An interface of loggers and one backend that puts the section it is handed before each key:
# the start of the projects of the cases with a front logger.
BACKEND_INTERFACE = """\
            from abc import ABC, abstractmethod

            from torch.utils.tensorboard import SummaryWriter


            class Backend(ABC):
                @abstractmethod
                def log_metrics(self, metrics, step, prefix=""):
                    ...


            class Board(Backend):
                def __init__(self):
                    self.writer = SummaryWriter("runs")

                def log_metrics(self, metrics, step, prefix=""):
                    for name, value in metrics.items():
                        if prefix:
                            name = f"{prefix}/{name}"
                        self.writer.add_scalar(name, value, step)
"""


def _separated(csv_separator: str, held: str) -> dict[str, str]:
    """A monitor that joins its keys with the separator its trackers' property returns, each
    tracker held as `held`; the subclass's property returns `csv_separator`."""
    return {
        "pkg/base.py": f"""\
            class Tracker:
                @property
                def group_separator(self) -> str:
                    # how the dashboard groups keys
                    return "/"


            class CsvTracker(Tracker):
                @property
                def group_separator(self) -> str:
                    return {csv_separator}
            """,
        "pkg/monitor.py": f"""\
            import wandb


            def _prefixed(stats, prefix, separator):
                return {{prefix + separator + k: v for k, v in stats.items()}}


            class Monitor:
                def on_batch_end(self, trainer, hook):
                    stats = {{"gpu_util": 1.0}}
                    for {held} in trainer.trackers:
                        separator = {held}.group_separator
                        wandb.log(_prefixed(stats, f"Monitor.{{hook}}", separator), step=trainer.step)
            """,
    }


CASES = {
    # keys named after what a method the class inherits from a framework yields at run time
    "a key per item a framework's inherited method yields": (
        {
            "pkg/sizes.py": """\
            import wandb
            from torch import nn


            class Sized(nn.Module):
                def weight_sizes(self):
                    sizes = {}
                    for label, weight in self.named_parameters():
                        sizes["size_{}".format(label)] = float(weight.abs().max())
                    wandb.log(sizes)
            """,
        },
        ["size_{label}"],
    ),
    # a part of a class made of mixins declares a method it leaves empty; another part defines it
    "a method its class leaves empty, which another class of the project defines": (
        {
            "pkg/loop.py": """\
            class LoopPart:
                def publish(self, scalars):
                    \"\"\"Sends the step's values; the reporting part of the trainer does it.\"\"\"

                def report(self, scalars):
                    ...

                def run(self, batches):
                    for batch in batches:
                        self.publish({"loss": batch.loss})
                        self.report({"tokens": batch.size})
            """,
            "pkg/reporting.py": """\
            import wandb


            class ReportingPart:
                def publish(self, scalars):
                    wandb.log(scalars)

                def report(self, scalars):
                    wandb.log(scalars)
            """,
        },
        ["loss", "tokens"],
    ),
    # a step that returns its dicts in a tuple, kept whole in a name and taken apart later
    "a returned tuple held in a name, then unpacked": (
        {
            "pkg/loop.py": """\
            import wandb


            class Loop:
                def one_step(self, batch):
                    sizes = {"rows": len(batch)}
                    return 0, sizes, {"loss": 1.0}

                def run(self, batches):
                    for batch in batches:
                        outcome = self.one_step(batch)
                        status, sizes, scalars = outcome
                        scalars.update(sizes)
                        wandb.log(scalars)
            """,
        },
        ["loss", "rows"],
    ),
    # the project's own logger, reached through an attribute set to an instance of it; it prefixes
    "logger through an attribute": (
        {
            "pkg/tracking.py": LOGGER,
            "pkg/loop.py": """\
            from pkg.tracking import Tracker


            class Loop:
                def __init__(self):
                    self.tracker = Tracker()

                def step(self, loss):
                    metrics = {"loss": loss}
                    metrics["tokens"] = 128
                    self.tracker.publish(metrics, 1)
            """,
        },
        ["train/loss", "train/tokens"],
    ),
    # handed to an executor, which calls the project's method with the rest of the arguments
    "called later by an executor": (
        {
            "pkg/tracking.py": LOGGER,
            "pkg/loop.py": """\
            from concurrent.futures import ThreadPoolExecutor

            from pkg.tracking import Tracker


            class Loop:
                def __init__(self):
                    self.tracker = Tracker()
                    self.pool = ThreadPoolExecutor(max_workers=1)

                def _send(self, scalars, step):
                    self.tracker.publish(scalars, step)

                def step(self, loss):
                    self.pool.submit(self._send, {"loss": loss}, 3)
            """,
        },
        ["train/loss"],
    ),
    # accumulated in one method, averaged and logged in another of a subclass
    "accumulate now, log later": (
        {
            "pkg/tracking.py": LOGGER,
            "pkg/loop.py": """\
            from collections import defaultdict

            from pkg.tracking import Tracker


            class Base:
                def __init__(self):
                    self.stats = defaultdict(list)
                    self.tracker = Tracker()

                def flush(self):
                    self.tracker.publish({k: sum(v) / len(v) for k, v in self.stats.items()}, 0)


            class Loop(Base):
                def step(self, reward):
                    self.stats["reward"].append(reward)
            """,
        },
        ["train/reward"],
    ),
    # a helper returns a dict another helper prefixes, a context manager fills a dict by name
    "returned, prefixed and filled": (
        {
            "pkg/tracking.py": LOGGER,
            "pkg/stats.py": """\
            import time
            from contextlib import contextmanager


            def summary(values):
                return {"mean": sum(values) / len(values), "max": max(values)}


            def prefixed(stats, prefix):
                return {prefix + key: value for key, value in stats.items()}


            @contextmanager
            def stopwatch(name, times: dict):
                start = time.perf_counter()
                yield
                times[name] = time.perf_counter() - start
            """,
            "pkg/loop.py": """\
            from pkg.stats import prefixed, stopwatch, summary
            from pkg.tracking import Tracker


            def step(lengths, tracker: Tracker):
                times = {}
                with stopwatch("forward", times):
                    pass
                metrics = prefixed(summary(lengths), "len_")
                metrics.update(prefixed(times, "time_"))
                tracker.publish(metrics, 0)
            """,
        },
        ["train/len_max", "train/len_mean", "train/time_forward"],
    ),
    # names listed in one function, turned into a dict's keys in another, logged with a suffix
    "a list of names": (
        {
            "pkg/timers.py": """\
            import wandb


            class Timers:
                def _elapsed(self, names):
                    found = {}
                    for i, name in enumerate(names):
                        found[name] = float(i)
                    return found

                def write(self, names):
                    for name, seconds in self._elapsed(names).items():
                        wandb.log({name + "-time": seconds})


            _TIMERS = None


            def get_timers():
                return _TIMERS


            def set_timers():
                global _TIMERS
                _TIMERS = Timers()
            """,
            "pkg/loop.py": """\
            from pkg.timers import get_timers


            def report():
                names = []
                names.extend(["forward", "backward"])
                get_timers().write(names)
            """,
        },
        ["backward-time", "forward-time"],
    ),
    # a list of names zipped with the values, the module's or the function's own
    "names zipped with values": (
        {
            "pkg/stats.py": """\
            import torch
            import wandb

            LOSS_NAMES = ("loss/policy", "loss/value")


            def publish(losses, step):
                wandb.log(dict(zip(LOSS_NAMES, torch.stack(losses).tolist())), step=step)


            def publish_ratios(ratio, clipped, step):
                names = ["ratio/mean", "ratio/clipped"]
                means = [ratio.mean(), clipped.float().mean()]
                wandb.log({name: float(value) for name, value in zip(names, means)}, step=step)
            """
        },
        ["loss/policy", "loss/value", "ratio/clipped", "ratio/mean"],
    ),
    # an item of what a call returns: a dict packed under a key, or under a keyword of a maker
    "an item of a returned dict": (
        {
            "pkg/work.py": """\
            class Packet:
                def __init__(self, data=None, extra=None):
                    self.data, self.extra = data, extra


            def evaluate(batch):
                scores = {"accuracy": batch.mean()}
                return {"metrics": scores, "count": 3}


            def train(batch):
                stats = {"loss": batch.sum()}
                return Packet(data=batch, extra={"metrics": stats})
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.work import evaluate, train


            def step(batch):
                out = evaluate(batch)
                wandb.log({f"eval/{k}": v for k, v in out["metrics"].items()})
                packet = train(batch)
                wandb.log({f"train/{k}": v for k, v in packet.extra.get("metrics").items()})
            """,
        },
        ["eval/accuracy", "train/loss"],
    ),
    # the second element of a returned tuple, kept under a key, read back from a parameter, filtered
    "an element of a returned tuple, through a parameter": (
        {
            "pkg/work.py": """\
            def prepare(batch):
                summary = {"batch_size": len(batch), "tokens": 10}
                summary["reward_mean"] = sum(batch) / len(batch)
                return batch, summary


            def train_step(batch):
                batch, summary = prepare(batch)
                return {"data": summary, "loss": 0.5}
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.work import train_step

            COUNTED = {"tokens"}


            def report(info, step):
                data = info.get("data", {})
                shown = {k: v for k, v in data.items() if k not in COUNTED}
                wandb.log({f"data/{k}": v for k, v in shown.items()}, step=step)


            def loop(batches):
                for step, batch in enumerate(batches):
                    report(train_step(batch), step)
            """,
        },
        ["data/batch_size", "data/reward_mean"],
    ),
    # a name rebound to what a call of its own method returns: read once, not without end
    "a name rebound to its own item": (
        {
            "pkg/loop.py": """\
            import wandb

            from pkg.work import run


            def step(batch):
                out = run(batch)
                out = out.cpu()
                out = out.get("metrics", out)
                wandb.log({f"run/{k}": v for k, v in out.items()})
            """,
            "pkg/work.py": """\
            def run(batch):
                return {"metrics": {"reward": batch.mean()}}
            """,
        },
        ["run/reward"],
    ),
    # a loop over an item of what a call returns: its keys are not known here, the template stays
    "a loop over an item of a returned dict": (
        {
            "pkg/loop.py": """\
            from torch.utils.tensorboard import SummaryWriter

            from pkg.data import evaluate


            class Report:
                def __init__(self):
                    self.writer = SummaryWriter()

                def report(self, step):
                    losses, _ = evaluate()
                    for name in losses:
                        self.writer.add_scalar(f"{name} validation", losses[name], step)
                    sets = evaluate()[1]
                    for name in sets["splits"]:
                        self.writer.add_scalar(f"{name} samples", 1.0, step)
            """,
            "pkg/data.py": """\
            def evaluate():
                losses = {}
                return losses, {"splits": {}}
            """,
        },
        ["{name} samples", "{name} validation"],
    ),
    # a dict put under a key of another by a subscript, as a dict literal nests it
    "a dict stored under a key of another": (
        {
            "pkg/work.py": """\
            def run(batch):
                out = {"step": 0}
                out["metrics"] = {"reward": batch.mean()}
                return out
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.work import run


            def step(batch):
                out = run(batch)
                wandb.log({f"run/{k}": v for k, v in out["metrics"].items()})
            """,
        },
        ["run/reward"],
    ),
    # an attribute set from what the file cannot place, whose class an annotation in the class's body names
    "an attribute its class annotates": (
        {
            "pkg/tracking.py": LOGGER,
            "pkg/loop.py": """\
            from pkg.tracking import Tracker


            class Loop:
                tracker: Tracker

                def __init__(self, make):
                    self.tracker = make()

                def step(self, loss):
                    self.tracker.publish({"loss": loss}, 1)
            """,
        },
        ["train/loss"],
    ),
    # the dict an object's method returns as an element of a tuple, where one class alone defines the method
    "an element of a tuple an object's method returns": (
        {
            "pkg/scoring.py": """\
            class Scorer:
                def score(self, batch):
                    return batch.sum(), {"spread": batch.std()}
            """,
            "pkg/loop.py": """\
            import wandb


            def step(scorer, batch):
                total, stats = scorer.score(batch)
                wandb.log({f"eval/{k}": v for k, v in stats.items()})
            """,
        },
        ["eval/spread"],
    ),
    # a list of a dict's keys, less one the comprehension skips, stands for the dict's entries
    "a list of a dict's keys less one": (
        {
            "pkg/pooling.py": """\
            import torch


            def pool(parts):
                pooled = {}
                names = [k for k in parts[0].keys() if k != "valid"]
                for name in names:
                    pooled[name] = torch.stack([p[name] for p in parts]).mean().item()
                return pooled
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.pooling import pool


            def step(batches):
                parts = []
                for batch in batches:
                    parts.append({"valid": batch.any(), "reward": batch.mean()})
                wandb.log({f"pool/{k}": v for k, v in pool(parts).items()})
            """,
        },
        ["pool/reward"],
    ),
    # a name bound again right in a branch holds the new dict alone there
    "a dict rebound in a branch": (
        {
            "pkg/pooling.py": """\
            def summarize(stats):
                return {"avg": sum(stats.values()) / len(stats)}
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.pooling import summarize


            def step(batches):
                stats = {}
                for batch in batches:
                    stats = {"raw": batch.mean()}
                if batches:
                    stats = summarize(stats)
                    wandb.log({f"sum/{k}": v for k, v in stats.items()})
            """,
        },
        ["sum/avg"],
    ),
    # a TypedDict of the module called with keywords and with the dicts it unpacks; `cast` hands on its value
    "a TypedDict's call and a cast": (
        {
            "pkg/loop.py": """\
            from typing import TypedDict, cast

            import wandb


            class StepRow(TypedDict, total=False):
                loss: float
                grad_norm: float


            def fit(batch, extra):
                rows = []
                rows.append(StepRow(**cast(dict, extra), loss=batch.mean(), grad_norm=batch.norm()))
                return rows


            def drive(batch):
                for row in fit(batch, {"tokens": batch.numel()}):
                    wandb.log({f"fit/{k}": v for k, v in row.items()})
            """,
        },
        ["fit/grad_norm", "fit/loss", "fit/tokens"],
    ),
    # a method called on the instance a constructor call makes, in the same expression
    "a method of an instance made in place": (
        {
            "pkg/work.py": """\
            class Runner:
                def run(self, batch):
                    return {"metrics": {"reward": batch.mean()}}
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.work import Runner


            def step(batch):
                out = Runner().run(batch)
                wandb.log({f"run/{k}": v for k, v in out["metrics"].items()})
            """,
        },
        ["run/reward"],
    ),
    # (name, value) records kept by one method, logged by another
    "records": (
        {
            "pkg/buffer.py": """\
            from torch.utils.tensorboard import SummaryWriter


            class Buffer:
                def __init__(self):
                    self.items = []
                    self.writer = SummaryWriter()

                def record(self, name, value):
                    self.items.append((name, value))

                def flush(self, step):
                    for name, value in self.items:
                        self.writer.add_scalar(name, value, step)
            """,
            "pkg/loop.py": """\
            from pkg.buffer import Buffer

            BUFFER = Buffer()


            def step(seconds):
                BUFFER.record("perf/step_seconds", seconds)
            """,
        },
        ["perf/step_seconds"],
    ),
    # a helper keys its dict by a parameter the caller fills with a key built from a variable
    # of the same name: the caller's name, once filled, is not the helper's to fill again
    "a parameter filled with a key named by a variable of the same name": (
        {
            "pkg/monitor.py": """\
            import wandb


            class Monitor:
                def on_step(self, optimizer, names):
                    stats = {}
                    for group, name in zip(optimizer.param_groups, names):
                        stats.update(self._value(group, f"{name}/lr", "lr"))
                        stats.update(self._value(group, f"{name}/weight_decay", "weight_decay"))
                    wandb.log(stats)

                def _value(self, group, name, field):
                    return {name: group[field]}
            """,
        },
        ["{name}/lr", "{name}/weight_decay"],
    ),
    # a parameter typed as a TypedDict of the module: its items are the fields the class declares
    "the fields of a typed dict a parameter is declared as": (
        {
            "pkg/timing.py": """\
            from typing import TypedDict

            import wandb


            class StepTimes(TypedDict, total=False):
                data: float
                step: float


            def scalars(times: StepTimes) -> dict[str, float]:
                return {f"{name}_seconds": seconds for name, seconds in times.items()}


            def log_times(times: StepTimes, step: int) -> None:
                wandb.log(scalars(times), step=step)
            """,
        },
        ["data_seconds", "step_seconds"],
    ),
    # keys named after the class that logs them, through its instance's type
    "the name of the class whose method logs the key": (
        {
            "pkg/probes.py": """\
            import wandb


            class MemoryProbe:
                def on_step(self, allocated, step):
                    wandb.log({f"{self.__class__.__qualname__}.allocated_gb": allocated}, step=step)


            class SpeedProbe:
                def on_step(self, tokens, step):
                    wandb.log({f"{type(self).__name__}.tokens_per_second": tokens}, step=step)
            """,
        },
        ["MemoryProbe.allocated_gb", "SpeedProbe.tokens_per_second"],
    ),
    # a key put in the dict only where it has none yet
    "a key a dict is given unless it has one": (
        {
            "pkg/publish.py": """\
            import wandb


            def publish(metrics, step=None, epoch=0):
                scalars = dict(metrics)
                if step is None:
                    scalars.setdefault("epoch", epoch)
                wandb.log(scalars, step=step)
            """,
        },
        ["epoch"],
    ),
    # the items of a list annotated with their class, looped over: a method called on each is
    # that class's (here left abstract, so its subclasses', each extending the generic class
    # with a type argument), where the method's name alone is defined by too many classes to
    # say which
    "a method called on each item of a list annotated with its class": (
        {
            "pkg/responses.py": """\
            from typing import Generic, TypeVar

            Result = TypeVar("Result")


            class Response(Generic[Result]):
                env: str

                def scores(self):
                    raise NotImplementedError


            class RewardResponse(Response[float]):
                def scores(self):
                    return {"reward": [1.0]}


            class PassResponse(Response[bool]):
                def scores(self):
                    return {"pass_rate": [0.5]}
            """,
            "pkg/others.py": """\
            class Router:
                def scores(self):
                    return {"router_entropy": 1.0}


            class Sampler:
                def scores(self):
                    return {"kept_fraction": 1.0}
            """,
            "pkg/evaluate.py": """\
            from collections import defaultdict

            import wandb

            from pkg.responses import Response


            def mean(values):
                return sum(values) / len(values)


            def report(world, step):
                gathered: list[None | list[Response]] = [None for _ in range(world)]
                gathered = [group for group in gathered if group is not None]
                collected = defaultdict(list)
                for group in gathered:
                    for response in group:
                        for name, values in response.scores().items():
                            collected[f"eval/{response.env}_{name}"].extend(values)
                wandb.log({key: mean(values) for key, values in collected.items()}, step=step)


            def report_final(responses: list[Response], step):
                for response in responses:
                    wandb.log({f"final/{name}": mean(values) for name, values in response.scores().items()}, step=step)
            """,
        },
        ["eval/{env}_pass_rate", "eval/{env}_reward", "final/pass_rate", "final/reward"],
    ),
    # a tuple a call returns, spread over another call's parameters (`f(*step)`)
    "the elements of a returned tuple spread over a call's parameters": (
        {
            "pkg/engine.py": """\
            import wandb


            class Engine:
                def forward(self):
                    state = {"cache": {"blocks_used": 3, "blocks_free": 5}}
                    return [], state, 0.5

                def bookkeep(self, outputs, state, seconds):
                    stats = {f"cache/{key}": value for key, value in state["cache"].items()}
                    wandb.log(stats)

                def step(self):
                    last = self.forward()
                    self.bookkeep(*last)
            """,
        },
        ["cache/blocks_free", "cache/blocks_used"],
    ),
    # a model made from a config, known by the return annotation of the method that builds it;
    # a step's dict made by a class that declares fields and extends TypedDicts of another
    # module, a dict under one of its keywords, and that dict popped inside a cast
    "a step's dict of TypedDicts made by a model a config builds": (
        {
            "pkg/infos.py": """\
            from typing import TypedDict


            class BatchInfo(TypedDict):
                tokens: int
            """,
            "pkg/model.py": """\
            from typing import TypedDict

            from pkg.infos import BatchInfo


            class ForwardInfo(TypedDict):
                losses: dict


            class Model:
                def count(self, batch) -> BatchInfo:
                    info: BatchInfo = {"tokens": len(batch)}
                    return info

                def summarize(self, outputs) -> ForwardInfo:
                    losses = {}
                    losses["ce_loss"] = sum(outputs)
                    return ForwardInfo(losses=losses)
            """,
            "pkg/engine.py": """\
            from typing import cast

            import wandb

            from pkg.infos import BatchInfo
            from pkg.model import ForwardInfo, Model


            class StepInfo(BatchInfo, ForwardInfo):
                total: float


            class Engine:
                def __init__(self, cfg):
                    self.cfg = cfg
                    self.model = self.build()

                def build(self) -> Model:
                    model = self.cfg.build()
                    return model

                def step(self, batch):
                    outputs = self.model.forward(batch)
                    return StepInfo(total=1.0, **self.model.count(batch), **self.model.summarize(outputs))

                def fit(self, batch):
                    info = self.step(batch)
                    losses = cast(dict, info.pop("losses"))
                    wandb.log(dict(**losses, **info))
            """,
        },
        ["ce_loss", "tokens", "total"],
    ),
    # a project method named like a collective gather: what it returns, besides the list a
    # gather would make of what it is handed
    "a dict returned by the project's own method named as a gather": (
        {
            "pkg/stats.py": """\
            import wandb


            class Stats:
                def gather_losses(self, outputs):
                    losses = {}
                    losses["ce_loss"] = sum(outputs)
                    return losses

                def report(self, batch):
                    outputs = self.forward(batch)
                    wandb.log(self.gather_losses(outputs))
            """,
        },
        ["ce_loss"],
    ),
    # a part chosen by a test on a name its other choice would fill: the empty choice is a key,
    # the other stays the local's placeholder (a caller's "actor" must not fill `{role}`)
    "a key part that is empty for one value of a tested parameter": (
        {
            "pkg/logs.py": """\
            import wandb


            def log_step(grad_norm, role):
                tag = "" if role == "actor" else f"{role}-"
                wandb.log({f"{tag}grad_norm": grad_norm})


            def train(norm):
                log_step(norm, "actor")
            """,
        },
        ["grad_norm", "{tag}grad_norm"],
    ),
    # a loss function bound with `partial` and kept in an attribute, handed to an engine whose
    # subclass's step calls it: what it returns is what the engine hands back (a name rebound to
    # a partial of itself is read once, not forever)
    "a loss function handed to an engine that calls it": (
        {
            "pkg/losses.py": """\
            def policy_loss(output, batch, config):
                stats = {}
                stats["kl_penalty"] = output.kl.mean()
                return output.loss, stats
            """,
            "pkg/engine.py": """\
            class Engine:
                def train_batch(self, batch, loss_fn):
                    merged = {}
                    for micro in batch.split():
                        merged.update(self.step(micro, loss_fn))
                    return {"metrics": merged}

                def step(self, micro, loss_fn):
                    raise NotImplementedError


            class LMEngine(Engine):
                def step(self, micro, loss_fn):
                    output = self.model(micro)
                    loss, stats = loss_fn(output, micro)
                    loss.backward()
                    return stats
            """,
            "pkg/worker.py": """\
            from functools import partial

            import wandb

            from pkg.engine import LMEngine
            from pkg.losses import policy_loss


            def strict(check):
                check = partial(check, strict=True)
                return check


            class Worker:
                def __init__(self, config):
                    self.engine = LMEngine()
                    self.loss_fn = partial(policy_loss, config=config)

                def update(self, batch):
                    out = self.engine.train_batch(batch, loss_fn=self.loss_fn)
                    wandb.log({f"actor/{k}": v for k, v in out["metrics"].items()})
            """,
        },
        ["actor/kl_penalty"],
    ),
    # a step function handed to the schedule a picker returns, which hands it and its list on to
    # a helper that calls it and hands the function the step returns and the list on to another,
    # which lists either tuple shape's last element; the schedule is called as a parameter
    # (train_step, read for that call) and as a local bound to the picker's result (evaluate);
    # a name bound to a call of itself is read once, not forever
    "a function returned by a function a schedule calls": (
        {
            "pkg/schedule.py": """\
            def record(finish, output, reports):
                outputs = finish(output)
                if len(outputs) == 3:
                    loss, count, report = outputs
                else:
                    loss, report = outputs
                reports.append(report)
                return loss


            def run_one(step_fn, batch, reports):
                output, finish = step_fn(batch)
                return record(finish, output, reports)


            def run_microbatches(step_fn, batches):
                reports = []
                for batch in batches:
                    run_one(step_fn, batch, reports)
                return reports


            def run_interleaved(step_fn, batches):
                return run_microbatches(step_fn, batches[::2]) + run_microbatches(step_fn, batches[1::2])


            def get_schedule(interleaved=False):
                if interleaved:
                    schedule = run_interleaved
                else:
                    schedule = run_microbatches
                return schedule
            """,
            "pkg/train.py": """\
            from functools import partial

            import wandb

            from pkg.schedule import get_schedule


            def loss_and_report(mask, output):
                loss = (output * mask).sum() / mask.sum()
                return loss, mask.sum(), {"lm_loss": loss.detach()}


            def layer_spec(config, spec):
                if spec is None:
                    spec = get_schedule(config)
                elif callable(spec):
                    if config.staged:
                        spec = spec(config, stage=1)
                    else:
                        spec = spec(config)
                return spec


            def eval_report(output):
                return output.loss, {"val_loss": output.loss.detach()}


            def train_step(model, batches, run):
                def forward(batch):
                    output = model(batch.tokens)
                    return output, partial(loss_and_report, batch.mask)

                reports = run(step_fn=forward, batches=batches)
                totals = {}
                for key in reports[0]:
                    totals[key] = sum(r[key] for r in reports) / len(reports)
                wandb.log(totals)


            def evaluate(model, batches):
                def eval_step(batch):
                    return model(batch), eval_report

                run = get_schedule()
                reports = run(step_fn=eval_step, batches=batches)
                wandb.log(reports[-1])


            def train(model, batches):
                train_step(model, batches, get_schedule(interleaved=True))
            """,
        },
        ["lm_loss", "val_loss"],
    ),
    # one class's setter called through two attributes with two functions: each object calls
    # its own, and its dict is logged under that object's prefix alone
    "a function set on each of two objects of one class": (
        {
            "pkg/losses.py": """\
            def policy_loss(batch):
                return batch.loss, {"kl_penalty": batch.kl.mean()}


            def value_loss(batch):
                return batch.value_loss, {"value_error": batch.error.mean()}
            """,
            "pkg/worker.py": """\
            class Worker:
                def set_loss(self, loss_fn):
                    self.loss_fn = loss_fn

                def train(self, batch):
                    loss, stats = self.loss_fn(batch)
                    loss.backward()
                    return stats
            """,
            "pkg/trainer.py": """\
            import wandb

            from pkg.losses import policy_loss, value_loss
            from pkg.worker import Worker


            class Trainer:
                def __init__(self):
                    self.actor = Worker()
                    self.critic = Worker()
                    self.actor.set_loss(policy_loss)
                    self.critic.set_loss(value_loss)

                def step(self, batch):
                    wandb.log({f"actor/{k}": v for k, v in self.actor.train(batch).items()})
                    wandb.log({f"critic/{k}": v for k, v in self.critic.train(batch).items()})
            """,
        },
        ["actor/kl_penalty", "critic/value_error"],
    ),
    # an attribute made by the class its owner names in a class attribute (a subclass may name
    # another): its methods are that class's, among many of the same name
    "an object made by the class a class attribute names": (
        {
            "pkg/workers.py": """\
            class Worker:
                def report(self):
                    return {"worker_loss": self.loss}


            class Reader:
                def report(self):
                    return {}


            class Writer:
                def report(self):
                    return {}


            class Checker:
                def report(self):
                    return {}
            """,
            "pkg/trainer.py": """\
            import wandb

            from pkg.workers import Worker


            class Trainer:
                worker_cls = Worker

                def __init__(self):
                    self.worker = self.worker_cls()

                def step(self):
                    wandb.log(self.worker.report())
            """,
        },
        ["worker_loss"],
    ),
    # an object of a class with `__call__` handed over as the function to call: calling it
    # runs `__call__`
    "a loss object handed to a function that calls it": (
        {
            "pkg/losses.py": """\
            class PolicyLoss:
                def __init__(self, coef):
                    self.coef = coef

                def __call__(self, batch):
                    return batch.loss, {"clip_fraction": batch.clipped.float().mean()}
            """,
            "pkg/train.py": """\
            import wandb

            from pkg.losses import PolicyLoss


            def train_on(batches, loss_fn):
                stats = {}
                for batch in batches:
                    loss, stats = loss_fn(batch)
                    loss.backward()
                return stats


            def main(batches):
                loss_fn = PolicyLoss(0.2)
                wandb.log(train_on(batches, loss_fn))
            """,
        },
        ["clip_fraction"],
    ),
    # a registry a decorator fills (`@register_loss([...])` over each loss), read back by a
    # getter: calling what it returns runs any of the registered functions; a key made of a
    # slice of another dict's key is not that dict's key
    "a loss function a decorator registers and a getter hands out": (
        {
            "pkg/losses.py": """\
            LOSSES = {}


            def register_loss(names):
                def decorator(func):
                    for name in names:
                        LOSSES[name] = func
                    return func

                return decorator


            def get_loss_fn(name):
                return LOSSES[name]


            @register_loss(["forward_kl"])
            def forward_kl(batch):
                return batch.kl, {"teacher_mass": batch.mass.mean()}


            def policy_stats(batch):
                return {"policy_clip": batch.clipped.float().mean()}
            """,
            "pkg/train.py": """\
            import wandb

            from pkg.losses import get_loss_fn, policy_stats


            def step(batch, mode):
                loss_fn = get_loss_fn(mode)
                loss, stats = loss_fn(batch)
                stats.update({f"distill/{k[len('policy_'):]}": v for k, v in policy_stats(batch).items()})
                wandb.log({f"actor/{k}": v for k, v in stats.items()})
            """,
        },
        ["actor/teacher_mass"],
    ),
    # a helper maps every leaf of a nested collection (tensors to floats) and returns the same
    # structure: the dict's keys come back as they went in, whichever argument holds it
    "a dict mapped leaf by leaf keeps its keys": (
        {
            "pkg/convert.py": """\
            import torch
            from torch.utils._pytree import tree_map
            from lightning_utilities.core.apply_func import apply_to_collection


            def to_floats(data):
                return apply_to_collection(data, torch.Tensor, lambda t: t.item())


            def detached(data):
                return tree_map(lambda t: t.detach(), data)
            """,
            "pkg/report.py": """\
            import wandb

            from pkg.convert import detached, to_floats


            def publish(batch, rate):
                wandb.log(to_floats({"token_loss": batch.loss}))
                wandb.log(detached({"rate": rate}))
            """,
        },
        ["rate", "token_loss"],
    ),
    # a group of actor handles runs the method its caller names, the name a string argument;
    # what each actor's method returns comes back to the driver, which logs it
    "a method of the workers named by the string a driver passes": (
        {
            "pkg/worker.py": """\
            import ray


            @ray.remote
            class Learner:
                def update(self, coef=0.0):
                    return {"surrogate": 1.0, "penalty": coef}

                def evaluate(self):
                    return {"holdout_score": 0.5}

                def calibrate(self):
                    return {"calibration_gap": 0.1}
            """,
            "pkg/fleet.py": """\
            class Fleet:
                def __init__(self, handles):
                    self.handles = handles

                def run_each(self, method_name, *args, **kwargs):
                    refs = []
                    for handle in self.handles:
                        method = getattr(handle, method_name)
                        refs.append(method.remote(*args, **kwargs))
                    return refs

                def run_first(self, name):
                    return getattr(self.handles[0], name).remote()
            """,
            "pkg/driver.py": """\
            import ray
            import wandb

            from pkg.fleet import Fleet


            class Driver:
                def __init__(self, handles):
                    self.fleet = Fleet(handles)

                def step(self):
                    status = {}
                    for result in ray.get(self.fleet.run_each(method_name="update", coef=0.1)):
                        status.update(result)
                    wandb.log(status)

                def check(self):
                    self.fleet.run_first("evaluate")

                def settle(self):
                    refs = []
                    refs += self.fleet.run_each("calibrate")
                    wandb.log(ray.get(refs)[0])
            """,
        },
        ["calibration_gap", "penalty", "surrogate"],
    ),
    # a logger that puts a section before each name only when its caller names one: a caller's
    # section is in every key it logs, an empty one (or none) leaves the name bare, never "/name"
    "a section a caller may give, or leave empty": (
        {
            "pkg/board.py": """\
            from torch.utils.tensorboard import SummaryWriter


            class Board:
                def __init__(self, path):
                    self.writer = SummaryWriter(path)

                def scalars(self, values, step, section=""):
                    for name, value in values.items():
                        if section:
                            name = f"{section}/{name}"
                        self.writer.add_scalar(name, value, step)

                def pairs(self, values, step, group=""):
                    for name, value in values.items():
                        self.writer.add_scalar(f"{group}/{name}" if group else name, value, step)
            """,
            "pkg/train.py": """\
            from pkg.board import Board


            def run(loss, steps, board: Board):
                board.scalars({"token_loss": loss}, steps, section="fit")
                board.scalars({"wall": steps}, steps)
                board.pairs({"mask_loss": loss}, steps, group="holdout")
                board.pairs({"kept": steps}, steps, "")
            """,
        },
        ["fit/token_loss", "holdout/mask_loss", "kept", "wall"],
    ),
    # a front logger hands each call's dict and section on to every backend in a list its
    # constructor declares; each backend adds the section its caller's caller gave, per call
    "a section handed on to each backend of a declared list": (
        {
            "pkg/backends.py": """\
            from abc import ABC, abstractmethod

            from torch.utils.tensorboard import SummaryWriter


            class Backend(ABC):
                @abstractmethod
                def write(self, values, step, section=""):
                    ...


            class BoardBackend(Backend):
                def __init__(self):
                    self.writer = SummaryWriter("runs")

                def write(self, values, step, section=""):
                    for name, value in values.items():
                        if section:
                            name = f"{section}/{name}"
                        self.writer.add_scalar(name, value, step)


            class Front:
                def __init__(self):
                    self.backends: list[Backend] = []
                    self.backends.append(BoardBackend())

                def write(self, values, step, section=""):
                    for backend in self.backends:
                        backend.write(values, step, section)
            """,
            "pkg/loop.py": """\
            from pkg.backends import Front


            def train(loss, accuracy, seconds):
                front = Front()
                front.write({"kl_penalty": loss}, 1, section="fit")
                front.write({"top1": accuracy}, 1, section="holdout")
                front.write({"elapsed": seconds}, 1)
            """,
        },
        ["elapsed", "fit/kl_penalty", "holdout/top1"],
    ),
    # the engine holds the base class; an instance of a subclass runs the subclass's override,
    # which adds a key to what the base's method returns
    "a key a subclass's override adds to what its concrete base method returns": (
        {
            "pkg/models.py": """\
            class Model:
                def summarize(self, outputs):
                    return {"xent": sum(o.loss for o in outputs) / len(outputs)}


            class ExpertModel(Model):
                def summarize(self, outputs):
                    info = super().summarize(outputs)
                    info["imbalance"] = max(o.load for o in outputs)
                    return info
            """,
            "pkg/engine.py": """\
            import wandb

            from pkg.models import Model


            class Engine:
                def __init__(self, model: Model):
                    self.model = model

                def step(self, outputs):
                    info = self.model.summarize(outputs)
                    wandb.log(info)
            """,
        },
        ["imbalance", "xent"],
    ),
    # a name bound to an item of a dict is that item: what is put in it is put in the dict's item
    "a key put in a dict read out of another dict's item": (
        {
            "pkg/report.py": """\
            from typing import cast

            import wandb


            def gather(outputs):
                summary = {"scalars": {"xent": outputs.loss}, "samples": []}
                scalars = summary["scalars"]
                scalars["imbalance"] = outputs.load.max()
                return cast(dict, summary)


            def step(outputs):
                wandb.log(gather(outputs)["scalars"])
            """,
        },
        ["imbalance", "xent"],
    ),
    # an attribute annotated as a dict of instances: an item read by a key, or each of its
    # values, is an instance of that class, whose method's return is what is logged
    "a method of an item of a dict its annotation says holds instances": (
        {
            "pkg/meters.py": """\
            class Meter:
                def compute(self):
                    return {"samples_per_sec": self.count / self.seconds}
            """
            + DECOYS.format(method="compute"),
            "pkg/monitor.py": """\
            import wandb

            from pkg.meters import Meter


            class Monitor:
                def __init__(self):
                    self._meters: dict[str, Meter] = {}

                def on_step(self, stage):
                    meter = self._meters[stage]
                    wandb.log({f"{stage}-{k}": v for k, v in meter.compute().items()})

                def on_end(self):
                    for meter in self._meters.values():
                        wandb.log(meter.compute())
            """,
        },
        ["samples_per_sec", "{stage}-samples_per_sec"],
    ),
    # a key built with a string attribute of an object of a class another module defines: the
    # string that class's constructor stores there unless a caller passes another
    "a key joined by a string attribute of an object of another module's class": (
        {
            "pkg/meters.py": """\
            class Meter:
                def __init__(self, joiner: str = "."):
                    self.joiner = joiner
                    self.count = 0

                def compute(self):
                    return {f"device{self.joiner}rate": self.count, "elapsed": 1.0}
            """,
            "pkg/monitor.py": """\
            import wandb

            from pkg.meters import Meter


            class Monitor:
                def __init__(self):
                    self._meters: dict[str, Meter] = {}

                def report(self, stage):
                    meter = self._meters[stage]
                    values = meter.compute()
                    wandb.log({f"{stage}{meter.joiner}{k}": v for k, v in values.items()})
            """,
        },
        ["{stage}.device.rate", "{stage}.elapsed"],
    ),
    # a string an object's property returns, where the object's name says its class: every
    # class of that name, and each subclass, returns one of the strings the key is made with
    "a key joined by a string an object named for its class returns from a property": (
        _separated('"-"', "tracker"),
        ["Monitor.{hook}-gpu_util", "Monitor.{hook}/gpu_util"],
    ),
    # ... not where the name says no class of the project, or a subclass computes the string
    "a key part read from an object whose class its name does not say stays a placeholder": (
        _separated('"-"', "sink"),
        ["Monitor.{hook}{separator}gpu_util"],
    ),
    "a key part a subclass's property computes stays a placeholder": (
        _separated("str(self)", "tracker"),
        ["Monitor.{hook}{separator}gpu_util"],
    ),
    # ... as where the helper writes the key itself from the parts it is handed
    "a key a helper joins from a string an object named for its class returns": (
        {
            "pkg/base.py": """\
            class Tracker:
                @property
                def group_separator(self) -> str:
                    return "/"
            """,
            "pkg/monitor.py": """\
            import wandb


            def record(prefix, separator, value):
                wandb.log({f"{prefix}{separator}util": value})


            class Monitor:
                def on_end(self, trainer):
                    for tracker in trainer.trackers:
                        separator = tracker.group_separator
                        record("gpu", separator, 1.0)
            """,
        },
        ["gpu/util", "{prefix}{separator}util"],
    ),
    # a dataclass's field is what each call of its constructor sets: its default names no key
    "a key part read from a dataclass's field stays a placeholder": (
        {
            "pkg/options.py": """\
            from dataclasses import dataclass


            @dataclass
            class Options:
                run_tag: str = "baseline"

                def reset(self):
                    self.run_tag = "baseline"


            def summarize(batch):
                return {"xent": batch.loss}
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.options import Options, summarize


            def step(opts: Options, batch):
                wandb.log({f"{opts.run_tag}-{k}": v for k, v in summarize(batch).items()})
            """,
        },
        ["{run_tag}-xent"],
    ),
    # an attribute set to an instance or to None, two classes of the project having the method
    "a method of an attribute that holds an instance or None": (
        {
            "pkg/sinks.py": """\
            import wandb
            from torch.utils.tensorboard import SummaryWriter


            class HostedSink:
                def publish(self, step, logs):
                    wandb.log({f"train/{k}": v for k, v in logs.items()}, step=step)


            class BoardSink:
                def __init__(self):
                    self.writer = SummaryWriter("runs")

                def publish(self, step, logs):
                    for k, v in logs.items():
                        self.writer.add_scalar(f"board/{k}", v, step)
            """,
            "pkg/trainer.py": """\
            from pkg.sinks import BoardSink, HostedSink


            class Trainer:
                def __init__(self, hosted):
                    self.sink = HostedSink() if hosted else None

                def fit(self, step):
                    if self.sink is not None:
                        self.sink.publish(step, {"policy_loss": 1.0})
            """,
        },
        ["train/policy_loss"],
    ),
    # a nested dict handed to the project's own recursive flattening helper, written as
    # `dict(...)` with a call's result as one of its values, the result returned in a tuple;
    # a nested dict whose keys are not known names no key of its own
    "nested dicts flattened by the project's own helper": (
        {
            "pkg/trees.py": """\
            from collections.abc import MutableMapping


            def flatten(tree, prefix="", sep="/"):
                out = {}
                for key, value in tree.items():
                    name = prefix + sep + key if prefix else key
                    if isinstance(value, MutableMapping):
                        out.update(flatten(value, name, sep=sep))
                    else:
                        out[name] = value
                return out


            def spread(xs):
                return dict(mean=xs.mean(), width=xs.std())
            """,
            "pkg/loss.py": """\
            import wandb

            from pkg.trees import flatten, spread


            def ppo_loss(batch):
                stats = dict(
                    losses=dict(policy=batch.pg, value=batch.vf),
                    returns=spread(batch.ret),
                    heads={str(i): spread(q) for i, q in enumerate(batch.heads)},
                    clip_fraction=batch.cf,
                )
                return batch.pg + batch.vf, flatten(stats)


            def train(batch, step):
                loss, stats = ppo_loss(batch)
                wandb.log(stats, step=step)
            """,
        },
        ["clip_fraction", "losses/policy", "losses/value", "returns/mean", "returns/width"],
    ),
    # the separator a call passes to the flattening helper joins the keys, not its default; a
    # parameter that holds a value is one key, one that holds a caller's dict is a nested dict
    "a flattening helper's separator passed by its caller": (
        {
            "pkg/trees.py": """\
            def flatten(tree, prefix="", sep="_"):
                out = {}
                for key, value in tree.items():
                    name = f"{prefix}{sep}{key}" if prefix else key
                    if isinstance(value, dict):
                        out.update(flatten(value, name, sep=sep))
                    else:
                        out[name] = value
                return out
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.trees import flatten


            def log_step(lr, wps, loss, step):
                wandb.log(flatten({"optim": {"lr": lr}, "speed": {"wps": wps}}, sep="/"), step=step)
                wandb.log(flatten({"loss": {"total": loss}}), step=step)


            def log_losses(losses, step):
                wandb.log(flatten({"losses": losses}, sep="/"), step=step)


            def train(batch, step):
                log_losses({"policy": batch.pg, "value": batch.vf}, step)
            """,
        },
        ["loss_total", "losses/policy", "losses/value", "optim/lr", "speed/wps"],
    ),
    # a nested dict written out whose values are what methods of an object no file names
    # return (`loads.max().item()`): values, not dicts whose keys the flattening would join;
    # the helper keeps its pairs in a list and makes the dict of them at the end
    "values of a nested dict that a method of an unknown object returns": (
        {
            "pkg/trees.py": """\
            def flatten(tree, parent="", sep="/"):
                pairs = []
                for key, value in tree.items():
                    name = parent + sep + key if parent else key
                    if isinstance(value, dict):
                        pairs.extend(flatten(value, name, sep=sep).items())
                    else:
                        pairs.append((name, value))
                return dict(pairs)
            """,
            "pkg/loop.py": """\
            import wandb

            from pkg.trees import flatten


            def log_load(loads, step):
                stats = {"load": {"peak": loads.max().item(), "floor": loads.min().item()}, "spread": loads.std()}
                wandb.log(flatten(stats), step=step)
            """,
        },
        ["load/floor", "load/peak", "spread"],
    ),
    # a dict written out with a key, then filled from another dict and that key popped: the
    # loop over it reads what it holds then, not the keys its literal had
    "a dict written out then grown and popped": (
        {
            "pkg/step.py": """\
            import wandb


            def losses(batch):
                return {"policy_loss": batch.pg, "entropy": batch.ent}


            def step(batch):
                reduced = {"_count": batch.size}
                for k, v in losses(batch).items():
                    reduced[k] = v * 2
                count = reduced.pop("_count")
                wandb.log({f"train/{k}": v / count for k, v in reduced.items()})
            """,
        },
        ["train/entropy", "train/policy_loss"],
    ),
    # a loop over every key any dict of a list has, as a mean over ranks or steps takes them
    "keys of any of a list's dicts": (
        {
            "pkg/mean.py": """\
            import wandb


            def step_stats(batch):
                return {"policy_loss": batch.pg, "kl": batch.kl}


            def epoch(batches):
                rows = []
                for batch in batches:
                    rows.append(step_stats(batch))
                means = {}
                for k in set().union(*(row.keys() for row in rows)):
                    means[k] = sum(row.get(k, 0) for row in rows) / len(rows)
                wandb.log({f"epoch/{k}": v for k, v in means.items()})
            """,
        },
        ["epoch/kl", "epoch/policy_loss"],
    ),
    # `self.config.method.loss(...)`: the attribute a base class sets from an annotated
    # parameter, then the field that class declares, then a method only its subclass defines
    "a method reached through two attributes of declared classes": (
        {
            "pkg/configs.py": """\
            from dataclasses import dataclass


            @dataclass
            class MethodConfig:
                name: str


            @dataclass
            class ClipConfig(MethodConfig):
                def measure(self, logprobs):
                    return logprobs.sum(), {"approx_kl": logprobs.mean()}


            @dataclass
            class RunConfig:
                method: MethodConfig
            """
            + DECOYS.format(method="measure"),
            "pkg/base.py": """\
            from pkg.configs import RunConfig


            class BaseTrainer:
                def __init__(self, config: RunConfig):
                    self.config = config
            """,
            "pkg/ppo.py": """\
            import wandb

            from pkg.base import BaseTrainer


            class PPOTrainer(BaseTrainer):
                def step(self, logprobs):
                    loss, stats = self.config.method.measure(logprobs)
                    wandb.log(stats)
            """,
        },
        ["approx_kl"],
    ),
    # a dict handed to a record's constructor by keyword is what its field (a dataclass's) or
    # the attribute its `__init__` stores holds, wherever the record is read; so is what a
    # function puts in that field of a record it is handed
    "a dict a record's constructor is handed": (
        {
            "pkg/records.py": """\
            from dataclasses import dataclass


            @dataclass
            class Rollout:
                tokens: list
                info: dict


            class Episode:
                def __init__(self, steps, info):
                    self.steps = steps
                    self.info = info
            """,
            "pkg/make.py": """\
            from pkg.records import Episode, Rollout


            def make(sample):
                info = {"clip_ratio": sample.clipped}
                return Rollout(tokens=sample.tokens, info=info)


            def play(game):
                return Episode(game.steps, info={"episode_return": game.total})


            def enrich(rollout: Rollout):
                rollout.info["reward_std"] = rollout.tokens.std()
            """,
            "pkg/train.py": """\
            import wandb

            from pkg.records import Episode, Rollout


            def step(rollouts: list[Rollout], episodes: list[Episode]):
                metrics = {}
                for rollout in rollouts:
                    for k, v in rollout.info.items():
                        metrics[k] = v
                for episode in episodes:
                    metrics.update(episode.info)
                wandb.log({f"train/{k}": v for k, v in metrics.items()})
            """,
        },
        ["train/clip_ratio", "train/episode_return", "train/reward_std"],
    ),
    # keys named after the fields a record's class declares: a dataclass's `fields()`, a
    # pydantic model's `model_fields`; a loop that tests the name leaves which unsaid
    "keys named after a record's declared fields": (
        {
            "pkg/report.py": """\
            from dataclasses import dataclass, fields

            import wandb
            from pydantic import BaseModel


            @dataclass
            class ValMetrics:
                loss: float
                accuracy: float


            class Outputs(BaseModel):
                policy_loss: float
                entropy: float


            def validate(metrics: ValMetrics, out: Outputs, step):
                logged = {}
                for metric in [f.name for f in fields(ValMetrics)]:
                    logged[f"eval_{metric}"] = getattr(metrics, metric)
                for name in Outputs.model_fields:
                    logged[f"train_{name}"] = getattr(out, name)
                for f in fields(metrics):
                    if f.name == "loss":
                        continue
                    logged[f"kept_{f.name}"] = getattr(metrics, f.name)
                wandb.log(logged, step=step)
            """,
        },
        ["eval_accuracy", "eval_loss", "kept_{name}", "train_entropy", "train_policy_loss"],
    ),
    # a callee that pops a key from the dict it is handed and returns that dict: its caller
    # gets the dict without it (the result returned beside another value, in a tuple)
    "a key a callee pops from the dict it is handed": (
        {
            "pkg/shards.py": """\
            import wandb


            def shards(batch):
                return [{"partition": batch.idx, "rewards": batch.r}]


            def finish(shard):
                part = shard.pop("partition")
                shard["lengths"] = len(part)
                return shard


            def load(batch, rank):
                raw = shards(batch)
                data = raw[rank]
                return finish(data), rank


            def train(batch):
                data, rank = load(batch, 0)
                wandb.log({f"rollout/{k}": v for k, v in data.items()})
            """,
        },
        ["rollout/lengths", "rollout/rewards"],
    ),
    # `del d["k"]` takes the entry out, as `d.pop("k")` does
    "a key deleted from a dict before it is logged": (
        {
            "pkg/step.py": """\
            import wandb


            def step(batch):
                stats = {"loss": batch.loss, "sample_ids": batch.ids}
                del stats["sample_ids"]
                wandb.log(stats)
            """,
        },
        ["loss"],
    ),
    # an item of an attribute's dict, read by its key in one method and filled by that key
    # in another
    "an attribute's item a method fills by key": (
        {
            "pkg/trainer.py": """\
            import wandb


            class Trainer:
                def __init__(self):
                    self.logs = {"train": {}, "eval": {}}

                def step(self, batch):
                    self.logs["train"]["step_time"] = batch.seconds

                def evaluate(self, batch):
                    self.logs["eval"]["accuracy"] = batch.accuracy

                def flush(self):
                    wandb.log(self.logs["train"])
            """,
        },
        ["step_time"],
    ),
    # a front logger that extends its backends' own interface and hands each call on to every
    # backend: the backends' methods run, not the front's own again, and not a tracker's
    "a front logger that extends its backends' interface": (
        {
            "pkg/backends.py": BACKEND_INTERFACE
            + """\

            class Front(Backend):
                def __init__(self, board):
                    self.backends: list[Backend] = []
                    if board:
                        self.backends.append(Board())

                def log_metrics(self, metrics, step, prefix=""):
                    for backend in self.backends:
                        backend.log_metrics(metrics, step, prefix)
            """,
            "pkg/train.py": """\
            from pkg.backends import Front


            def train(board, loss):
                front = Front(board)
                front.log_metrics({"loss": loss}, 1, prefix="train")
            """,
        },
        ["train/loss"],
    ),
    # the front logger reaches the loop as a parameter nothing annotates, and more classes
    # define its method than the by-name fallback reads; but each is the one family's (an
    # interface, its backends, the front that extends it), so the object is one of theirs and the
    # section the backends put before each key is logged, not the tracker-named call's bare key
    "a front logger handed in unannotated, its method defined by one family alone": (
        {
            "pkg/backends.py": BACKEND_INTERFACE
            + """\


            class Lines(Backend):
                def __init__(self):
                    self.writer = SummaryWriter("lines")

                def log_metrics(self, metrics, step, prefix=""):
                    if prefix:
                        metrics = {f"{prefix}/{name}": value for name, value in metrics.items()}
                    for name, value in metrics.items():
                        self.writer.add_scalar(name, value, step)


            class Front(Backend):
                def __init__(self):
                    self.backends: list[Backend] = [Board(), Lines()]

                def log_metrics(self, metrics, step, prefix=""):
                    for backend in self.backends:
                        backend.log_metrics(metrics, step, prefix)
            """,
            "pkg/train.py": """\
            def train(logger, loss, seconds):
                logger.log_metrics({"loss": loss}, 1, prefix="train")
                logger.log_metrics({"step_time": seconds}, 1, prefix="timing/train")
            """,
        },
        ["timing/train/step_time", "train/loss"],
    ),
    # a forward reference written as a string, for an import made only under TYPE_CHECKING
    "a method of a parameter annotated with a string": (
        {
            "pkg/runner.py": """\
            class Runner:
                def summary(self):
                    return {"wall_seconds": 1.0}
            """
            + DECOYS.format(method="summary"),
            "pkg/hooks.py": """\
            from typing import TYPE_CHECKING

            import wandb

            if TYPE_CHECKING:
                from pkg.runner import Runner


            def on_end(runner: "Runner"):
                wandb.log(runner.summary())
            """,
        },
        ["wall_seconds"],
    ),
    # keywords a call passes that the callee's `**kwargs` takes, and a dict spread into them
    "keywords a function's **kwargs parameter takes, and a dict spread as keywords": (
        {
            "pkg/trainer.py": """\
            import wandb


            class Trainer:
                def record(self, step, **metrics):
                    wandb.log({f"train/{name}": value for name, value in metrics.items()}, step=step)

                def fit(self, batch, step):
                    loss, acc = self.model(batch)
                    self.record(step, loss=loss, acc=acc)
                    extra = {"grad_norm": self.clip()}
                    self.record(step, **extra)
            """,
        },
        ["train/acc", "train/grad_norm", "train/loss"],
    ),
    # a parameter bound again before a key is built from it: its placeholder is what it holds
    # now, which no caller's string fills (`hits` was listed, a key nothing logs)
    "a section a method builds from its parameter, bound again before the keys": (
        {
            "pkg/scores.py": """\
            import wandb


            class Score:
                def __init__(self, parts):
                    self.parts = parts

                def as_metrics(self, prefix="score"):
                    out = {f"{prefix}_total": sum(self.parts)}
                    prefix = f"{prefix}_{self.label()}" if prefix else self.label()
                    out[f"{prefix}_hits"] = 1.0
                    return out


            def report(score: Score):
                wandb.log(score.as_metrics(prefix="judge"))
            """,
        },
        ["judge_total"],
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_key_reaches_a_tracker_through_the_projects_own_code(case: str, tmp_path: Path) -> None:
    files, expected = CASES[case]
    write_project(tmp_path / "logged", {path: textwrap.dedent(text) for path, text in files.items()})
    assert _logged(tmp_path / "logged") == expected


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_nothing_is_logged_where_the_dict_never_reaches_a_tracker(case: str, tmp_path: Path) -> None:
    files, _ = CASES[case]
    quiet = {
        path: textwrap.dedent(text).replace(LOGGER, QUIET).replace("wandb.log(", "print(").replace("self.writer.add_scalar(", "print(")
        for path, text in files.items()
    }
    write_project(tmp_path / "quiet", quiet)
    assert _logged(tmp_path / "quiet") == []


POPPED = """\
import wandb

from pkg.stats import RAW_COUNTS, summarize


def step(batch, step):
    metrics = {"loss": batch.loss}
    metrics.update(summarize(batch))
    counts = metrics.pop(RAW_COUNTS, None)
    metrics.pop("ids")
    wandb.log(metrics, step=step)
    print(counts)
"""
SUMMARIZED = """RAW_COUNTS = "raw_counts"


def summarize(batch):
    return {"tokens": batch.tokens, RAW_COUNTS: batch.counts, "ids": batch.ids}
"""


def test_a_dict_returned_only_when_a_flag_is_passed_is_logged_only_by_calls_that_pass_it(tmp_path: Path) -> None:
    """`if raw: return {"samples": ...}` under a parameter off by default: a call that passes
    nothing for it gets the other return; one that passes it may get this one."""
    validate = (
        "import wandb\n\n\n"
        "class Trainer:\n"
        "    def validate(self, batches, raw=False):\n"
        "        scores = [b.score() for b in batches]\n"
        "        if raw:\n"
        "            return {'sample_scores': scores, 'sample_ids': [b.uid for b in batches]}\n"
        "        return {'val/score': sum(scores) / len(scores)}\n\n"
        "    def fit(self, batches):\n"
        "        wandb.log(self.validate(batches))\n"
    )
    write_project(tmp_path / "default", {"pkg/trainer.py": validate})
    write_project(tmp_path / "passed", {"pkg/trainer.py": validate.replace("self.validate(batches))", "self.validate(batches, raw=True))")})
    write_project(
        tmp_path / "by_position", {"pkg/trainer.py": validate.replace("self.validate(batches))", "self.validate(batches, True))")}
    )
    assert _logged(tmp_path / "default") == ["val/score"]
    assert _logged(tmp_path / "passed") == ["sample_ids", "sample_scores", "val/score"]
    assert _logged(tmp_path / "by_position") == ["sample_ids", "sample_scores", "val/score"]
    spread = validate.replace("self.validate(batches))", "self.validate(*(batches, True)))")  # a starred argument may pass it
    write_project(tmp_path / "spread", {"pkg/trainer.py": spread})
    assert _logged(tmp_path / "spread") == ["sample_ids", "sample_scores", "val/score"]


def test_a_key_popped_from_a_dict_before_it_is_logged_is_not_logged(tmp_path: Path) -> None:
    """`metrics.pop(KEY)` takes the entry out of the dict, whether a callee put it there or the
    function itself; what the dict still holds when a sink gets it is what is logged."""
    write_project(tmp_path / "popped", {"pkg/loop.py": POPPED, "pkg/stats.py": SUMMARIZED})
    kept = POPPED.replace('    counts = metrics.pop(RAW_COUNTS, None)\n    metrics.pop("ids")\n', "    counts = None\n")
    write_project(tmp_path / "kept", {"pkg/loop.py": kept, "pkg/stats.py": SUMMARIZED})
    assert _logged(tmp_path / "popped") == ["loss", "tokens"]
    assert _logged(tmp_path / "kept") == ["ids", "loss", "raw_counts", "tokens"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "def flat(d, parent='', sep='/'):\n out = {}\n for k, v in d.items():\n  key = parent + sep + k if parent else k\n"
            "  if isinstance(v, dict):\n   out.update(flat(v, key, sep=sep))\n  else:\n   out[key] = v\n return out",
            ("d", "{sep}"),
        ),
        (
            "def flat(d, parent=''):\n out = {}\n for k, v in d.items():\n  if isinstance(v, dict):\n"
            "   out.update(flat(v, f'{parent}.{k}' if parent else k))\n  else:\n   out[k] = v\n return out",
            ("d", "."),
        ),
        (
            "def flat(self, params, delimiter='-', parent_key=''):\n r = {}\n for k, v in params.items():\n"
            "  new = parent_key + delimiter + str(k) if parent_key else k\n  if isinstance(v, dict):\n"
            "   r = {**r, **self.flat(v, parent_key=new, delimiter=delimiter)}\n return r",
            ("params", "{delimiter}"),
        ),
        # not recursive, or recursive on something other than the loop's value, or no separator
        ("def flat(d, parent=''):\n out = {}\n for k, v in d.items():\n  out[f'{parent}/{k}'] = v\n return out", None),
        ("def flat(d, parent=''):\n for k, v in d.items():\n  flat(d, f'{parent}/{k}')", None),
        ("def flat(d, parent=''):\n for k, v in d.items():\n  flat(v, k)", None),
    ],
    ids=["binop-default-sep", "fstring", "method-str-key", "no-recursion", "same-dict", "no-joined-key"],
)
def test_a_flattening_helper_is_told_by_its_shape(source: str, expected: tuple[str, str] | None) -> None:
    """A function that calls itself on each nested dict, handing on the key so far joined to
    the loop's key by a separator, flattens; the separator is what joins them (a parameter's
    placeholder where it is one, which each call fills with what it passes or the default)."""
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert flattened_param(node, tuple(a.arg for a in node.args.args)) == expected


GROWN = """\
def summarize(values, quantile):
    stats = {}
    if values.any():
        stats = {"low": values.min(), "high": values.max()}
        if quantile:
            stats["cut"] = values.quantile(quantile)
    shown = {}
    for name, value in stats.items():
        shown[f"spread/{name}"] = value
    return shown
"""


def test_a_dict_written_out_then_given_a_key_written_out_names_all_its_keys(tmp_path: Path) -> None:
    """A loop over a dict written out takes its literal's keys, and a key written out that a
    statement adds later (`stats["cut"] = x`): the keys it builds are shaped like metric keys,
    inventoried where they are written whether or not a tracker is seen to get them."""
    write_project(tmp_path / "grown", {"pkg/spread.py": GROWN})
    assert _logged(tmp_path / "grown") == ["spread/cut", "spread/high", "spread/low"]


def test_a_flattened_dict_keys_each_value_by_every_key_above_it() -> None:
    """Three levels: the dicts at `a` and `a/b` are no keys of their own, their values are."""
    span = Span("m.py", 1, 1, 1, 2)
    entry = lambda key: MetricsEntry(key, span, frozenset())  # noqa: E731
    bag = Bag(
        (entry("a"), entry("top")),
        items=(Item(("a",), (entry("b"), entry("x"))), Item(("a", "b"), (entry("y"),)), Item(("[]",), (entry("row"),))),
    )
    assert sorted(e.key for e in flattened(bag, "/").entries) == ["a/b/y", "a/x", "top"]


BRANCHES = """\
import wandb
from torch.utils.tensorboard import SummaryWriter


class Evaluator:
    def __init__(self):
        self.writer = SummaryWriter("runs")

    def report(self, step, hosted):
        logs = {"val_loss": 1.0}
        if hosted:
            logs = {f"eval/{k}": v for k, v in logs.items()}
            wandb.log(logs)
        else:
            for k, v in logs.items():
                self.writer.add_scalar(f"val/{k}", v, step)
        if step:
            last = {"final/loss": 1.0}
        else:
            last = {"first/loss": 1.0}
        wandb.log(last)
"""


def test_an_else_branch_sees_a_dict_as_it_was_before_the_if_branch_rebound_it(tmp_path: Path) -> None:
    """The `else` of an `if` that rebinds a name runs instead of that branch: there the name
    holds what it held before the `if`; after both, either branch's."""
    write_project(tmp_path / "branches", {"pkg/report.py": BRANCHES})
    assert _logged(tmp_path / "branches") == ["eval/val_loss", "final/loss", "first/loss", "val/val_loss"]


RENAMED = """\
import wandb

from pkg.stats import summarize


def step(batch, step):
    stats = summarize(batch)
    for name in ["tokens", "ids"]:
        value = stats.pop(name)
        stats[f"train/{name}"] = value
    wandb.log(stats, step=step)
"""


def test_a_key_popped_from_what_a_call_returned_is_logged_only_under_its_new_name(tmp_path: Path) -> None:
    """A name bound to a call's result holds the dict the call returns: what it pops before a
    sink gets it is not logged under the popped key (here, only as put back under another)."""
    write_project(tmp_path / "renamed", {"pkg/loop.py": RENAMED, "pkg/stats.py": SUMMARIZED})
    assert _logged(tmp_path / "renamed") == ["raw_counts", "train/ids", "train/tokens"]


def test_a_method_named_like_a_trackers_that_is_the_projects_own_logs_what_it_logs(tmp_path: Path) -> None:
    """`self.board.log(metrics)` is a tracker's `log` only where `Board.log` is no method of the project."""
    loop = "from pkg.tracking import Tracker\n\n\nclass Loop:\n    def __init__(self):\n        self.board = Tracker()\n\n    def step(self):\n        self.board.log({'loss': 1.0})\n"
    own = QUIET.replace("def publish(self, scalars, step)", "def log(self, scalars)").replace("print(scalars, step)", "print(scalars)")
    write_project(tmp_path / "own", {"pkg/tracking.py": own, "pkg/loop.py": loop})
    write_project(tmp_path / "other", {"pkg/loop.py": loop.replace("from pkg.tracking import Tracker", "from vendor import Tracker")})
    assert _logged(tmp_path / "own") == []
    assert _logged(tmp_path / "other") == ["loss"]


def test_an_object_handed_in_is_a_trackers_where_one_class_alone_defines_the_method(tmp_path: Path) -> None:
    """`wandb_writer.log(stats, step)` on a parameter nothing annotates is wandb's, although the
    project's timers class has a `log` of its own; an interface with two implementations of
    `log` (the family of `_family`) is the object's instead, and the keys are theirs."""
    timers = "class Timers:\n    def log(self, names, step):\n        print(names, step)\n"
    loop = "def record(wandb_writer, rate):\n    wandb_writer.log({'throughput/tokens_per_sec': rate}, 1)\n"
    family = (
        "from abc import ABC, abstractmethod\n\nimport wandb\n\n\n"
        "class Sink(ABC):\n    @abstractmethod\n    def log(self, stats, step):\n        ...\n\n\n"
        "class Cloud(Sink):\n    def log(self, stats, step):\n        wandb.log({f'run/{k}': v for k, v in stats.items()}, step=step)\n\n\n"
        "class Console(Sink):\n    def log(self, stats, step):\n        print(stats, step)\n"
    )
    write_project(tmp_path / "one", {"pkg/timers.py": timers, "pkg/loop.py": loop})
    write_project(tmp_path / "family", {"pkg/sinks.py": family, "pkg/loop.py": loop})
    assert _logged(tmp_path / "one") == ["throughput/tokens_per_sec"]
    assert _logged(tmp_path / "family") == ["run/throughput/tokens_per_sec"]


def test_records_handed_to_a_familys_method_are_read_as_the_tracker_rule_says(tmp_path: Path) -> None:
    """A list of (name, value, step) records passed to `monitor.write_events` stays the monitor
    rule's, although a family of the project's monitors defines the method: on an object nothing
    names, and where a front hands them on to the monitor it was handed. The project-wide step
    follows dicts into methods, not records."""
    monitors = (
        "from torch.utils.tensorboard import SummaryWriter\n\n\n"
        "class Monitor:\n    def write_events(self, event_list):\n        pass\n\n\n"
        "class Board(Monitor):\n    def __init__(self):\n        self.writer = SummaryWriter()\n\n"
        "    def write_events(self, event_list):\n        for event in event_list:\n            self.writer.add_scalar(*event)\n\n\n"
        "class Lines(Monitor):\n    def write_events(self, event_list):\n        print(event_list)\n\n\n"
        "class Table(Monitor):\n    def write_events(self, event_list):\n        print(*event_list)\n\n\n"
        "class Remote(Monitor):\n    def write_events(self, event_list):\n        print(len(event_list))\n\n\n"
        "class Master(Monitor):\n    def __init__(self, board):\n        self.board = board\n\n"
        "    def write_events(self, event_list):\n        self.board.write_events(event_list)\n"
    )
    loop = (
        "from pkg.monitors import Master\n\n\n"
        "def record(monitor, loss, samples):\n    monitor.write_events([('Train/Samples/train_loss', loss, samples)])\n\n\n"
        "class Engine:\n    def __init__(self, board):\n        self.monitor = Master(board)\n\n"
        "    def evaluate(self, loss, samples):\n        self.monitor.write_events([('Train/Samples/eval_loss', loss, samples)])\n"
    )
    write_project(tmp_path, {"pkg/monitors.py": monitors, "pkg/loop.py": loop})
    assert _logged(tmp_path) == ["Train/Samples/eval_loss", "Train/Samples/train_loss"]


def test_a_call_that_passes_a_keyword_the_projects_method_lacks_is_the_trackers(tmp_path: Path) -> None:
    """`self.writer.log(stats, commit=True)` on an object no file tells the class of may reach the
    project's only `log`; it cannot where that method takes no `commit`: it is the tracker's."""
    timers = "class Timers:\n    def log(self, names, normalizer=1.0):\n        print(names, normalizer)\n"
    engine = (
        "class Engine:\n    def __init__(self, writer):\n        self.writer = writer\n\n"
        "    def stats(self, seconds):\n        return {'step_seconds': seconds}\n\n"
        "    def report(self, seconds):\n        self.writer.log(self.stats(seconds), commit=True)\n"
    )
    write_project(tmp_path / "other", {"pkg/timers.py": timers, "pkg/engine.py": engine})
    takes = timers.replace("normalizer=1.0)", "normalizer=1.0, **options)")
    write_project(tmp_path / "own", {"pkg/timers.py": takes, "pkg/engine.py": engine})
    assert _logged(tmp_path / "other") == ["step_seconds"]
    assert _logged(tmp_path / "own") == []


def test_a_key_a_caller_prefixes_is_logged_only_as_prefixed(tmp_path: Path) -> None:
    """A dict literal's key shaped like a metric key stands for itself only until the
    project-wide step finds where the dict is logged, and under which key."""
    stats = 'def reward_stats(values):\n    return {"reward/mean": sum(values) / len(values)}\n'
    loop = (
        "import wandb\n\nfrom pkg.stats import reward_stats\n\n\ndef step(values):\n"
        '    wandb.log({f"rollout/{key}": value for key, value in reward_stats(values).items()})\n'
    )
    write_project(tmp_path / "prefixed", {"pkg/stats.py": stats, "pkg/loop.py": loop})
    write_project(tmp_path / "unseen", {"pkg/stats.py": stats})
    assert _logged(tmp_path / "prefixed") == ["rollout/reward/mean"]
    assert _logged(tmp_path / "unseen") == ["reward/mean"]  # where no sink is seen, the key stands for itself


def test_init_drafts_every_key_the_fixture_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixture(FIXTURES / "inventory_dataflow", tmp_path / "project", "metrics.yaml", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    assert invoke("init", ".").exit_code == 0
    drafted = yaml.safe_load((tmp_path / "project" / "metrics.yaml").read_text(encoding="utf-8"))["metrics"]
    assert sorted(drafted) == [
        "grad_norm",
        "lengths/max",
        "lengths/mean",
        "lr",
        "perf/step_seconds",
        "perf/tokens_per_sec",
        "rollout/reward",
        "time/forward",
        "train/loss",
    ]


def test_init_drafts_a_key_a_table_of_names_puts_a_measurement_under(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`for name, total in {"kl": "kl_sum"}.items(): out[name] = sums[total] / count`: the
    key holds the quotient, a measurement, not the table's text; where a loop puts text under
    each name (a label), there is nothing to draft."""
    finalize = (
        "import wandb\n\n\n"
        "def finalize(sums, count):\n"
        "    out = {}\n"
        "    names = {'kl1': 'kl1_sum', 'kl3': 'kl3_sum'}\n"
        "    for name, total in names.items():\n"
        "        out[name] = sums[total] / count if count > 0 else 0.0\n"
        "    wandb.log({f'policy/{k}': v for k, v in out.items()})\n"
    )
    labels = finalize.replace("sums[total] / count if count > 0 else 0.0", "f'{total} over {count}'")
    assert _drafted(tmp_path, monkeypatch, finalize) == ["policy/kl1", "policy/kl3"]
    assert _drafted(tmp_path, monkeypatch, labels) == []


def test_init_drafts_the_keys_of_lists_a_caller_averages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper returns each score's per-sample list; the caller logs their means. The keys
    hold measurements there, not the lists the helper returned; logged as lists, nothing."""
    scores = (
        "import numpy as np\nimport wandb\n\n\n"
        "def per_sample(results):\n"
        "    return {'reward': [r.reward for r in results], 'length': [len(r.text) for r in results]}\n\n\n"
        "def report(results, step):\n"
        "    wandb.log({f'eval/{k}': np.mean(v) for k, v in per_sample(results).items()}, step=step)\n"
    )
    assert _drafted(tmp_path, monkeypatch, scores) == ["eval/length", "eval/reward"]
    assert _drafted(tmp_path, monkeypatch, scores.replace("np.mean(v)", "v")) == []


def _drafted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> list[str]:
    """The keys `init` drafts for a project of one file."""
    folder = tmp_path / f"project{len(list(tmp_path.iterdir()))}"
    write_project(folder, {"pkg/code.py": text})
    monkeypatch.chdir(folder)
    assert invoke("init", ".").exit_code == 0
    return sorted(yaml.safe_load((folder / "metrics.yaml").read_text(encoding="utf-8"))["metrics"] or {})


SINK_EXAMPLES = yaml.safe_load((rules_dir() / "sinks.yaml").read_text(encoding="utf-8"))["examples"]


@pytest.mark.parametrize("example", SINK_EXAMPLES, ids=[e["call"] for e in SINK_EXAMPLES])
def test_rule_file_example(example: dict[str, object]) -> None:
    """Each call of rules/sinks.yaml's examples logs exactly the keys it lists."""
    source = f"{example.get('imports', '')}\n\n\ndef report(self, loss, lr, acc, f1, reward, samples, runtime, accuracy, step, run, client, x, probs, values):\n    {example['call']}\n"
    found = python.extract("t.py", source.encode()).keys
    assert sorted(use.key for use in found) == sorted(example["logs"])  # type: ignore[call-overload]


def test_the_sink_examples_show_both_sides() -> None:
    assert any(e["logs"] for e in SINK_EXAMPLES) and any(not e["logs"] for e in SINK_EXAMPLES)


def test_the_calls_that_write_a_json_line_are_the_rules_not_the_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A serialiser added to rules/sinks.yaml's JSON-lines entry (here ujson's dumps) makes a
    record written with it a logged one; without it, the same write logs nothing."""
    source = b"import ujson\n\n\ndef report(f, loss):\n    f.write(ujson.dumps({'loss': loss}) + '\\n')\n"
    assert python.extract("t.py", source).keys == ()
    shipped = sinks._shipped()
    lines = sinks.LineWriters(shipped.lines.dumpers, shipped.lines.serialisers | {"ujson.dumps"})
    monkeypatch.setattr(sinks, "_shipped", lambda: sinks.Sinks(shipped.functions, shipped.methods, shipped.options, lines))
    sinks.sinks.cache_clear()
    try:
        assert [use.key for use in python.extract("t.py", source).keys] == ["loss"]
    finally:
        sinks.sinks.cache_clear()


@pytest.mark.parametrize(
    ("shapes", "problem"),
    [
        ("serialisers: [json.dumps]\n    shapes: [{mapping: 0}]", "4:5: 'serialisers' are for a sink whose shapes are all 'line_record'"),
        ("shapes: [{mapping: 0, description: 1}]", "4:27: a 'description' belongs to a shape with a 'key'"),
    ],
)
def test_a_sink_the_walk_cannot_read_as_written_is_a_rules_error(shapes: str, problem: str) -> None:
    text = f"sinks:\n  - says: a tracker\n    methods: [log]\n    {shapes}\n    source: here\n"
    root, problems = marked_yaml.load(text, "sinks.yaml", shipped=True)
    reader = NodeReader("sinks.yaml")
    assert root is not None and not problems
    sinks._read(reader, root)
    assert [str(found) for found in reader.problems] == [f"sinks.yaml:{problem}"]


def test_sources_and_explain_metric_say_what_logs_a_key_and_through_which_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "inventory_dataflow")
    listed = invoke("sources", "--keys", ".", "--no-cache").stdout.splitlines()
    assert (
        "train/loss\tlogged\ttinytrain/loop.py:19\ta TensorBoard SummaryWriter's add_scalar (tinytrain/tracking.py:13), from tinytrain.loop.Trainer.step"
        in listed
    )
    assert (
        "lengths/mean\tlogged\ttinytrain/stats.py:6\ta TensorBoard SummaryWriter's add_scalar (tinytrain/tracking.py:13), from tinytrain.stats.summary"
        in listed
    )
    explained = invoke("explain-metric", "perf/step_seconds", ".", "--no-cache").stdout
    assert "tinytrain/loop.py:25  by wandb's log (tinytrain/tracking.py:30), from tinytrain.tracking.Buffer.record" in explained


CLOCKS = """\
from torch.utils.tensorboard import SummaryWriter


class Clocks:
    def __init__(self):
        self.spent = {}

    def _longest(self, names):
        return {name: self.spent.get(name, 0.0) for name in names}

    def write(self, names, writer, step):
        longest = self._longest(names)
        for name in longest:
            writer.add_scalar(name + "-time", longest[name], step)
"""
PHASES = 'SHOWN_PHASES = [\n    "rollout",\n    "update",\n]\nHIDDEN = ["idle"]\n'
REPORT = """\
from pkg.clocks import Clocks
from pkg.phases import SHOWN_PHASES

OWN_PHASES = ("sync",)


def report(clocks: Clocks, writer, step):
    shown = ["forward"]
    shown.extend(SHOWN_PHASES)
    clocks.write(shown, writer, step)
    clocks.write(OWN_PHASES, writer, step)
"""


def test_a_module_level_list_of_names_handed_to_a_logger_names_its_keys(tmp_path: Path) -> None:
    """A list of names written once at module level, in this module or imported from another,
    is what a logger that keys its values by those names logs; a list nobody hands to one
    names nothing, nor does a logger that only prints."""
    files = {"pkg/clocks.py": CLOCKS, "pkg/phases.py": PHASES, "pkg/report.py": REPORT}
    write_project(tmp_path / "logged", files)
    printed = CLOCKS.replace('writer.add_scalar(name + "-time", longest[name], step)', 'print(name + "-time", longest[name], step)')
    write_project(tmp_path / "printed", {**files, "pkg/clocks.py": printed})
    assert _logged(tmp_path / "logged") == ["forward-time", "rollout-time", "sync-time", "update-time"]
    assert _logged(tmp_path / "printed") == []


def test_a_timer_picked_at_import_fills_a_dict_only_where_every_choice_fills_it(tmp_path: Path) -> None:
    """A name a package picks among the project's definitions at import time (fixtures/
    inventory_relay) is read as each of them: where one of them leaves the dict alone, the
    call fills it with nothing metriclint can name."""
    project = copy_fixture(FIXTURES / "inventory_relay", tmp_path / "project", "metrics.yaml", "expected.txt")
    assert _logged(project) == ["seconds/load", "seconds/old_logprobs", "seconds/update", "train/loss"]
    marked = project / "steps" / "clocks" / "marked.py"
    marked.write_text(
        marked.read_text(encoding="utf-8").replace("    yield from accumulate(label, into)\n", "    yield\n"), encoding="utf-8"
    )
    assert _logged(project) == ["train/loss"]


def test_a_label_a_timer_is_given_names_no_value_but_a_name_a_logger_is_given_does(tmp_path: Path) -> None:
    """`seconds/old_logprobs` of fixtures/inventory_relay times a stage its caller labels: the
    docstrings of parameters named `old_logprobs` speak of log-probabilities, not of it, so
    their disagreement is no finding of the metric. A logger handed the value with its name
    (`record("old_logprobs", value)`) logs that value under it: the same docstrings speak for it."""
    project = copy_fixture(FIXTURES / "inventory_relay", tmp_path / "timed", "expected.txt")

    def contradictions(root: Path) -> list[tuple[str, str]]:
        report = json.loads(invoke("check", str(root), "--format", "json", "--no-cache").stdout)
        return [(f["rule"], f["metric"]) for f in report["findings"] if f["rule"] != "ML004"]

    assert contradictions(project) == []
    run = project / "steps" / "run.py"
    run.write_text(
        run.read_text(encoding="utf-8")
        + '\n\ndef record(name, value):\n    wandb.log({f"seconds/{name}": value})\n\n\ndef score(model, batch):\n    record("old_logprobs", model.score(batch))\n',
        encoding="utf-8",
    )
    assert contradictions(project) == [("ML002", "seconds/old_logprobs")]


def test_a_helper_that_fills_a_dict_by_calling_itself_adds_no_keys_of_its_own_template(tmp_path: Path) -> None:
    """A helper that recurses into nested outputs, naming each level after the last
    (`self.describe(stats, f"{label}_{i}", ...)`), fills the dict through another helper with
    its own template: its recursive call is no caller that fills the template again (each
    level would add `_{i}` once more, up to the depth the project-wide step follows)."""
    root = tmp_path / "project"
    (root / "probe").mkdir(parents=True)
    (root / "probe" / "__init__.py").write_text("", encoding="utf-8")
    (root / "probe" / "tracking.py").write_text(
        "import wandb\n\n\nclass Tracker:\n    def log_metrics(self, metrics):\n        wandb.log(metrics)\n", encoding="utf-8"
    )
    (root / "probe" / "hooks.py").write_text(
        textwrap.dedent(
            """\
            from probe.tracking import Tracker


            class Probe:
                def on_forward(self, tracker: Tracker, module, outputs):
                    name = self.names[module]
                    stats = {}
                    for i, out in enumerate(outputs):
                        self.describe(stats, name, f"_out.{i}", out)
                    tracker.log_metrics(stats)

                def describe(self, stats: dict, label: str, suffix: str, part):
                    if isinstance(part, (list, tuple)):
                        for i, inner in enumerate(part):
                            self.describe(stats, f"{label}_{i}", suffix, inner)
                        return
                    self.record(stats, label, suffix, part)

                def record(self, stats: dict, label: str, suffix: str, part):
                    stats[f"outputs/mean/{label}{suffix}"] = part.mean().item()
            """
        ),
        encoding="utf-8",
    )
    assert _logged(root) == ["outputs/mean/{label}_out.{i}"]


def test_a_loop_key_tested_against_names_stands_for_those_names_in_the_branch_and_the_rest_in_the_other(tmp_path: Path) -> None:
    """`if key in PER_DEVICE:` in a loop over every rank's dict: the branch keys those entries
    per rank, the other branch the rest as they are; neither makes the other's keys."""
    root = tmp_path / "project"
    (root / "usage").mkdir(parents=True)
    (root / "usage" / "__init__.py").write_text("", encoding="utf-8")
    (root / "usage" / "probe.py").write_text(
        textwrap.dedent(
            """\
            import wandb

            PER_DEVICE = ["device_busy", "device_heat"]


            def sample(reader):
                readings = {}
                readings["device_busy"] = reader.busy()
                readings["device_heat"] = reader.heat()
                readings["host_load"] = reader.load()
                return readings


            def publish(reader, gather_all):
                mine = sample(reader)
                every = gather_all(mine)
                out = {}
                for rank, readings in enumerate(every):
                    for key, value in readings.items():
                        if key in PER_DEVICE:
                            out[f"{key}_rank_{rank}"] = value
                        else:
                            out[key] = value
                wandb.log(out)
            """
        ),
        encoding="utf-8",
    )
    assert _logged(root) == ["device_busy_rank_{rank}", "device_heat_rank_{rank}", "host_load"]


NAMED_BY_DEFAULT = """\
import wandb


class Sink:
    def log_rows(self, rows, name="Table"):
        wandb.log({name: rows})
"""


@pytest.mark.parametrize(
    ("caller", "expected"),
    [("", []), ("\n\ndef step(rows):\n    sink = Sink()\n    sink.log_rows(rows)\n", ["Table"])],
    ids=["no caller", "a caller leaves the default"],
)
def test_a_default_name_for_the_whole_key_names_a_metric_only_where_a_call_leaves_it(
    caller: str, expected: list[str], tmp_path: Path
) -> None:
    """A key that is a parameter alone (`{name: rows}`) is named by the calls: a method no call
    reaches (a logger called through a base class's dispatch) logs nothing one can name, although
    its parameter has a default ("Table"); a default section (fixtures/inventory_default_prefixes)
    names the metric's family, and is filled."""
    write_project(tmp_path / "p", {"pkg/sink.py": NAMED_BY_DEFAULT + caller})
    assert _logged(tmp_path / "p") == expected


TABLE_ROWS = """\
import wandb

CORPORA = {"acme-labs/chat-corpus": {"split": "train"}, "acme-labs/math_set": {"split": "test"}}
CONVERTERS = {"acme-labs/chat-corpus": lambda row: row["messages"]}
SHARDS = {"acme-labs/math_set": ["part-0", "part-1"]}


def pass_stats(loss):
    return {"prep/loss": loss, "prep/tokens": 0}


def report(sizes):
    wandb.log({"prep/sizes": {"train": sizes[0]}})
"""


def test_a_key_shaped_name_over_a_table_row_stands_for_no_metric(tmp_path: Path) -> None:
    """A dict literal's key shaped like a metric key stands for itself where no sink is seen only
    over a value that may be a measurement: a hub id over its loading options, a converter or
    a list of shards is a row of a table. A sink that logs such a dict still logs its key."""
    write_project(tmp_path / "rows", {"prep/sources.py": TABLE_ROWS})
    assert _logged(tmp_path / "rows") == ["prep/loss", "prep/sizes", "prep/tokens"]


SIBLING_STEPS = """\
import wandb


class Engine:
    def step(self, batch):
        raise NotImplementedError

    def run(self, batch):
        wandb.log(self.step(batch))


class Sharded(Engine):
    def step(self, batch):
        return {"sharded_wait": 1.0}


class Fused(Engine):
    def step(self, batch):
        return {"fused_wait": 1.0}


class Offloaded(Engine):
    def step(self, batch):
        return {"offloaded_wait": 1.0}


class Pipelined(Engine):
    def step(self, batch):
        return {"pipelined_wait": 1.0}


class Replay(Engine):
    def replay(self, batch):
        wandb.log({f"replay/{k}": v for k, v in self.step(batch).items()})
"""


def test_a_subclass_that_leaves_a_method_abstract_runs_none_of_its_siblings_definitions(tmp_path: Path) -> None:
    """`self.step()` in a subclass that neither defines nor inherits a working `step` runs a
    definition of its own subclasses only: the base's other subclasses are other objects. The
    base's own call runs each of them."""
    write_project(tmp_path / "steps", {"engines.py": SIBLING_STEPS})
    assert _logged(tmp_path / "steps") == ["fused_wait", "offloaded_wait", "pipelined_wait", "sharded_wait"]


MODULE_TABLES = """\
import wandb

MIXTURE = {"acme-labs/math_set": {"acme-labs/math_set": 1.0}, "chat": {"acme-labs/chat-corpus": 0.5}}


class Tokens:
    IDS = {"<img>": 259, "</img>": 261}


def pass_stats(loss):
    ends = {"</img>": 261}
    return {"prep/loss": loss, "prep/tokens": len(ends)}


def report():
    wandb.log({"prep/weights": MIXTURE["chat"]["acme-labs/chat-corpus"]})
"""


def test_a_module_table_and_a_markup_token_stand_for_no_metric(tmp_path: Path) -> None:
    """A key shaped like a metric key in a dict written at a module's or class's top level is a
    row of a table (a dataset's weight in a mixture), logged only where a sink is seen to log
    the dict; a markup token (`</img>`) is no metric key anywhere."""
    write_project(tmp_path / "tables", {"prep/mixture.py": MODULE_TABLES})
    assert _logged(tmp_path / "tables") == ["prep/loss", "prep/tokens", "prep/weights"]


WINDOWED = """\
from collections import defaultdict

from transformers import Trainer


class WindowTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._window = {"fit": defaultdict(list), "check": defaultdict(list)}
        self._totals = {"fit": {}, "check": {}}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        phase = "fit" if model.training else "check"
        out = model(**inputs)
        self._window[phase]["reward/spread_max"].append(out.rewards.max().item())
        self._totals[phase]["seen_rows"] = len(out.rewards)
        self._totals[phase]["kept_tokens"] += out.kept
        return out.loss

    def log(self, logs, start_time=None):
        phase = "fit" if self.model.training else "check"
        averaged = {name: sum(got) / len(got) for name, got in self._window[phase].items()}
        averaged.update(self._totals[phase])
        if phase == "check":
            averaged = {f"check_{name}": value for name, value in averaged.items()}
        super().log({**logs, **averaged}, start_time)
        self._window[phase].clear()
"""


@pytest.mark.parametrize(
    ("handed", "expected"),
    [
        (
            "super().log(",
            ["check_kept_tokens", "check_reward/spread_max", "check_seen_rows", "kept_tokens", "reward/spread_max", "seen_rows"],
        ),
        ("print(", []),
    ],
    ids=["handed to the Trainer's log", "printed only"],
)
def test_keys_put_in_a_dict_of_dicts_by_a_variable_index_are_logged_where_that_dict_is(
    handed: str, expected: list[str], tmp_path: Path
) -> None:
    """`self._window[phase][name].append(v)` (or `= v`, `+= v`) in one method, and in another
    `self._window[phase].items()` averaged, re-keyed and handed to a sink: the keys are those put
    under any index, each as the re-keying makes it (`check_{name}` filled, not left a template).
    Where the dict is only printed, nothing is logged."""
    write_project(tmp_path / "p", {"pkg/trainer.py": WINDOWED.replace("super().log(", handed)})
    assert _logged(tmp_path / "p") == expected


DELEGATING = """\
class Loop:
    def log_metrics(self, metrics, step=None):
        \"\"\"Hands the step's values to whichever logger the loop was given.\"\"\"
        self.logger.log_metrics(metrics, step=step)

    def run(self, batches):
        for step, batch in enumerate(batches):
            self.log_metrics({"loss": batch.loss}, step)
"""


def test_a_method_named_like_a_trackers_logs_through_its_loggers_method_of_that_name(tmp_path: Path) -> None:
    """`self.logger.log_metrics(...)` in a project method itself called `log_metrics`, the
    logger's class told nowhere: the project's only method of that name is the caller, and a
    method handing its values on to an attribute's method of its own name delegates, it does
    not recurse, so the tracker's method logs them. The twin hands them to a method no tracker has."""
    write_project(tmp_path / "logged", {"pkg/loop.py": DELEGATING})
    assert _logged(tmp_path / "logged") == ["loss"]
    write_project(tmp_path / "quiet", {"pkg/loop.py": DELEGATING.replace("self.logger.log_metrics(metrics", "self.logger.keep(metrics")})
    assert _logged(tmp_path / "quiet") == []


def test_methods_that_call_their_namesakes_through_unknown_objects_are_read_in_time(tmp_path: Path) -> None:
    """Summaries that summarise their parts by the same method name, on objects no file tells
    the class of (prime-rl's `to_dict`s), each reading the others: read again inside their own
    reading, every path through them was followed anew (on prime-rl, 859,052 readings in the
    first 25 seconds, 24 GB after 8.5 minutes, when the kernel killed the run). The step now keeps
    at most `MAX_READINGS` of them, and the run ends in seconds with what it read by then, saying
    so: keys may be missing. A project read whole says nothing."""
    project = copy_fixture(FIXTURES / "inventory_self_summaries", tmp_path / "project")
    done = run_apart("init", "--no-cache", "-o", str(tmp_path / "draft.yaml"), str(project), timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Wrote" in done.stdout and "4 metrics" in done.stdout
    assert "stopped following dicts of metrics across the functions of" in done.stderr
    whole = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    done = run_apart("init", "--no-cache", "-o", str(tmp_path / "demo.yaml"), str(whole), timeout=60)
    assert done.returncode == 0 and "stopped following" not in done.stderr, done.stderr
