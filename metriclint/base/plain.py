"""Frozen dataclasses as plain JSON values and back, checked against their type hints.

The cache keeps per-file results in a folder anyone can write to (it comes with the checked
tree). Pickle would rebuild whatever objects an entry names, so an entry is JSON instead: only
strings, numbers, booleans, null and lists, rebuilt into the one type its place expects and
refused when any value does not fit. Its `path` fields must all name the file the entry is
for (or one of the project's files, for what spans them), so that an entry cannot place a
finding where it was not found.

Every value is written positionally (a dataclass is the list of its fields), so a run reads
back a tree's thousands of entries quickly; where a place admits several dataclasses (a union),
the value is `{"ClassName": [fields]}`. The codec for each type is worked out once.

A value of a union that equals one written before in the same entry is written as `{"": n}`,
the n-th such value written (counted when each is finished, children first). Code flows share
their parts (the result of a call holds what was passed to it, which holds results of other
calls): written out in full, one call of a deep chain took megabytes, and reading every entry
of a warm run cost more than everything else it does.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import itertools
import operator
import types
import typing
from functools import lru_cache
from typing import Any, Callable, Container


class Invalid(Exception):
    """A plain value that does not fit its type."""


class _Scope:
    """One entry's reading: the paths a `path` field may hold, the values written so far."""

    __slots__ = ("paths", "shared")

    def __init__(self, paths: Container[str]) -> None:
        self.paths = paths
        self.shared: list[Any] = []


Seen = dict[Any, int]  # the values of unions written so far, and their numbers
Encode = Callable[[Any, Seen], Any]
Decode = Callable[[Any, _Scope], Any]


def encoder(kind: Any) -> Callable[[Any], Any]:
    """The function that turns a value of type `kind` into plain values."""
    encode = _codec(kind)[0]
    return lambda value: encode(value, {})


def decoder(kind: Any) -> Callable[[Any, str], Any]:
    """The function that rebuilds a value of type `kind` about the file at `path`; raises Invalid."""
    decode = _codec(kind)[1]
    return lambda value, path: decode(value, _Scope((path,)))


def spanning_decoder(kind: Any) -> Callable[[Any, Container[str]], Any]:
    """The function that rebuilds a value of type `kind` about any of the files at `paths`
    (what the code of several files computes); raises Invalid."""
    decode = _codec(kind)[1]
    return lambda value, paths: decode(value, _Scope(paths))


@lru_cache(maxsize=None)
def _codec(kind: Any) -> tuple[Encode, Decode]:
    if kind in (str, int, bool, type(None)):
        return _same, _scalar(kind)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _dataclass(kind)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _enum(kind)
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
        return _sequence(arguments[0], tuple)
    if origin is tuple:
        return _fixed(arguments)
    if origin is frozenset:
        return _sequence(arguments[0], frozenset)
    if origin in (typing.Union, types.UnionType):
        return _union(arguments)
    raise TypeError(f"no plain form for {kind!r}")


def _same(value: Any, seen: Seen) -> Any:
    return value


def _plain_list(value: Any, seen: Seen) -> Any:
    return list(value)


def _enum(kind: type[enum.Enum]) -> tuple[Encode, Decode]:
    """An enum by its value; only one of its members' values comes back."""
    members = {member.value: member for member in kind}

    def encode(value: Any, seen: Seen) -> Any:
        return value.value

    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) is not str or value not in members:
            raise Invalid(f"expected one of {', '.join(map(str, members))}")
        return members[value]

    return encode, decode


