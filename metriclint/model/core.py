"""The values of texts, claims and findings that flow through the pipeline (model/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from metriclint.base.escapes import printable


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # says something, never fails a run (`--fail-on` takes error or warning)


class SourceKind(str, Enum):
    """Where a statement comes from. A str, so reports print and serialise it as its value."""

    DOCSTRING = "docstring"
    COMMENT = "comment"
    TOOLTIP = "tooltip"
    DOC = "doc"  # a Markdown page
    CODE = "code"  # what the code logs or computes
    REGISTRY = "registry"
    NAME = "name"  # what a key's or a value's name says (ML007)
    LOG = "log-message"  # the words a printed or logged message puts next to a value it formats

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:  # the value on every Python, as for a plain str
        return format(self.value, spec)


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A region of a file. Lines and columns are 1-based; `end_column` is exclusive."""

    path: str  # relative to the working directory, with "/" separators
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def starts_in(self, outer: Span) -> bool:
        """Whether this span starts inside `outer` (its end included): a name among a call's
        arguments, a phrase in a statement."""
        return self.path == outer.path and (outer.line, outer.column) <= (self.line, self.column) <= (outer.end_line, outer.end_column)


@dataclass(frozen=True, slots=True)
class Mention:
    """A text that states something, and what it may be about.

    `origins[i]` is the file position (line, column) of the first character of line `i` of
    `text`, so any offset in the text maps back to the file exactly, whatever the indentation.
    """

    source: SourceKind
    path: str
    text: str
    origins: tuple[tuple[int, int], ...]
    subjects: tuple[str, ...] = ()  # names the whole text speaks for (parameter, alias, key)
    flows_to: tuple[str, ...] = ()  # logged keys the documented value reaches; beats subjects
    names_metrics: bool = False  # the subjects are metric names by the file's own structure
    below: tuple[
        str, ...
    ] = ()  # keys logged on the line right below a comment, or by a call starting there: a sentence naming one speaks for it
    values: tuple[int, ...] = ()  # a log message's: the offsets right after the value it formats, where a unit symbol may follow
    # names the statement right below an own-line comment assigns: a sentence that names no
    # metric speaks for the keys their value is logged under unchanged (KeyUse.through)
    assigns: tuple[str, ...] = ()
    # the key the statement right below an own-line comment writes (`m["k"] = v`), with no other
    # write right after it: a sentence that names no metric speaks for that key
    writes: str = ""
    # each key a logging call below writes that it logs under other keys (rules/sinks.yaml `forks`:
    # `train_loss` -> `train_loss_step`, `train_loss_epoch`): a sentence naming it speaks for those
    forks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def span(self, start: int, end: int) -> Span:
        """The file span of `text[start:end]`."""
        return Span(self.path, *self.position(start), *self.position(end))

    def position(self, offset: int) -> tuple[int, int]:
        line, column = self.origins[self.text.count("\n", 0, offset)]
        return line, column + offset - (self.text.rfind("\n", 0, offset) + 1)


@dataclass(frozen=True, slots=True)
class Reading:
    """A facet value that a mention's `text[start:end]` states (language/phrases.py); `start` includes the negation cue, if any."""

    facet: str
    value: str
    negated: bool  # only on facets with more than two values; two-valued ones are flipped
    start: int
    end: int
    sentence: tuple[int, int]


@dataclass(frozen=True, slots=True)
class KeyUse:
    """A metric key that the code emits (a dict key, a subscript, a logging-call argument)."""

    key: str  # as written; f-string fields become {name} placeholders
    span: Span
    from_keyword: bool = False  # a keyword argument name: counts only if the registry knows it
    measured: bool = True  # False: logged only with text, a flag, a container or a setting (values.py), or only read back
    through: tuple[tuple[str, Span], ...] = ()  # the variables and attributes the value is named by on its way
    # the call that logged it as a tracker's method would (`self.board.log(metrics)`); when that
    # method is the project's own (evidence/products.py), the key is what the method logs instead
    via: Span | None = None
    sink: str = ""  # what logs it and where, and the project's functions its dict went through: "wandb's log (train.py:12)"
    # logged by a framework's own loop where the project uses it (rules/code/frameworks.yaml):
    # no call of the project's logs it (not `measured`: no ML004), yet its runs show it (`init`)
    framework: bool = False


