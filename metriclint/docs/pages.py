"""Every generated page of the docs site, by its path from the repository root; which of
them on disk are stale; writing them."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from metriclint.base.builtin import rules_dir
from metriclint.base.files import replace
from metriclint.checks import Rule
from metriclint.docs import facet_pages, knowledge_pages, rule_pages
from metriclint.docs.examples import reported

RULE_PAGES = "docs/rules"  # one page per rule, and the index; nothing else lives there
HOME = "docs/index.md"  # the README, its links made relative to docs/
FACETS = "docs/reference/facets.md"
CODE_KNOWLEDGE = "docs/reference/code-knowledge.md"

Messages = Mapping[str, Sequence[Sequence[str]]]  # by rule code: the lines each bad example reports


def messages_of(rule: Rule) -> list[list[str]]:
    """What `rule`'s bad examples report, one list of lines each."""
    return [reported(example, rule.code) for example in rule.bad]


def all_messages(rules: Sequence[Rule]) -> dict[str, list[list[str]]]:
    """`messages_of` every rule."""
    return {rule.code: messages_of(rule) for rule in rules}


def rule_index_and_pages(rules: Sequence[Rule], messages: Messages) -> dict[str, str]:
    return {
        f"{RULE_PAGES}/index.md": rule_pages.index(rules),
        **{f"{RULE_PAGES}/{rule.code}.md": rule_pages.page(rule, messages[rule.code]) for rule in rules},
    }


def generated(root: Path, rules: Sequence[Rule], messages: Messages | None = None) -> dict[str, str]:
    """Every generated page of the repository at `root`; `messages` as `all_messages` gives
    them (run when not given)."""
    data = rules_dir()
    return {
        HOME: home((root / "README.md").read_text(encoding="utf-8")),
        **rule_index_and_pages(rules, messages if messages is not None else all_messages(rules)),
        FACETS: facet_pages.page(data / "facets"),
        CODE_KNOWLEDGE: knowledge_pages.page(data / "code"),
    }


def home(readme: str) -> str:
    """The site's home page: the README, whose links lead into docs/ from the repository root."""
    return readme.replace("](docs/", "](")


def stale(root: Path, pages: Mapping[str, str]) -> list[str]:
    """The pages under `root` that differ from `pages` or are missing, and the rule pages of
    rules that are gone, sorted."""
    different = [path for path, text in pages.items() if not _holds(root / path, text)]
    gone = [p.relative_to(root).as_posix() for p in (root / RULE_PAGES).glob("*.md") if p.relative_to(root).as_posix() not in pages]
    return sorted(different + gone)


def write(root: Path, pages: Mapping[str, str]) -> list[str]:
    """Make the pages under `root` the generated ones; returns those it changed or removed."""
    changed = stale(root, pages)
    for path in changed:
        if path in pages:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            replace(root / path, pages[path].encode("utf-8"))
        else:
            (root / path).unlink()
    return changed


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except OSError:
        return False
