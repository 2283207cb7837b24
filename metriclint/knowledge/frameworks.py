"""Keys a framework logs itself (rules/code/frameworks.yaml `entry_points`): what a project
logs by subclassing or instantiating an entry point such as transformers' Trainer, without
writing the logging call, and what each of those keys is."""

from __future__ import annotations

from dataclasses import dataclass

from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.code_sections import read_facts
from metriclint.knowledge.vocabulary import Facet
from metriclint.model import CodeFact, Span

_ENTRY_KEYS = (
    "entry",
    "says",
    "source",
    "overrides",
    "unless_keywords",
    "callbacks",
    "shipped_by",
    "unless_defined",
    "unless_called",
    "when_called",
    "keys",
    "switched_on_by",
    "examples",
    "hook_logs",
    "hook_reads",
    "hook_handed_to",
    "called",
    "constructors",
)
_SWITCH_KEYS = ("keywords", "sections", "flag")
_CALLED_KEYS = ("methods", "prefix", "position", "returned_by", "overrides", "keys", "examples")


@dataclass(frozen=True, slots=True)
class Switch:
    """Where a call's config switches on what writes the keys: a config passed by one of
    `keywords` with a section of `sections` whose `flag` is true (DeepSpeed's monitors)."""

    keywords: frozenset[str]
    sections: tuple[str, ...]
    flag: str


@dataclass(frozen=True, slots=True)
class FrameworkKey:
    """Keys the entry point logs (one value under each spelling) and what the value is; a
    subclass that defines one of `overrides` changes it, so its use gives nothing for it."""

    keys: tuple[str, ...]
    says: str
    facts: tuple[tuple[str, str], ...]
    overrides: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Called:
    """Keys the entry point's methods log when the project calls one on an instance
    (`trainer.evaluate()`): `keys` with "{prefix}" the prefix the call passes by the keyword
    `prefix` (or at `position`), else the method's default; and, under the prefix and "_", each
    key of the dict that the callable the instance was made with by `returned_by` returns. A
    class that defines one of `overrides` evaluates its own way: its calls give nothing."""

    methods: tuple[tuple[str, str], ...]  # (method, its default prefix)
    prefix: str
    position: int
    returned_by: str
    keys: tuple[FrameworkKey, ...]
    overrides: frozenset[str] = frozenset()
    examples: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (code, the keys it logs), run by the tests

    def default(self, method: str) -> str:
        return dict(self.methods)[method]


@dataclass(frozen=True, kw_only=True, slots=True)
class EntryPoint:
    """One entry point, by its full import paths, with the source its facts were read in and
    the uses that stay silent (see frameworks.yaml)."""

    paths: tuple[str, ...]
    says: str
    source: str
    keys: tuple[FrameworkKey, ...]
    overrides: frozenset[str] = frozenset()
    unless_keywords: frozenset[str] = frozenset()
    callbacks: str = ""  # the keyword a call passes its callbacks by
    shipped_by: tuple[str, ...] = ()  # packages whose callbacks leave the logs alone
    unless_defined: frozenset[str] = frozenset()  # methods that, defined in the file, may rewrite the logs
    unless_called: frozenset[str] = frozenset()  # methods that, called in the file, add such a callback
    when_called: frozenset[str] = frozenset()  # methods of which the file must call one: the API version that logs the keys
    switched_on_by: Switch | None = None  # a call whose config metriclint can read writes the keys only if this says so
    examples: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (code, the keys it logs), run by the tests
    hook_logs: str = ""  # the keyword a hook of `unless_defined` receives the logs by; "": any hook may rewrite them
    hook_reads: frozenset[str] = frozenset()  # methods of the logs that leave them as they were
    hook_handed_to: frozenset[str] = frozenset()  # functions (full paths) the logs may be handed to and stay as they were
    called: Called | None = None  # what its methods log where the project calls them itself (`trainer.evaluate()`)
    constructors: frozenset[str] = (
        frozenset()
    )  # class methods a call of which makes an instance, as a call of the class does (`Runner.from_cfg(cfg)`)

    def shipped(self, path: str) -> bool:
        """Whether a callback resolved to `path` comes with the framework."""
        return any(path == package or path.startswith(package + ".") for package in self.shipped_by)

    def changed_by(self, written: frozenset[str] | None) -> bool:
        """Whether a hook that writes these keys of the logs (None: any key) may change one of
        the entry point's keys."""
        return written is None or any(key in written for logged in self.keys for key in logged.keys)