def _scalar(kind: type) -> Decode:
    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) is not kind:  # exact: True is no int here, 1 no bool
            raise Invalid(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return decode


def _sequence(item: Any, build: Callable[[Any], Any]) -> tuple[Encode, Decode]:
    if item in (str, int):  # names and line numbers: checked in one pass in C, not a call per item

        def decode_scalars(value: Any, scope: _Scope) -> Any:
            if type(value) is not list or not set(map(type, value)) <= {item}:
                raise Invalid(f"expected a list of {item.__name__}")
            return build(value)

        return _plain_list, decode_scalars
    if typing.get_origin(item) is tuple and set(typing.get_args(item)) == {int}:  # (line, column) pairs
        width = len(typing.get_args(item))

        def decode_pairs(value: Any, scope: _Scope) -> Any:
            if (
                type(value) is not list
                or not set(map(type, value)) <= {list}
                or not set(map(len, value)) <= {width}
                or not set(map(type, itertools.chain.from_iterable(value))) <= {int}
            ):
                raise Invalid(f"expected a list of {width} integers each")
            return build(map(tuple, value))

        return _plain_list, decode_pairs
    encode_item, decode_item = _codec(item)

    def encode(value: Any, seen: Seen) -> Any:
        return [encode_item(v, seen) for v in value]

    empty = build(())

    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) is not list:
            raise Invalid(f"expected a list, got {type(value).__name__}")
        return build(map(decode_item, value, itertools.repeat(scope, len(value)))) if value else empty

    return encode, decode


def _fixed(items: tuple[Any, ...]) -> tuple[Encode, Decode]:
    if all(item is int for item in items):  # line and column pairs, by the thousand

        def decode_numbers(value: Any, scope: _Scope) -> Any:
            if type(value) is not list or len(value) != len(items) or not all(type(v) is int for v in value):
                raise Invalid(f"expected {len(items)} integers")
            return tuple(value)

        return _plain_list, decode_numbers
    codecs = [_codec(item) for item in items]

    def encode(value: Any, seen: Seen) -> Any:
        return [e(v, seen) for (e, _), v in zip(codecs, value)]

    if len(codecs) == 2:  # (argument, atoms), (text, readings): by the hundred thousand
        (_, first), (_, second) = codecs

        def decode_pair(value: Any, scope: _Scope) -> Any:
            if type(value) is not list or len(value) != 2:
                raise Invalid("expected a list of 2")
            return first(value[0], scope), second(value[1], scope)

        return encode, decode_pair

    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) is not list or len(value) != len(codecs):
            raise Invalid(f"expected a list of {len(codecs)}")
        return tuple(d(v, scope) for (_, d), v in zip(codecs, value))

    return encode, decode


def _union(members: tuple[Any, ...]) -> tuple[Encode, Decode]:
    """Scalars are told apart by their JSON type, dataclasses by the name around them; a
    dataclass written before in the entry, by its number (see the module's docstring)."""
    classes = {m.__name__: m for m in members if isinstance(m, type) and dataclasses.is_dataclass(m)}
    scalars = frozenset(m for m in members if m in (str, int, bool, type(None)))
    if len(classes) + len(scalars) != len(members) or "" in classes:
        raise TypeError(f"no plain form for a union of {members!r}")
    allowed = tuple(classes.values())
    expected = f"expected one of {', '.join(m.__name__ for m in members)}"

    # A member's codec is looked up when first used: a member may hold this union (the atoms
    # of a call's result hold the atoms of its arguments).
    def encode(value: Any, seen: Seen) -> Any:
        name = type(value).__name__
        if name not in classes:
            return value
        number = seen.get(value)
        if number is not None:
            return {"": number}
        written = {name: _codec(classes[name])[0](value, seen)}
        seen[value] = len(seen)
        return written

    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) in scalars:  # exact: True is no int here, 1 no bool
            return value
        if type(value) is dict and len(value) == 1:
            ((name, fields),) = value.items()
            if name in classes:
                built = _codec(classes[name])[1](fields, scope)
                scope.shared.append(built)
                return built
            if name == "" and type(fields) is int and 0 <= fields < len(scope.shared) and isinstance(scope.shared[fields], allowed):
                return scope.shared[fields]
        raise Invalid(expected)

    return encode, decode


