"""Whether a call's config, as far as the file shows it, leaves switched off what writes an
entry point's keys: DeepSpeed writes `Train/Samples/*` only through a monitor that its config
enables (`"tensorboard": {"enabled": True}`).

Only a config written out in the file is read: a dict literal passed to the call, or a name
assigned one dict literal once in the file and never changed (no other assignment, item
assignment or method call on it). Anything else (a JSON file's path, `args`, a dict built
elsewhere, `**extra` inside the dict, a flag that is not a literal) may switch it on."""

from __future__ import annotations

import ast

from metriclint.knowledge.frameworks import Switch


def switched_off(switch: Switch, call: ast.Call, tree: ast.Module) -> bool:
    """The call passes a config the file shows, and no section of it is switched on."""
    for keyword in call.keywords:
        if keyword.arg in switch.keywords:
            config = _written_out(keyword.value, tree)
            return config is not None and not any(_on(config, section, switch.flag) for section in switch.sections)
    return False


def _on(config: ast.Dict, section: str, flag: str) -> bool:
    """The section may switch it on: it is there and its flag is not a literal false (a
    section or flag left out is off, as DeepSpeed's defaults are)."""
    if any(key is None for key in config.keys):
        return True  # `**extra` may hold it
    value = _item(config, section)
    if value is None:
        return False
    if not isinstance(value, ast.Dict) or any(key is None for key in value.keys):
        return True
    enabled = _item(value, flag)
    return enabled is not None and not (isinstance(enabled, ast.Constant) and enabled.value is False)


def _item(config: ast.Dict, key: str) -> ast.expr | None:
    found = [value for k, value in zip(config.keys, config.values) if isinstance(k, ast.Constant) and k.value == key]
    return found[-1] if found else None


def _written_out(value: ast.expr, tree: ast.Module) -> ast.Dict | None:
    if isinstance(value, ast.Dict):
        return value
    if not isinstance(value, ast.Name):
        return None
    assigned: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets):
            assigned.append(node.value if len(node.targets) == 1 else value)
        elif _changes(node, value.id):
            return None
    return assigned[0] if len(assigned) == 1 and isinstance(assigned[0], ast.Dict) else None


def _changes(node: ast.AST, name: str) -> bool:
    """`name` is bound otherwise than by a plain assignment, or changed in place."""
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.withitem, ast.NamedExpr)):
        target = node.target if not isinstance(node, ast.withitem) else node.optional_vars
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)) if target is not None else False
    if isinstance(node, ast.arg):
        return node.arg == name
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name) and node.value.id == name:
        return not isinstance(node.ctx, ast.Load) or isinstance(node, ast.Attribute)
    if isinstance(node, ast.Assign):
        return any(isinstance(n, ast.Name) and n.id == name for t in node.targets if not isinstance(t, ast.Name) for n in ast.walk(t))
    return False