@dataclass(frozen=True, slots=True)
class EntryIndex:
    """What the walk of every Python file asks of the entry points, worked out once per process
    (`Knowledge.entry_index`): working it out for each file, and so hashing every entry point
    anew, was 2% of a cold run's CPU on radixark/miles."""

    entries: tuple[EntryPoint, ...]  # each once, in frameworks.yaml's order
    names: frozenset[str]  # the last name of each of their import paths
    rewritable: tuple[EntryPoint, ...]  # those a hook may rewrite, whose shipped callbacks leave the logs alone
    overridable: frozenset[str]  # methods whose override changes how an entry point makes some key
    hooks: tuple[frozenset[str], frozenset[str]]  # methods that, defined / called in a file, may rewrite the logs
    wanted: frozenset[str]  # methods of `when_called`: a file must call one for the entry point's keys
    called: frozenset[str]  # methods of `called`: a call of one logs keys
    constructors: frozenset[str]  # class methods of `constructors`: a call of one on an entry point is a use


def entry_index(by_path: dict[str, EntryPoint]) -> EntryIndex:
    entries = tuple(dict.fromkeys(by_path.values()))
    return EntryIndex(
        entries,
        frozenset(path.rsplit(".", 1)[-1] for path in by_path),
        tuple(entry for entry in entries if entry.unless_defined and entry.shipped_by),
        frozenset(name for e in entries for name in e.overrides.union(*(k.overrides for k in e.keys), _called_overrides(e))),
        (frozenset(n for e in entries for n in e.unless_defined), frozenset(n for e in entries for n in e.unless_called)),
        frozenset(n for e in entries for n in e.when_called),
        frozenset(method for e in entries if e.called is not None for method, _ in e.called.methods),
        frozenset(n for e in entries for n in e.constructors),
    )


def _called_overrides(entry: EntryPoint) -> frozenset[str]:
    return entry.called.overrides if entry.called is not None else frozenset()


def facts_at(entry: EntryPoint, logged: FrameworkKey, span: Span, path: str) -> frozenset[CodeFact]:
    """What one of the entry point's keys is, as code facts at a use that names it as `path`."""
    says = f"{logged.says} ({entry.source})"
    return frozenset(CodeFact(facet, value, span, path, says) for facet, value in logged.facts)


