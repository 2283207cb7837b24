"""What a framework's hook does with the logs it is handed: a Trainer callback's `on_log(self,
args, state, control, logs=None, **kwargs)` receives the very dict the Trainer logged, and
what it writes there is what the trackers after it see. A hook that only reads the dict
(iterates it, formats it, copies it, sends a copy on) cannot change a logged value.

`keys_written` gives the keys a hook may write: each a string written out (`logs["restarts"]
= n`, `logs.pop("total_flos", None)`), or None when it may write any, which is every use it
cannot show to be one of those or a read (a key chosen at run time, `logs.update(extra)`,
`logs` handed to a function or kept in an attribute). The dict is followed through the names
bound to it (`shown = logs or {}`) and through `kwargs["logs"]` when the hook takes it there;
a name rebound to something else at the top of the hook (`logs = dict(logs)`) is the dict no
more after that statement, while one rebound in a branch or a loop still may be.
"""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.knowledge.frameworks import EntryPoint

_PASSED_ON = (ast.BoolOp, ast.NamedExpr)  # the value may be the dict itself
_TESTED = (ast.Compare, ast.UnaryOp, ast.If, ast.While, ast.Assert, ast.Expr, ast.FormattedValue, ast.Starred)


class _Unknown(Exception):
    """A use that may write any key."""


def keys_written(
    hook: ast.FunctionDef | ast.AsyncFunctionDef, entry: EntryPoint, resolve: Callable[[ast.expr], str | None]
) -> frozenset[str] | None:
    """The keys `hook` may write into the logs it receives by the entry point's `hook_logs`
    keyword (`resolve` names a function as the file's imports do); None: any."""
    keyword = entry.hook_logs
    if not keyword:
        return None
    args = hook.args
    named = {a.arg for a in (*args.args, *args.kwonlyargs)}
    kwargs = args.kwarg.arg if args.kwarg and keyword not in named else None
    follower = _Follower(keyword, {keyword} if keyword in named else set(), kwargs, entry, resolve)
    try:
        for statement in hook.body:
            follower.statement(statement)
    except _Unknown:
        return None
    return frozenset(follower.written)