def logged_by(says: str, at: Span, key: Span, through: str | None = None) -> str:
    """KeyUse.sink for a key at `key` that the sink `says` logs at `at`: its place only when the
    key is written elsewhere, and the project's function the key was put in (`through`)."""
    said = says if (key.path, key.line) == (at.path, at.line) else f"{says} ({at.path}:{at.line})"
    return said if through is None else f"{said}, from {through}"


@dataclass(frozen=True, kw_only=True, slots=True)
class NameClaim:
    """What a name states about the value it names (knowledge/names.py): the weakest statement,
    held against the code and the registry (ML007), and against a text only where it is a logged
    key's own (`own`) and states a facet names are sure of (ML002)."""

    metric: str
    facet: str
    value: str
    also: tuple[str, ...]  # values the name's part is commonly written for: not ruled out
    name: str  # as written: a key's last segment, a variable, an attribute, a parameter
    part: str  # the words of the name that state it: "gb"
    span: Span
    own: bool = False  # the logged key's own last segment, not a name its value passed through
    outright: bool = True  # not the outer of two reductions it nests (`avg_len_max`), which texts put either way round


@dataclass(frozen=True, slots=True)
class TooltipEntry:
    """One row of a tooltip table: the dashboard shows `text` for the keys `pattern` selects."""

    pattern: str
    text: Mention  # source "tooltip", positioned exactly; resolution fills in `flows_to`
    span: Span  # the pattern as written
    order: int  # position in the table: first-match modes depend on it


@dataclass(frozen=True, slots=True)
class ConstantHelp:
    """A prometheus_client help text whose metric is named by a constant of another module
    (`Gauge(series.LOSS, "Latest loss")`): one file cannot know the key. The project step
    (evidence/constants.py) finds the constant among those the project's modules define and
    makes the key as prometheus_client does (base/keys.prometheus_name), with `entry` as its
    help text."""

    constant: str  # the constant's import path, as the file's imports spell it: `pkg.series.LOSS`
    prefix: str  # namespace and subsystem, each followed by `_` ("" when none)
    unit: str  # the `unit=` given ("" when none)
    entry: TooltipEntry  # its pattern is `constant` until the key is known


@dataclass(frozen=True, slots=True)
class Lookup:
    """How the file's own code looks a key up in a table, read from the function that does it
    (sources/js_lookup.py, sources/python/lookup.py)."""

    match: str  # exact | prefix | suffix | substring | regex | glob
    first: bool  # the first matching entry in table order wins (`find`, a loop that returns)
    strip_prefix: bool  # the key is matched after its first "/"
    lower: bool  # the key is lower-cased first
    function: str  # the function that reads the table, as named in the file
    line: int  # where it reads it
    how: str  # the code's own words for each choice, for `metriclint sources`


@dataclass(frozen=True, slots=True)
class TooltipTable:
    """Hover texts keyed by metric patterns, as one file defines them.

    `name` is the variable (JS/TS/Python) or JSON pointer a configuration selects it by.
    `shape` tables (Grafana panels, prometheus_client help strings) say by their form which
    metric each text is for, so they are always read, with exact matching.
    """

    path: str
    kind: str  # javascript | typescript | json | yaml | python | grafana | prometheus
    name: str
    entries: tuple[TooltipEntry, ...]
    shape: bool = False
    lookup: Lookup | None = None  # how the file's code reads it, when that code says so


@dataclass(frozen=True)
class TooltipSetting:
    """One `[[tool.metriclint.tooltips]]` table: which table a file holds and how it matches."""

    path: str  # a glob, relative to the project root
    table: str | None  # variable name or JSON pointer; None: every table in the file
    match: str
    strip_prefix: bool
    origin: Problem  # where it is written, for messages about it (its text is unused)


@dataclass(frozen=True)
class Binding:
    """A table that is read, how it is matched and why it was taken."""

    table: TooltipTable
    match: str
    strip_prefix: bool
    why: str
    first: bool | None = None  # the first match in table order wins; None: as the mode does by default
    lower: bool = False  # the key is lower-cased before matching

    @property
    def first_wins(self) -> bool:
        """`substring` and `regex` scan in order by default; the other modes pick the most specific."""
        return self.first if self.first is not None else self.match in ("substring", "regex")

    @property
    def mode(self) -> str:
        """The match mode as `metriclint sources` lists it: `substring, first match, strip_prefix`."""
        parts = [self.match]
        if self.match != "exact":
            parts.append("first match" if self.first_wins else "most specific")
        parts += ["strip_prefix"] * self.strip_prefix + ["lower-case"] * self.lower
        return ", ".join(parts)