def read_entry_point(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> EntryPoint | None:
    fields = reader.mapping(node, "an entry point", _ENTRY_KEYS)
    if any(k not in fields for k in ("entry", "says", "source", "keys")):
        reader.error(node, "an entry point needs 'entry', 'says', 'source' and 'keys'")
        return None
    paths = tuple(path for _, path in reader.texts(fields["entry"][1], "'entry'"))
    says, source = (reader.text(fields[k][1], f"'{k}'") for k in ("says", "source"))
    words = {
        k: _words(reader, fields, k)
        for k in (
            "overrides",
            "unless_keywords",
            "shipped_by",
            "unless_defined",
            "unless_called",
            "when_called",
            "hook_reads",
            "hook_handed_to",
            "constructors",
        )
    }
    keys = tuple(k for k in (_key(reader, item, facets) for item in reader.sequence(fields["keys"][1], "'keys'")) if k is not None)
    callbacks, hook_logs = ((reader.text(fields[k][1], f"'{k}'") or "") if k in fields else "" for k in ("callbacks", "hook_logs"))
    examples = tuple(
        read_example(reader, item) for item in (reader.sequence(fields["examples"][1], "'examples'") if "examples" in fields else ())
    )
    switch = _switch(reader, fields["switched_on_by"][1]) if "switched_on_by" in fields else None
    called = _called(reader, fields["called"][1], facets) if "called" in fields else None
    if not says or not source or not paths:
        return None
    return EntryPoint(
        paths=paths,
        says=says,
        source=source,
        keys=keys,
        overrides=frozenset(words["overrides"]),
        unless_keywords=frozenset(words["unless_keywords"]),
        callbacks=callbacks,
        shipped_by=tuple(words["shipped_by"]),
        unless_defined=frozenset(words["unless_defined"]),
        unless_called=frozenset(words["unless_called"]),
        when_called=frozenset(words["when_called"]),
        switched_on_by=switch,
        examples=tuple(e for e in examples if e is not None),
        hook_logs=hook_logs,
        hook_reads=frozenset(words["hook_reads"]),
        hook_handed_to=frozenset(words["hook_handed_to"]),
        called=called,
        constructors=frozenset(words["constructors"]),
    )


def _switch(reader: NodeReader, node: Node) -> Switch | None:
    fields = reader.mapping(node, "'switched_on_by'", _SWITCH_KEYS)
    if any(k not in fields for k in _SWITCH_KEYS):
        reader.error(node, "'switched_on_by' needs 'keywords', 'sections' and 'flag'")
        return None
    flag = reader.text(fields["flag"][1], "'flag'")
    keywords, sections = _words(reader, fields, "keywords"), _words(reader, fields, "sections")
    return Switch(frozenset(keywords), tuple(sections), flag) if flag and keywords and sections else None


def _called(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> Called | None:
    fields = reader.mapping(node, "'called'", _CALLED_KEYS)
    if any(k not in fields for k in ("methods", "prefix", "position", "returned_by", "keys")):
        reader.error(node, "'called' needs 'methods', 'prefix', 'position', 'returned_by' and 'keys'")
        return None
    written = reader.mapping(fields["methods"][1], "'methods'").items()
    methods = [(name, reader.text(value, "a method's default prefix")) for name, (_, value) in written]
    prefix, returned_by = (reader.text(fields[k][1], f"'{k}'") for k in ("prefix", "returned_by"))
    position = fields["position"][1]
    if position.kind != "integer" or not isinstance(position.value, int):
        reader.error(position, "'position' is where the prefix is passed without its keyword, counted from 0 after `self`")
        return None
    keys = tuple(k for k in (_key(reader, item, facets) for item in reader.sequence(fields["keys"][1], "'keys'")) if k is not None)
    examples = tuple(
        read_example(reader, item) for item in (reader.sequence(fields["examples"][1], "'examples'") if "examples" in fields else ())
    )
    if not prefix or not returned_by or not keys or any(default is None for _, default in methods):
        return None
    return Called(
        tuple((name, default or "") for name, default in methods),
        prefix,
        position.value,
        returned_by,
        keys,
        frozenset(_words(reader, fields, "overrides")),
        tuple(e for e in examples if e is not None),
    )


def _key(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> FrameworkKey | None:
    fields = reader.mapping(node, "a framework key", ("keys", "says", "facts", "overrides"))
    if any(k not in fields for k in ("keys", "says", "facts")):
        reader.error(node, "a framework key needs 'keys', 'says' and 'facts'")
        return None
    keys = tuple(key for _, key in reader.texts(fields["keys"][1], "'keys'"))
    says = reader.text(fields["says"][1], "'says'")
    facts = read_facts(reader, fields["facts"][1], facets, "'facts'")
    return FrameworkKey(keys, says, facts, frozenset(_words(reader, fields, "overrides"))) if keys and says else None


def read_example(reader: NodeReader, node: Node) -> tuple[str, tuple[str, ...]] | None:
    """An example of rules/code/frameworks.yaml: code, and the keys it logs."""
    fields = reader.mapping(node, "an example", ("code", "logs"))
    if "code" not in fields or "logs" not in fields:
        reader.error(node, "an example needs 'code' and 'logs'")
        return None
    code = reader.text(fields["code"][1], "'code'")
    return (code, tuple(key for _, key in reader.texts(fields["logs"][1], "'logs'"))) if code is not None else None


def _words(reader: NodeReader, fields: dict[str, tuple[Node, Node]], key: str) -> list[str]:
    return [word for _, word in reader.texts(fields[key][1], f"'{key}'")] if key in fields else []
