"""Registry loading: positions, every validation problem, hostile YAML."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from metriclint.base import marked_yaml
from metriclint.knowledge import registry
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import ConfigError

FACETS = load_builtin()[0]


def load(tmp_path: Path, text: str) -> registry.Registry:
    path = tmp_path / "metrics.yaml"
    path.write_text(text, encoding="utf-8")
    return registry.load(path, "metrics.yaml", FACETS)[0]


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return [str(p) for p in caught.value.problems]


def test_setting_keeps_its_line(tmp_path: Path) -> None:
    reg = load(tmp_path, "version: 1\nmetrics:\n  train/loss:\n    semantics:\n      reduction: mean\n")
    setting = reg.setting("train/loss", "reduction")
    assert setting is not None and (setting.value, setting.span.line, setting.text) == ("mean", 5, "reduction: mean")


def test_registry_facets_extend_builtins(tmp_path: Path) -> None:
    text = "version: 1\nfacets:\n  clipping:\n    values:\n      after: [post-clipping value]\nmetrics: {}\n"
    path = tmp_path / "metrics.yaml"
    path.write_text(text, encoding="utf-8")
    _, facets = registry.load(path, "metrics.yaml", FACETS)
    assert facets["clipping"].values["after"][-1] == "post-clipping value"
    assert facets["clipping"].values["before"] == FACETS["clipping"].values["before"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metrics: {}\n", "metrics.yaml:1:1: missing 'version: 1'"),
        ("version: '1'\n", "metrics.yaml:1:10: unsupported version '1'; this metriclint reads version 1"),
        ("version: 1\nmetrics: [a]\n", "metrics.yaml:2:10: 'metrics' must be a mapping, not [a]"),
        ("version: 1\nmetrics:\n  a/b:\n    aliases: x\n", "metrics.yaml:4:14: 'aliases' must be a list of text, not x"),
        ("version: 1\nmetrics:\n  a/b:\n    description: [x]\n", "metrics.yaml:4:18: 'description' must be text, not [x]"),
        (
            "version: 1\nmetrics:\n  ' a b':\n",
            "metrics.yaml:3:3: metric key ' a b' has white space at an end, or a tab or line break; write it as the code logs it",
        ),
        (
            'version: 1\nmetrics:\n  "a\\tb":\n',
            "metrics.yaml:3:3: metric key 'a\\tb' has white space at an end, or a tab or line break; write it as the code logs it",
        ),
        (
            "version: 1\nmetrics:\n  a/b:\n    aliases: [x]\n  c/d:\n    aliases: [x]\n",
            "metrics.yaml:6:15: alias 'x' is already claimed by metric 'a/b'",
        ),
        (
            "version: 1\nmetrics:\n  a/b: {}\n  c/d:\n    aliases: [a/b]\n",
            "metrics.yaml:5:15: alias 'a/b' is already claimed by metric 'a/b'",
        ),
        (
            "version: 1\nmetrics:\n  a/b:\n    semantics: {clipping: on}\n",
            "metrics.yaml:4:27: the value of 'clipping' must be text, not on; quote it",
        ),
        (
            "version: 1\nmetrics: {a/b: {semantics: {clipping: pre}}}\n",
            "metrics.yaml:2:39: unknown value 'pre' for facet 'clipping'; valid values: before, after",
        ),
        ("version: 1\nmetrics:\n  a/b: [\n", "metrics.yaml:4:1: invalid YAML: expected the node content, but found '<stream end>'"),
        ("", "metrics.yaml:1:1: the registry is empty; it needs at least 'version: 1'"),
        # a phrase of separators only would match the empty string everywhere (a hang, once)
        (
            "version: 1\nfacets:\n  clipping:\n    values:\n      before: [' ']\n",
            "metrics.yaml:5:16: phrase ' ' has no word; write the words a text would use",
        ),
        (
            "version: 1\nfacets:\n  clipping:\n    values: {}\n    ignore: ['-_']\n",
            "metrics.yaml:5:14: phrase '-_' has no word; write the words a text would use",
        ),
    ],
)
def test_validation_problem(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in problems(tmp_path, text)


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["version: 1", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    started = time.process_time()  # CPU, not wall time: a loaded host must not fail it; expanding 9**10 values takes hours of CPU
    found = problems(tmp_path, "\n".join(lines) + "\n")
    assert time.process_time() - started < 5
    assert any("aliases expand to more than" in p for p in found)


def test_only_values_reached_again_through_aliases_count_against_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large registry written out is no alias bomb: a registry of 40,000 metrics was refused."""
    monkeypatch.setattr(marked_yaml, "MAX_NODES", 50)
    written = "version: 1\nmetrics:\n" + "".join(f"  train/m{i}:\n    semantics: {{reduction: mean}}\n" for i in range(60))
    root, found = marked_yaml.load(written, "metrics.yaml")
    assert root is not None and found == []
    aliased = "a: &a [1, 2, 3, 4, 5, 6, 7, 8]\nb: [" + ", ".join(["*a"] * 8) + "]\n"
    assert [p.message for p in marked_yaml.load(aliased, "metrics.yaml")[1]] == [
        "YAML aliases expand to more than 50 values; write the data out"
    ]