class _Follower:
    def __init__(
        self, keyword: str, names: set[str], kwargs: str | None, entry: EntryPoint, resolve: Callable[[ast.expr], str | None]
    ) -> None:
        self.keyword = keyword
        self.names = names  # the names that may hold the dict
        self.kwargs = kwargs  # the `**kwargs` the dict arrives in, when no parameter takes it
        self.entry = entry
        self.resolve = resolve
        self.written: set[str] = set()
        self.parents: dict[ast.AST, ast.AST] = {}

    def statement(self, statement: ast.stmt) -> None:
        """Every use in one statement of the hook's body, until no new name for the dict turns
        up (a loop may bind one after a use); then a plain rebinding ends a name's hold."""
        self.parents = {child: node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
        known: set[str] | None = None
        while known != self.names:
            known = set(self.names)
            for node in ast.walk(statement):
                if isinstance(node, (ast.Global, ast.Nonlocal)) and self.names & set(node.names):
                    raise _Unknown
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    if node.id in self.names and isinstance(self.parents.get(node), ast.AugAssign):
                        raise _Unknown  # `logs |= extra` changes the dict in place
                    continue
                if self._holds(node):
                    self._use(node)
                elif self._kwargs_whole(node):
                    self._kwargs(node)
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            if not self._may_be(statement.value):
                self.names.discard(statement.targets[0].id)

    def _holds(self, node: ast.AST) -> bool:
        """A name for the dict, or `kwargs["logs"]` / `kwargs.get("logs")`."""
        if isinstance(node, ast.Name):
            return node.id in self.names
        if self.kwargs is None:
            return False
        if isinstance(node, ast.Subscript):
            return _named(node.value, self.kwargs) and _text(node.slice) == self.keyword
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop"):
            return _named(node.func.value, self.kwargs) and bool(node.args) and _text(node.args[0]) == self.keyword
        return False

    def _may_be(self, node: ast.expr) -> bool:
        """Whether the value of `node` may be the dict itself."""
        if isinstance(node, _PASSED_ON):
            return any(self._may_be(part) for part in (node.values if isinstance(node, ast.BoolOp) else [node.value]))
        if isinstance(node, ast.IfExp):
            return self._may_be(node.body) or self._may_be(node.orelse)
        return self._holds(node) or self._kwargs_whole(node)

    def _kwargs_whole(self, node: ast.AST) -> bool:
        return self.kwargs is not None and _named(node, self.kwargs)

    def _kwargs(self, node: ast.AST) -> None:
        """A use of the `**kwargs` the dict arrives in: another argument read by name, or the
        whole of them handed on (with the dict among them)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Subscript) and _text(parent.slice) is not None or isinstance(parent, ast.Compare):
            return
        if isinstance(parent, ast.Attribute) and parent.attr in ("get", "pop"):
            call = self.parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent and call.args and _text(call.args[0]) is not None:
                return
        handed = self.parents.get(parent) if isinstance(parent, ast.keyword) and parent.arg is None else None
        if not isinstance(handed, ast.Call):
            raise _Unknown
        self._handed(handed)

    def _use(self, node: ast.AST) -> None:
        """One place the dict's value is used: a read, a key written, or a new name for it."""
        parent = self.parents.get(node)
        if isinstance(parent, _PASSED_ON) or isinstance(parent, ast.IfExp) and node is not parent.test:
            if isinstance(parent, ast.NamedExpr):
                self._bind([parent.target])
            self._use(parent)
        elif isinstance(parent, _TESTED) or isinstance(parent, ast.IfExp):
            return
        elif isinstance(parent, (ast.comprehension, ast.For, ast.AsyncFor)) and node is parent.iter:
            return
        elif isinstance(parent, ast.Subscript):
            self._subscript(node, parent)
        elif isinstance(parent, ast.Attribute):
            self._method(parent)
        elif isinstance(parent, ast.Call) and node is not parent.func:
            self._handed(parent)
        elif isinstance(parent, ast.keyword):
            self._keyword(parent)
        elif isinstance(parent, ast.Dict) and any(v is node and k is None for k, v in zip(parent.keys, parent.values)):
            return  # {**logs}: a copy
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and node is parent.value:
            self._bind(parent.targets if isinstance(parent, ast.Assign) else [parent.target])
        elif isinstance(parent, ast.AugAssign) and node is parent.value:
            return  # `shown |= logs`: its items copied into another dict
        else:
            raise _Unknown

    def _subscript(self, node: ast.AST, parent: ast.Subscript) -> None:
        if node is not parent.value or isinstance(parent.ctx, ast.Load):
            return
        key = _text(parent.slice)
        if key is None:
            raise _Unknown
        self.written.add(key)

    def _method(self, attribute: ast.Attribute) -> None:
        call = self.parents.get(attribute)
        if not isinstance(call, ast.Call) or call.func is not attribute:
            raise _Unknown  # `self.drop = logs.pop`
        if attribute.attr in self.entry.hook_reads:
            return
        keys = _keys_of(attribute.attr, call)
        if keys is None:
            raise _Unknown
        self.written |= keys

    def _handed(self, call: ast.Call) -> None:
        if self.resolve(call.func) not in self.entry.hook_handed_to:
            raise _Unknown

    def _keyword(self, keyword: ast.keyword) -> None:
        call = self.parents.get(keyword)
        if keyword.arg is not None and isinstance(call, ast.Call):
            self._handed(call)  # f(logs=logs) hands the dict itself; f(**logs) a copy of its items

    def _bind(self, targets: list[ast.expr]) -> None:
        for target in targets:
            if not isinstance(target, ast.Name):
                raise _Unknown  # `self.last = logs`: the dict outlives the hook
            self.names.add(target.id)


def _keys_of(method: str, call: ast.Call) -> frozenset[str] | None:
    """The keys a writing method of a dict may write, when the call spells them out."""
    if method in ("pop", "setdefault") and call.args:
        key = _text(call.args[0])
        return frozenset([key]) if key is not None else None
    if method == "update" and not call.args and all(k.arg is not None for k in call.keywords):
        return frozenset(k.arg for k in call.keywords if k.arg is not None)
    if method == "update" and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict):
        keys = [_text(k) if k is not None else None for k in call.args[0].keys]
        return None if any(k is None for k in keys) else frozenset(k for k in keys if k is not None)
    return None


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
