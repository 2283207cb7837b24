"""Learning rates read after the scheduler stepped: the next step's rate, not the one the step
just used (rules/code/schedules.yaml). The walk tells where a scheduler stepped (`Scope.stepped`,
`Scope.framework_stepped`); this tells which reads that makes the next step's."""

from __future__ import annotations

import ast
from dataclasses import replace

from metriclint.knowledge.code_entries import Schedulers
from metriclint.model import Atom, CodeFact, Related
from metriclint.sources.python.code_reader import CodeReader
from metriclint.sources.python.flow import Scope


def next_step_rate(value: ast.Call | ast.Subscript, scope: Scope, code: CodeReader) -> frozenset[Atom]:
    """A learning rate read after the scheduler stepped in this function: the next step's.
    `sched.get_last_lr()` after `sched.step()` (a read takes no arguments, or one param
    group: `get_lr(step)` computes a schedule's rate at a step); `opt.param_groups[i]["lr"]` after the step
    of a receiver named as a scheduler. In a hook its framework calls after stepping the
    scheduler (`on_train_batch_end` of a Lightning callback), any such read is."""
    rules, stepped = code.knowledge.schedulers, scope.stepped
    if isinstance(value, ast.Call):
        func = value.func
        if not isinstance(func, ast.Attribute) or not _reads_rate(value, func.attr, rules):
            return frozenset()
        if scope.framework_stepped is not None:
            return _in_hook(value, scope.framework_stepped, code)
        receiver = code.text.segment(func.value)
        receivers = [receiver] if receiver in stepped else []
    elif scope.framework_stepped is not None:
        return _in_hook(value, scope.framework_stepped, code)
    else:
        receivers = [receiver for receiver in stepped if any(word in receiver.lower() for word in rules.names)]
    if not receivers:
        return frozenset()
    caller = None if any(stepped[r] is None for r in receivers) else stepped[receivers[0]]  # stepped here, or by the caller
    return frozenset(
        replace(f, context=caller) if isinstance(f, CodeFact) and caller else f for f in code.derived("after-scheduler-step", value, ())
    )


def reads_param_group_lr(node: ast.Subscript) -> bool:
    """`optimizer.param_groups[i]["lr"]`."""
    inner = node.value
    return (
        isinstance(node.slice, ast.Constant)
        and node.slice.value == "lr"
        and isinstance(inner, ast.Subscript)
        and isinstance(inner.value, ast.Attribute)
        and inner.value.attr == "param_groups"
    )


def _in_hook(value: ast.expr, hook: Related, code: CodeReader) -> frozenset[Atom]:
    return frozenset(replace(f, context=hook) if isinstance(f, CodeFact) else f for f in code.derived("after-framework-step", value, ()))


def _reads_rate(call: ast.Call, method: str, rules: Schedulers) -> bool:
    """`sched.get_last_lr()`, or `sched.get_lr(opt.param_groups[0])` for a read that takes the
    param group it computes the rate of (rules/code/schedules.yaml `group_reads`)."""
    if call.keywords:
        return False
    if not call.args:
        return method in rules.reads
    (group,) = call.args if len(call.args) == 1 else (None,)
    return method in rules.group_reads and _param_group(group)


def _param_group(node: ast.expr | None) -> bool:
    """`opt.param_groups[0]`, or a name holding one (`for group in opt.param_groups`)."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "param_groups"
    return isinstance(node, ast.Name) and "group" in node.id