def test_python_objects_are_not_constructed(tmp_path: Path) -> None:
    """A Python tag is never honoured: the node stays plain data, and nothing runs."""
    marker = tmp_path / "ran"
    text = f"version: 1\nmetrics: !!python/object/apply:os.system ['touch {marker}']\n"
    (problem,) = problems(tmp_path, text)
    assert problem.startswith("metrics.yaml:2:10: 'metrics' must be a mapping, not !!python/object/apply:os.system ['touch")
    assert not marker.exists()


def test_a_key_with_inner_spaces_is_a_real_key(tmp_path: Path) -> None:
    """TensorBoard tags (`lm loss vs samples`, `{key} validation ppl`) are logged keys."""
    loaded = load(tmp_path, 'version: 1\nmetrics:\n  lm loss vs samples:\n  "{key} validation ppl":\n')
    assert list(loaded.metrics) == ["lm loss vs samples", "{key} validation ppl"]


def test_a_code_section_declares_what_the_projects_helpers_compute(tmp_path: Path) -> None:
    text = (
        "version: 1\nfacets:\n  shard:\n    values:\n      local: [this shard]\n"
        "code:\n  results:\n"
        "    - function: masked_mean\n      says: averages under the mask\n      facts: {reduction: mean, granularity: per-token}\n"
        "    - method: shard_total\n      says: adds this shard up\n      facts: {shard: local}\n"
        "metrics: {}\n"
    )
    declared = load(tmp_path, text).code
    assert [(k.pattern, k.method, k.facts, k.says) for k in declared] == [
        (
            "masked_mean()",
            False,
            (("reduction", "mean"), ("granularity", "per-token")),
            "averages under the mask (declared in metrics.yaml)",
        ),
        ("shard_total", True, (("shard", "local"),), "adds this shard up (declared in metrics.yaml)"),
    ]


def test_every_problem_in_a_code_section_is_reported_with_its_place(tmp_path: Path) -> None:
    text = (
        "version: 1\ncode:\n  conversions: []\n  results:\n"
        "    - function: masked_mean\n      facts: {reduction: mean}\n"
        "    - function: f\n      says: x\n      facts: {reduction: median}\n"
        "    - call: g.h\n      says: y\n      facts: {colour: red}\n"
        "metrics: {}\n"
    )
    assert problems(tmp_path, text) == [
        "metrics.yaml:3:3: unknown key 'conversions' in 'code'; expected one of: results",
        "metrics.yaml:5:7: an entry needs one of 'call', 'method', 'expression' or 'function', and 'says' and 'facts'",
        "metrics.yaml:9:15: unknown value 'median' for facet 'reduction'",
        "metrics.yaml:12:15: unknown facet 'colour'",
    ]
