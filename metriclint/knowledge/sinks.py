"""Where metric values leave a program (rules/sinks.yaml): the tracker calls whose arguments are
logged keys and values, and how each is called.

A call is matched by its import path (`wandb.log`) when its function is a module's, else by its
method name on an object (`self.writer.add_scalar`); a project's own helpers join by name
through the `log-functions` setting, with the shapes of a tracker's `log`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from metriclint.base import marked_yaml
from metriclint.base.builtin import EXAMPLES, rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.model import ConfigError

_ENTRY_KEYS = ("says", "functions", "methods", "serialisers", "printers", "shapes", "keywords", "forks", "source")
_FORK_KEYS = ("options", "suffixes", "defaults")
_SHAPE_KEYS = ("key", "value", "mapping", "records", "record", "line_record", "description", "unit", "prefixes")
# The entry whose shapes the project's own `log-functions` take: a tracker's `log`.
_GENERIC = "log"


@dataclass(frozen=True, slots=True)
class ArgumentPlace:
    """One argument of a call, by its position or by one of its keyword names."""

    position: int | None
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Shape:
    """How a call passes what it logs: a key (its parts joined by "/") and a value, a mapping of
    keys to values, or a list of records whose items `record` names."""

    key: tuple[ArgumentPlace, ...] = ()
    value: ArgumentPlace | None = None
    mapping: ArgumentPlace | None = None
    records: ArgumentPlace | None = None
    record: tuple[int, int] = (0, 1)  # (key, value) items of each record
    line_record: ArgumentPlace | None = None  # one JSON record and its newline, written to a file (sources/python/line_records.py)
    description: ArgumentPlace | None = None  # the key's own description, which a dashboard shows for it (a tooltip)
    unit: ArgumentPlace | None = None  # the key's own unit ("ms"), which a dashboard shows beside it
    prefixes: tuple[str, ...] = ()  # with a key: only a key that starts with one is logged, and without it


@dataclass(frozen=True, slots=True)
class Forks:
    """A call that logs each key once per option when all its `options` are on, with that
    option's suffix (Lightning's `log(name, on_step=True, on_epoch=True)` logs `name_step` and
    `name_epoch`). An option the call leaves out is on in the methods `defaults` lists for it
    (the hooks whose default it is), off elsewhere; one it passes is on when passed `True`."""

    options: tuple[str, ...]
    suffixes: tuple[str, ...]
    defaults: tuple[tuple[str, frozenset[str]], ...] = ()  # (option, the methods where it is on unless passed)

    def suffixes_for(self, passed: dict[str, bool | None], method: str) -> tuple[str, ...]:
        """The suffixes a call's keys get, given what it passes for each option (None: not a
        literal bool) in `method`: none unless it passes one, and all are on."""
        if not any(option in passed for option in self.options):
            return ()
        defaults = dict(self.defaults)
        on = (passed[option] if option in passed else method in defaults.get(option, ()) for option in self.options)
        return self.suffixes if all(value is True for value in on) else ()


@dataclass(frozen=True, slots=True)
class Sink:
    says: str  # as a finding names it: "wandb's log"
    source: str
    shapes: tuple[Shape, ...]
    keywords: bool = False  # each keyword argument that is no option is a key
    forks: Forks | None = None

    @property
    def keyed_only(self) -> bool:
        """Whether every shape takes a key: a name the call passes there is one, not a dict of
        metrics (`add_scalar(tag, value)`, where `log(data)` may take either)."""
        return all(shape.key for shape in self.shapes)

    @property
    def lines_only(self) -> bool:
        """Whether every shape is a line record: a `write` of anything else is no sink at all."""
        return all(shape.line_record is not None for shape in self.shapes)


@dataclass(frozen=True)
class LineWriters:
    """The calls that write a JSON-lines record (sources/python/line_records.py): `dumpers`
    write a record to a file (`json.dump`), `serialisers` make it one line's text (`json.dumps`),
    `printers` write a text and its newline to a file (`print(json.dumps(d), file=f)`), all by
    import path."""

    dumpers: frozenset[str] = frozenset()
    serialisers: frozenset[str] = frozenset()
    printers: frozenset[str] = frozenset()  # write their text and a newline to the file a keyword names (`print(text, file=f)`)

    @cached_property
    def names(self) -> frozenset[str]:
        """Their last names: a file that holds none of them writes no record."""
        return frozenset(path.rsplit(".", 1)[-1] for path in self.dumpers | self.serialisers | self.printers)


@dataclass(frozen=True)
class Sinks:
    functions: dict[str, Sink]  # by import path
    methods: dict[str, Sink]  # by method name
    options: frozenset[str]  # keyword arguments that are options, never keys
    lines: LineWriters = LineWriters()
    own: frozenset[str] = frozenset()  # the project's own logging helpers (`log-functions`), by last name

    @cached_property
    def names(self) -> frozenset[str]:
        """The last name of every call some sink may be: the walk asks this of every call first."""
        return frozenset((*self.methods, *(path.rsplit(".", 1)[-1] for path in self.functions)))

    def with_functions(self, names: frozenset[str]) -> Sinks:
        """The project's own logging helpers, matched by their last name, called as a `log` is."""
        if not names:
            return self
        generic = self.methods[_GENERIC]
        own = {name: Sink(f"the project's log function {name}", "the log-functions setting", generic.shapes, True) for name in names}
        return Sinks(self.functions, {**self.methods, **own}, self.options, self.lines, self.own | names)


@lru_cache(maxsize=8)
def sinks(own: frozenset[str] = frozenset()) -> Sinks:
    """The shipped sinks, with the project's own `log-functions` (by their last name)."""
    return _shipped().with_functions(frozenset(name.rsplit(".", 1)[-1] for name in own))


