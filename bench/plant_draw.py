"""Draw candidate plants for bench/plant.py from a real tree, by patterns of our own.

    python bench/plant_draw.py --tree REPO@COMMIT=PATH [--limit 200] [--per-file 16] [--seed 29]

Two kinds of candidate, found by reading the tree's files (never by running metriclint, nor
with its vocabulary files):

- `flip`: a phrase of one facet (`FLIPS`: before/after clipping, mean/sum, max/mean, per
  token/per sample, GiB/GB, seconds/milliseconds, global/this rank) in a text (a Python comment
  or string, a Markdown paragraph, heading or table row) whose sentence also holds a metric word
  (`METRIC_WORDS`); the plant writes the phrase's opposite.
- `insert`: a code line that writes a key-shaped string as a dict entry, a subscript, a logging
  call's first argument or a `(key, value, step)` tuple's first item, where the key has a
  section (`train/loss`) or the dict, call or function's name says metrics (`METRIC_HOLDER`),
  and the key names something a facet applies to (`KEY_KINDS`); the plant puts a comment above
  it that states the opposite of what the code computes, written at review.

A Python text is drawn only inside a function that hands something to a tracker (`SINKS`:
wandb, TensorBoard, `.log(`, ...) or writes a key as above, and a Markdown block only where it
names a key in backticks or speaks of metrics; test files (`tests/`, `test_*.py`, ...) and
`help=` strings are left out. Candidates are grouped by (how, kind), each group shuffled with
`--seed`, then taken in turn from each group, at most `--per-file` per file and one per line,
up to `--limit`. The result goes to `bench/plants/OWNER+NAME.tsv`: rows already there keep
their review (decision, kind, key, wording, reason); new ones are `todo`.
"""

from __future__ import annotations

import argparse
import ast
import io
import random
import re
import sys
import tokenize
from dataclasses import dataclass, replace
from pathlib import Path

from field import parse_tree
from markdown_it import MarkdownIt
from plant import PLANTS, Plant, line_hash, plants_file, read_plants, write_plants