@dataclass(frozen=True)
class Mismatch:
    """ML003: the entry shown for `key` was written for `owner`."""

    key: str
    entry: TooltipEntry
    binding: Binding
    owner: str
    owner_span: Span


@dataclass(frozen=True, slots=True)
class Sighting:
    """A place that names a metric: a key the code logs, a doc or tooltip subject, an alias in
    a text. The inventory is every sighting; `metrics` is what the name resolved to."""

    name: str  # as written there
    span: Span
    source: SourceKind
    metrics: tuple[str, ...]  # registry keys first; a logged key stands for itself
    named: bool = False  # a docs or tooltip subject that names a metric, known or not
    passing: bool = False  # named inside a text that is not about it as a whole
    inferred: bool = False  # reached through a data flow or a tooltip pattern, not written there
    incidental: bool = False  # logged by a test, or only as text, a flag, a container or a setting
    sink: str = ""  # for a key the code logs: what logs it (KeyUse.sink)


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement about one metric: `metric` has `facet` = `value` (or not, if negated)."""

    metric: str
    facet: str
    value: str
    negated: bool
    phrase: str  # the words quoted as evidence
    span: Span
    source: SourceKind
    statement: Span  # the whole text the claim was read from: one text, one statement


@dataclass(frozen=True, slots=True)
class Related:
    """The other side of a finding: the registry line or the other source, quoted."""

    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """How `metriclint fix` makes a finding go away: write `replacement` over `span`.

    `phrase` is the text at `span` with its white space collapsed, as quoted in the finding: the
    fix checks the file still says it there. An empty `replacement` with a `reason` marks a text
    that cannot be rewritten safely (negated, or stating several values).
    """

    span: Span
    phrase: str
    replacement: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    span: Span
    message: str
    metric: str = ""
    facet: str = ""
    found: str = ""
    expected: str = ""
    source: str = ""
    related: tuple[Related, ...] = field(default=())
    phrase: str = ""  # the quoted evidence; with rule, path, metric and facet it names the finding
    fix: Fix | None = None  # None: nothing to rewrite (the rule offers no fix)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.span.path, self.span.line, self.span.column, self.rule, self.message)


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """A file that could not be read, decoded or parsed (ML900); the run goes on without it."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Suppression:
    """A `metriclint: ignore[...]` comment and the lines it covers (every line if file-wide)."""

    span: Span  # the directive itself, where ML010 points when it silences nothing
    codes: tuple[str, ...]
    lines: frozenset[int]
    file_wide: bool = False
    kind: str = "ignore"  # as written: ignore, ignore-file, or noqa (the flake8 comment `noqa: ML001`)


@dataclass(frozen=True, slots=True)
class Problem:
    """A configuration or registry error: reported as `path:line:col: message`, exit 2; a
    problem with no place in a file (line 0) as `--option: message`."""

    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        """One line, whatever a file name or a quoted value holds (a newline, an escape)."""
        if self.line == 0:  # not about a place in a file: an option, the command line
            return printable(f"{self.path}: {self.message}")
        return printable(f"{self.path}:{self.line}:{self.column}: {self.message}")


class ConfigError(Exception):
    """Raised with every problem found in one input, so users fix them all in one go."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    files_checked: int
    # found again, but printed by an earlier invocation of the same pre-commit run (report/once.py):
    # not printed again, still counted in the summary, so that no invocation says "All checks passed"
    printed_earlier: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class FileView:
    """What one file's texts state about the metrics of a run's index (engine/): a warm run
    takes it from the last run's (extract/kept.py) rather than decode and read the texts again."""

    claims: tuple[Claim, ...] = ()
    sightings: tuple[Sighting, ...] = ()  # of its texts; the keys its code logs are sighted from the extraction
    statements: tuple[Mention, ...] = ()  # the texts those claims and sightings stand on, shown by the audit
    named: tuple[Span, ...] = ()  # the texts that name the flag a logged value is a placeholder without
    failure: ReadFailure | None = None  # its texts could not be attributed (ML900)