@lru_cache(maxsize=1)
def _shipped() -> Sinks:
    path = rules_dir() / "sinks.yaml"
    root, problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    reader = NodeReader(str(path))
    found = _read(reader, root) if root is not None else Sinks({}, {}, frozenset())
    if problems or reader.problems:
        raise ConfigError(problems + reader.problems)
    return found


def _read(reader: NodeReader, root: Node) -> Sinks:
    fields = reader.mapping(root, "the file", ("options", "sinks", EXAMPLES))
    options = frozenset(text for _, text in reader.texts(fields["options"][1], "'options'")) if "options" in fields else frozenset()
    functions: dict[str, Sink] = {}
    methods: dict[str, Sink] = {}
    serialisers: set[str] = set()
    printers: set[str] = set()
    for node in fields["sinks"][1].elements if "sinks" in fields else ():
        entry = reader.mapping(node, "a sink", _ENTRY_KEYS)
        if any(k not in entry for k in ("says", "shapes", "source")) or not ("functions" in entry or "methods" in entry):
            reader.error(node, "a sink needs 'says', 'shapes', 'source' and 'functions' or 'methods'")
            continue
        says, source = reader.text(entry["says"][1], "'says'"), reader.text(entry["source"][1], "'source'")
        shapes = tuple(_shape(reader, shape) for shape in entry["shapes"][1].elements)
        keywords = "keywords" in entry and entry["keywords"][1].value is True
        forks = _forks(reader, entry["forks"][1]) if "forks" in entry else None
        sink = Sink(says or "", source or "", shapes, keywords, forks)
        for kind, table in (("functions", functions), ("methods", methods)):
            for _, name in reader.texts(entry[kind][1], f"'{kind}'") if kind in entry else ():
                table[name] = sink
        for kind, found in (("serialisers", serialisers), ("printers", printers)):
            if kind not in entry:
                continue
            if not sink.lines_only:
                reader.error(entry[kind][0], f"'{kind}' are for a sink whose shapes are all 'line_record'")
            found.update(name for _, name in reader.texts(entry[kind][1], f"'{kind}'"))
        functions.update((path, sink) for path in printers if path not in functions)
    dumpers = frozenset(path for path, sink in functions.items() if sink.lines_only and path not in printers)
    return Sinks(functions, methods, options, LineWriters(dumpers, frozenset(serialisers), frozenset(printers)))


def _forks(reader: NodeReader, node: Node) -> Forks:
    fields = reader.mapping(node, "'forks'", _FORK_KEYS)
    options, suffixes = (
        tuple(text for _, text in reader.texts(fields[k][1], f"'{k}'")) if k in fields else () for k in ("options", "suffixes")
    )
    if not options or len(options) != len(suffixes):
        reader.error(node, "'forks' needs 'options' and as many 'suffixes'")
    defaults: list[tuple[str, frozenset[str]]] = []
    if "defaults" in fields:
        for option, (_, hooks) in reader.mapping(fields["defaults"][1], "'defaults'", options).items():
            defaults.append((option, frozenset(text for _, text in reader.texts(hooks, f"'{option}'"))))
    return Forks(options, suffixes, tuple(defaults))


def _shape(reader: NodeReader, node: Node) -> Shape:
    fields = reader.mapping(node, "a shape", _SHAPE_KEYS)
    argument = {
        k: _argument(reader, fields[k][1]) for k in ("value", "mapping", "records", "line_record", "description", "unit") if k in fields
    }
    key: tuple[ArgumentPlace, ...] = ()
    if "key" in fields:
        written = fields["key"][1]
        parts = written.elements if written.kind == "sequence" and all(e.kind == "sequence" for e in written.elements) else [written]
        key = tuple(_argument(reader, part) for part in parts)
    record = (0, 1)
    if "record" in fields:
        items = reader.mapping(fields["record"][1], "'record'", ("key", "value"))
        record = tuple(  # type: ignore[assignment]
            int(items[k][1].value) if k in items and items[k][1].kind == "integer" else i  # type: ignore[arg-type]
            for i, k in enumerate(("key", "value"))
        )
    if not key and "mapping" not in argument and "records" not in argument and "line_record" not in argument:
        reader.error(node, "a shape needs a 'key', a 'mapping', 'records' or a 'line_record'")
    for described in ("description", "unit"):
        if described in argument and not key:
            reader.error(fields[described][0], f"a '{described}' belongs to a shape with a 'key'")
    prefixes = tuple(text for _, text in reader.texts(fields["prefixes"][1], "'prefixes'")) if "prefixes" in fields else ()
    if prefixes and len(key) != 1:
        reader.error(fields["prefixes"][0], "'prefixes' belong to a shape whose 'key' is one argument")
    return Shape(
        key,
        argument.get("value"),
        argument.get("mapping"),
        argument.get("records"),
        record,
        argument.get("line_record"),
        argument.get("description"),
        argument.get("unit"),
        prefixes,
    )


def _argument(reader: NodeReader, node: Node) -> ArgumentPlace:
    """`0`, `tag`, or `[0, tag, main_tag]`: a position, keyword names, or both."""
    items = node.elements if node.kind == "sequence" else [node]
    position = next((int(item.value) for item in items if item.kind == "integer" and isinstance(item.value, int)), None)
    keywords = tuple(str(item.value) for item in items if item.kind == "string")
    if position is None and not keywords:
        reader.error(node, "an argument is a position, a keyword name, or a list of both")
    return ArgumentPlace(position, keywords)