# kind, phrase (a regex; its first group is the word the plant swaps), the swap (lower-case
# word -> its opposite; "*" for any other). Case-sensitive where the case is the meaning.
FLIPS: list[tuple[str, str, dict[str, str]]] = [
    ("clipping", r"(?i)\b(before|after) (?:the )?(?:gradient |grad )?(?:norm )?clip(?:ping)?\b", {"before": "after", "after": "before"}),
    ("clipping", r"(?i)\b(pre|post)[- ]?clip(?:ping|ped)?\b", {"pre": "post", "post": "pre"}),
    ("clipping", r"(?i)\b(unclipped)\b", {"unclipped": "clipped"}),
    (
        "mean-sum",
        r"(?i)\b(mean|average|averaged|avg|sum|summed)\b",
        {"mean": "sum", "average": "sum", "averaged": "summed", "avg": "sum", "sum": "mean", "summed": "averaged"},
    ),
    (
        "max-mean",
        r"(?i)\b(max|maximum|peak|mean|average|avg)\b",
        {"max": "mean", "maximum": "average", "peak": "average", "mean": "max", "average": "maximum", "avg": "max"},
    ),
    ("token-sample", r"(?i)\bper[- ](token|sample|sequence)\b", {"token": "sample", "sample": "token", "sequence": "token"}),
    ("token-sample", r"(?i)\b(token|sample|sequence)[- ]level\b", {"token": "sample", "sample": "token", "sequence": "token"}),
    ("gib-gb", r"\b(GiB|GB|MiB|MB)\b", {"gib": "GB", "gb": "GiB", "mib": "MB", "mb": "MiB"}),
    (
        "s-ms",
        r"(?i)\b(seconds|secs|sec|milliseconds|ms)\b",
        {"seconds": "milliseconds", "secs": "ms", "sec": "ms", "milliseconds": "seconds", "ms": "s"},
    ),
    ("s-ms", r"(?i)\bper (second|millisecond)\b", {"second": "millisecond", "millisecond": "second"}),
    ("global-rank", r"(?i)\b(global|globally)\b", {"global": "this rank's", "globally": "on this rank only"}),
    ("global-rank", r"(?i)\b((?:across|over|on|from) all (?:the )?(?:ranks|gpus|devices|workers|processes))\b", {"*": "on this rank only"}),
    ("global-rank", r"(?i)\b((?:this|each|every|current|the local) (?:rank|gpu|device|process|worker))\b", {"*": "all ranks"}),
    ("global-rank", r"(?i)\b(per[- ](?:rank|gpu|device))\b", {"*": "across all ranks"}),
]
METRIC_WORDS = re.compile(
    r"(?i)\b(loss(?:es)?|norms?|grad(?:ient)?s?|grad_norm|rewards?|returns?|entropy|kl|throughput|t?flops|mfu|"
    r"times?|timers?|timing|latency|duration|elapsed|memory|mem|allocated|reserved|tokens?|lr|learning rate|"
    r"accuracy|acc|perplexity|ppl|lengths?|advantages?|ratios?|scores?|speed|utili[sz]ation|bandwidth|"
    r"log[-_ ]?probs?|metrics?|logged|logs|wandb|tensorboard|stats?|statistics)\b"
)
IDENTIFIER_BEFORE = re.compile(r"[-_./`{]$")  # the phrase is part of a name, a flag or a path
IDENTIFIER_AFTER = re.compile(r"[-_/`}]|\.\w")
SENTENCE_END = re.compile(r"[.!?](?=\s)|\n\s*\n")
# A key the code writes: a literal naming a measured quantity, and the facet a comment about it
# would state (checked in order: the first that fits).
KEY_SHAPE = re.compile(r"^[\w./{}\- ]{2,80}$")
KEY_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("clipping", re.compile(r"(?i)grad(?:ient)?[_\- ]?norm|total[_\- ]norm")),
    ("s-ms", re.compile(r"(?i)time|latency|duration|elapsed|_ms\b|_sec\b|_s\b|seconds")),
    ("gib-gb", re.compile(r"(?i)mem|gib|gb\b|mib|mb\b|allocated|reserved")),
    ("global-rank", re.compile(r"(?i)global|rank|per[_\- ]?(?:gpu|device)")),
    ("token-sample", re.compile(r"(?i)per[_\- ]?(?:token|sample|seq)|tokens?")),
    ("max-mean", re.compile(r"(?i)max|peak|mean|avg")),
    ("mean-sum", re.compile(r"(?i)sum|total")),
    # a loss, reward or divergence: how it is reduced is the code's choice
    ("mean-sum", re.compile(r"(?i)(?:^|[/_.-])(?:loss|entropy|rewards?|kl|advantages?|scores?|accuracy|acc)(?:$|[/_.-])")),
]
LOGGING_CALL = re.compile(r"(?i)(?:^|\.)(?:log|log_\w+|add_scalars?|record\w*|report\w*|track\w*)$")
METRIC_HOLDER = re.compile(r"(?i)metric|stat|log|info|summar|record|result|perf|tim|throughput|report|scalar|writer|track")
# A Python file is drawn from only if it hands something to a tracker (our own list of the usual ones).
SINKS = re.compile(
    r"add_scalars?\(|\bwandb\b|tensorboard|SummaryWriter|\bmlflow\b|log_metrics?\(|log_dict\(|\.log\(|swanlab|"
    r"clearml|neptune|comet_ml|trackio|\btracker\b|one_logger|log_scalars?\(|write_events\("
)
MARKDOWN_METRIC = re.compile(r"`[^`\n]*[/_][^`\n]*`|(?i:\b(?:metrics?|logged|wandb|tensorboard|dashboard|tracker)\b)")
TEST_PARTS = {"tests", "test", "__tests__"}


@dataclass(frozen=True)
class Text:
    """A run of text (a comment block, a string, a Markdown block), its lines column for column as in the file."""

    first: int  # 1-based line of its first character
    body: str


def is_test(path: Path) -> bool:
    return (
        bool(TEST_PARTS & set(path.parts[:-1]))
        or path.name.startswith("test_")
        or path.name.endswith("_test.py")
        or path.name == "conftest.py"
    )