def _dataclass(kind: type) -> tuple[Encode, Decode]:
    fields = [f for f in dataclasses.fields(kind) if f.init]
    if len(fields) != len(dataclasses.fields(kind)):
        raise TypeError(f"{kind.__name__} has fields its constructor does not take")
    hints = typing.get_type_hints(kind)
    names = [f.name for f in fields]
    encoders = [_codec(hints[name])[0] for name in names]
    # Scalar fields are checked in place and the rest rebuilt in place: a call per field would
    # make reading a warm run's entries several times slower.
    allowed = [_scalar_types(hints[name]) for name in names]
    single = [i for i, kinds in enumerate(allowed) if kinds is not None and len(kinds) == 1]
    expected = tuple(next(iter(allowed[i] or ())) for i in single)
    picked = operator.itemgetter(*single) if len(single) > 1 else lambda value: tuple(value[i] for i in single)
    either = [(i, kinds) for i, kinds in enumerate(allowed) if kinds is not None and len(kinds) > 1]
    nested = [(i, _codec(hints[name])[1]) for i, name in enumerate(names) if allowed[i] is None]
    where = names.index("path") if hints.get("path") is str else None  # a file's path: a value about another file is refused
    count = len(names)

    def encode(value: Any, seen: Seen) -> Any:
        return [e(getattr(value, name), seen) for e, name in zip(encoders, names)]

    def decode(value: Any, scope: _Scope) -> Any:
        if type(value) is not list or len(value) != count:
            raise Invalid(f"expected {kind.__name__}'s {count} fields")
        if tuple(map(type, picked(value))) != expected or (either and any(type(value[i]) not in kinds for i, kinds in either)):
            raise Invalid(f"a field of {kind.__name__} has the wrong type")
        if where is not None and value[where] not in scope.paths:
            raise Invalid(f"{kind.__name__} is about {value[where]!r}, not a file it may be about")
        for i, rebuild in nested:
            value[i] = rebuild(value[i], scope)
        return kind(*value)

    return encode, decode


def _scalar_types(kind: Any) -> frozenset[type] | None:
    """The JSON scalar types a field of type `kind` may hold, or None if it is not a scalar."""
    members = typing.get_args(kind) if typing.get_origin(kind) in (typing.Union, types.UnionType) else (kind,)
    return frozenset(members) if all(m in (str, int, bool, type(None)) for m in members) else None


def fingerprint(value: Any) -> bytes:
    """A digest of a value of frozen dataclasses, tuples, frozensets, enums and scalars that
    is the same in every process: JSON would list a frozenset in its hash order, which
    Python's string hashing changes from run to run. A part met again (code flows share
    theirs) is digested once."""
    done: dict[int, bytes] = {}  # by id: every part is alive while its whole is
    names: dict[type, tuple[bytes, tuple[str, ...]]] = {}

    def walk(part: Any) -> bytes:
        kind = type(part)
        if kind is str:
            return b"s%d:" % len(part) + part.encode("utf-8", "surrogatepass")
        if kind is int or kind is bool or part is None:
            return b"i%r;" % part
        known = done.get(id(part))
        if known is not None:
            return known
        if kind is frozenset:
            found = b"{" + b"".join(sorted(map(walk, part))) + b"}"
        elif kind is tuple:
            found = b"(" + b"".join(map(walk, part)) + b")"
        elif isinstance(part, enum.Enum):
            found = b"e%r;" % part.value
        else:
            if kind not in names:
                if not dataclasses.is_dataclass(kind):
                    raise TypeError(f"no fingerprint for {kind.__name__}")
                names[kind] = (kind.__name__.encode(), tuple(f.name for f in dataclasses.fields(kind)))
            name, fields = names[kind]
            found = name + b"(" + b"".join(walk(getattr(part, f)) for f in fields) + b")"
        if len(found) > 64:  # a part shared a thousand times is not written out a thousand times
            found = b"h" + hashlib.sha256(found).digest()
        done[id(part)] = found
        return found

    return hashlib.sha256(walk(value)).digest()