def span(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text from `start` to `end` (row, column), everything else on its lines blanked, so that
    an offset within a line of it is the column in the file."""
    rows = range(start[0], end[0] + 1)
    return "\n".join(
        " " * (low := start[1] if row == start[0] else 0) + lines[row - 1][low : end[1] if row == end[0] else None] for row in rows
    )


def python_texts(source: str) -> list[Text]:
    """Comment blocks and strings."""
    lines = source.splitlines()
    texts: list[Text] = []
    block: list[tokenize.TokenInfo] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            if block and token.start[0] != block[-1].start[0] + 1:
                texts.append(Text(block[0].start[0], "\n".join(span(lines, t.start, t.end) for t in block)))
                block = []
            block.append(token)
        elif token.type == tokenize.STRING:
            texts.append(Text(token.start[0], span(lines, token.start, token.end)))
    if block:
        texts.append(Text(block[0].start[0], "\n".join(span(lines, t.start, t.end) for t in block)))
    return texts


def key_text(node: ast.expr) -> str | None:
    """A string or f-string's text, each replacement field as `{}`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)  # type: ignore[misc]
    return None


def python_keys(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, key) for each key-shaped string the code writes where metrics go: a dict entry, a
    subscript assigned, a logging call's first argument, in a container, call or function whose
    name says metrics, or a key with a section (`train/loss`), also as the first item of a
    `(key, value, step)` tuple."""
    found: list[tuple[int, str]] = []

    def keep(node: ast.expr, holder: str) -> None:
        text = key_text(node)
        if text and KEY_SHAPE.match(text) and text != text.upper() and ("/" in text or METRIC_HOLDER.search(holder)):
            found.append((node.lineno, text))

    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        name = getattr(function, "name", "")
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                for key in node.value.keys:
                    if key is not None:
                        keep(key, " ".join(ast.unparse(t) for t in node.targets))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript):
                        keep(target.slice, ast.unparse(target.value))
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
                for key in node.value.keys:
                    if key is not None:
                        keep(key, name)
            elif isinstance(node, ast.Call) and node.args and LOGGING_CALL.search(ast.unparse(node.func)):
                keep(node.args[0], ast.unparse(node.func))
            elif isinstance(node, ast.Tuple) and len(node.elts) >= 2:
                keep(node.elts[0], "")  # a (key, value, step) record: kept when the key has a section
    return sorted(set(found))


def logging_spans(tree: ast.Module, keys: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """The lines of each function that calls a sink or writes one of `keys`."""
    spans = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.end_lineno:
            first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
            calls = (ast.unparse(n.func) for n in ast.walk(function) if isinstance(n, ast.Call))
            if any(first <= line <= function.end_lineno for line, _ in keys) or any(
                LOGGING_CALL.search(c) or SINKS.search(c + "(") for c in calls
            ):
                spans.append((first, function.end_lineno))
    return spans


def help_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """The lines of each `help=` argument: a flag's description, not a metric's."""
    return [
        (k.value.lineno, k.value.end_lineno or k.value.lineno) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "help"
    ]


def within(line: int, spans: list[tuple[int, int]]) -> bool:
    return any(first <= line <= last for first, last in spans)


def markdown_texts(source: str) -> list[Text]:
    """Each paragraph, heading and table row of a Markdown file (so never a code block) that
    names a key in backticks or speaks of metrics."""
    lines = source.splitlines()
    return [
        Text(token.map[0] + 1, block)
        for token in MarkdownIt("commonmark").enable("table").parse(source)
        if token.type in ("paragraph_open", "heading_open", "tr_open") and token.map
        if MARKDOWN_METRIC.search(block := "\n".join(lines[token.map[0] : token.map[1]]))
    ]


def flips(path: str, texts: list[Text], lines: list[str]) -> list[Plant]:
    """A `flip` candidate for each facet phrase whose sentence holds a metric word."""
    found = []
    for text in texts:
        ends = [0, *(m.end() for m in SENTENCE_END.finditer(text.body)), len(text.body)]
        for kind, pattern, swap in FLIPS:
            for match in re.finditer(pattern, text.body):
                start = max(e for e in ends if e <= match.start())
                end = min(e for e in ends if e >= match.end())
                sentence = text.body[start : match.start()] + " " + text.body[match.end() : end]
                inside = IDENTIFIER_BEFORE.search(text.body, 0, match.start()) or IDENTIFIER_AFTER.match(text.body, match.end())
                if "\n" in match.group(0) or inside or not METRIC_WORDS.search(sentence):
                    continue  # a phrase inside an identifier, a flag or a path states nothing
                number = text.first + text.body.count("\n", 0, match.start())
                column = match.start() - text.body.rfind("\n", 0, match.start()) - 1
                word = match.group(1)
                opposite = swap.get(word.lower(), swap.get("*", ""))
                if word[:1].isupper() and not word.isupper():
                    opposite = opposite[:1].upper() + opposite[1:]
                before = match.group(0)
                after = before.replace(word, opposite, 1)
                if lines[number - 1][column : column + len(before)] == before:
                    found.append(
                        Plant("", kind, "flip", path, number, column, line_hash(lines[number - 1]), before, after, "?", "todo", "")
                    )
    return found


def inserts(path: str, keys: list[tuple[int, str]], lines: list[str]) -> list[Plant]:
    """An `insert` candidate for each key literal naming a quantity a facet applies to."""
    found = []
    for number, literal in keys:
        if number > 1 and lines[number - 2].rstrip().endswith("\\"):
            continue  # a comment cannot go inside a continued line
        kind = next((k for k, pattern in KEY_KINDS if pattern.search(literal)), None)
        if kind is not None:
            found.append(Plant("", kind, "insert", path, number, 0, line_hash(lines[number - 1]), "-", "?", literal, "todo", ""))
    return found


def candidates(root: Path) -> list[Plant]:
    every: list[Plant] = []
    for file in sorted(root.rglob("*")):
        relative = file.relative_to(root)
        if file.suffix not in (".py", ".md") or not file.is_file() or is_test(relative) or any(p.startswith(".") for p in relative.parts):
            continue
        try:
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = source.splitlines()
        if file.suffix == ".md":
            every += flips(relative.as_posix(), markdown_texts(source), lines)
            continue
        if not SINKS.search(source):
            continue
        try:
            texts, tree = python_texts(source), ast.parse(source)
        except (tokenize.TokenError, SyntaxError, ValueError):
            continue
        keys = python_keys(tree)
        spans, helps = logging_spans(tree, keys), help_spans(tree)
        texts = [t for t in texts if within(t.first, spans) and not within(t.first, helps)]
        every += flips(relative.as_posix(), texts, lines) + inserts(relative.as_posix(), keys, lines)
    return every


def draw(every: list[Plant], seed: int, limit: int, per_file: int) -> list[Plant]:
    """Take candidates in turn from each (how, kind) group, shuffled, within the caps."""
    groups: dict[tuple[str, str], list[Plant]] = {}
    for plant in every:
        groups.setdefault((plant.how, plant.kind), []).append(plant)
    generator = random.Random(seed)
    for name in sorted(groups):
        generator.shuffle(groups[name])
    drawn: list[Plant] = []
    per: dict[str, int] = {}
    taken: set[tuple[str, int]] = set()
    while len(drawn) < limit and any(groups.values()):
        for name in sorted(groups):
            while groups[name]:
                plant = groups[name].pop(0)
                if per.get(plant.path, 0) < per_file and (plant.path, plant.line) not in taken:
                    per[plant.path] = per.get(plant.path, 0) + 1
                    taken.add((plant.path, plant.line))
                    drawn.append(replace(plant, id=f"{len(drawn) + 1:03d}"))
                    break
            if len(drawn) >= limit:
                break
    return drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tree", required=True, metavar="REPO@COMMIT=PATH")
    parser.add_argument("--limit", type=int, default=200, help="candidates drawn per tree")
    parser.add_argument("--per-file", type=int, default=16)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--plants", type=Path, default=PLANTS, help="the folder of plant lists")
    options = parser.parse_args()
    tree = parse_tree(options.tree)
    every = candidates(tree.path)
    drawn = draw(every, options.seed, options.limit, options.per_file)
    target = plants_file(options.plants, tree.repo)
    reviewed = {p.identity: p for p in read_plants(target)[1]} if target.is_file() else {}
    merged = [
        replace(p, kind=old.kind, to=old.to, key=old.key, decision=old.decision, reason=old.reason)
        if (old := reviewed.pop(p.identity, None))
        else p
        for p in drawn
    ]
    for lost in reviewed.values():
        print(f"warning: {lost.path}:{lost.line} ({lost.decision}) is no longer drawn; its review is dropped", file=sys.stderr)
    header = f"repo={tree.repo} commit={tree.commit} seed={options.seed} limit={options.limit} per-file={options.per_file}"
    write_plants(target, header, merged)
    counts: dict[str, int] = {}
    for plant in merged:
        counts[f"{plant.how} {plant.kind}"] = counts.get(f"{plant.how} {plant.kind}", 0) + 1
    print(f"{target}: {len(merged)} drawn of {len(every)} candidates")
    for name, n in sorted(counts.items()):
        print(f"  {name}: {n}")


if __name__ == "__main__":
    main()
