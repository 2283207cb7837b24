"""From text to claims to attributed claims: negation, contrast, coordination, attribution."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project
from test_vocabulary import VOCABULARY

from metriclint.knowledge import registry
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.language.attribution import MetricIndex, attribute
from metriclint.language.phrases import read, sentences
from metriclint.model import Mention, SourceKind


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the raw norm, not the post-clip one", ["before"]),
        ("this is never the clipped value", ["before"]),
        ("no longer clipped", ["before"]),
        ("measured before rather than after clipping", ["before"]),  # coordination + contrast
        ("the norm before and after clipping", ["before", "after"]),
        ("It is not a clipped value, but it is post-clip in spirit", ["before", "after"]),  # "but" ends the scope
        ("Not averaged. Summed over tokens.", ["not mean", "sum"]),  # negation stays in its sentence
        ("the norm, computed after all ranks reported, before clipping", ["before"]),
        ("logged with --log-entropy-mean, summed over tokens", ["sum"]),  # a flag's words state nothing
    ],
)
def test_polarity(text: str, expected: list[str]) -> None:
    assert [("not " if r.negated else "") + r.value for r in read(text, VOCABULARY)] == expected


def test_sentences_do_not_split_on_abbreviations_or_decimals() -> None:
    text = "Loss, e.g. cross entropy. Scaled by 1.5 each step. Done"
    assert [text[s:e] for s, e in sentences(text)] == ["Loss, e.g. cross entropy.", "Scaled by 1.5 each step.", "Done"]


def mention(text: str, subjects: tuple[str, ...] = (), flows_to: tuple[str, ...] = ()) -> Mention:
    return Mention(SourceKind.DOCSTRING, "x.py", text, ((10, 5),), subjects, flows_to)


INDEX = MetricIndex(None, ["train/grad_norm", "train/{tag}pg_loss", "train/loss", "perf/step_time"])


def claims_of(m: Mention) -> list[tuple[str, str, str]]:
    return [(c.metric, c.facet, c.value) for c in attribute(m, read(m.text, VOCABULARY), INDEX)]


def test_flow_beats_the_name() -> None:
    m = mention("norm after clipping", subjects=("total",), flows_to=("train/grad_norm",))
    assert claims_of(m) == [("train/grad_norm", "clipping", "after")]


def test_unresolved_subject_yields_nothing() -> None:
    """A `threshold` parameter's "cap applied after clipping" is not about the metric."""
    assert claims_of(mention("the cap applied after clipping", subjects=("threshold",))) == []


def test_free_text_needs_exactly_one_named_metric() -> None:
    assert claims_of(mention("train/grad_norm is measured after clipping.")) == [("train/grad_norm", "clipping", "after")]
    assert claims_of(mention("The gradient norm is measured after clipping.")) == []
    assert claims_of(mention("train/grad_norm and perf/step_time are measured after clipping.")) == []


def test_a_word_that_is_its_own_item_of_a_list_is_not_the_metric_s() -> None:
    """Parallel clauses, each with its own subject and the same verb, list items: "entropy"
    names one, the key another (miles: a docstring listing optional dump columns)."""
    text = "Columns that depend on the run (entropy needs a flag, `perf/step_time` needs a sync) are None when absent."
    assert claims_of(mention(text)) == []
    assert claims_of(mention("`perf/step_time` needs a sync, and it is summed over ranks.")) == [
        ("perf/step_time", "reduction", "sum"),
        ("perf/step_time", "scope", "global"),
    ]


def test_a_key_written_without_the_sections_logged_before_it_names_the_logged_key() -> None:
    """A reduction table's row names `raw/len_max`, which a helper logs as `multi/raw/len_max`."""
    index = MetricIndex(None, ["multi/raw/len_max", "train/loss"])
    text = "raw/len_max: the mean over the samples."
    assert [(c.metric, c.facet, c.value) for c in attribute(mention(text), read(text, VOCABULARY), index)] == [
        ("multi/raw/len_max", "reduction", "mean")
    ]


def test_free_text_bare_names_count_only_when_registered() -> None:
    """Megatron: "Each batch takes data_parallel_size samples (1 per rank)" is about the
    variable, not a metric that happens to share its name."""
    assert claims_of(mention("Each batch takes grad_norm samples (1 per rank).")) == []


def test_template_key_resolves_by_last_segment() -> None:
    assert claims_of(mention("loss summed over tokens", subjects=("pg_loss",))) == [("train/{tag}pg_loss", "reduction", "sum")]


def test_plain_word_needs_a_flow_or_the_registry() -> None:
    """Every `loss` parameter is not `train/loss` (seen on miles: examples/ and tests/)."""
    assert claims_of(mention("loss summed over tokens", subjects=("loss",))) == []
    flowing = mention("loss summed over tokens", subjects=("loss",), flows_to=("train/loss",))
    assert claims_of(flowing) == [("train/loss", "reduction", "sum")]


def test_span_points_at_the_phrase() -> None:
    m = Mention(SourceKind.DOCSTRING, "x.py", "Norm of the\n  gradients after clipping.", ((10, 5), (11, 9)), ("grad_norm",))
    [claim] = attribute(m, read(m.text, VOCABULARY), INDEX)
    assert (claim.span.line, claim.span.column, claim.span.end_column) == (11, 21, 35)
    assert claim.phrase == "after clipping"


def test_code_template_does_not_swallow_longer_names() -> None:
    """`agent/{key}_mean` in code must not claim `sum_of_sample_mean` (seen on miles)."""
    index = MetricIndex(None, ["agent/{key}_mean"])
    assert index.for_name("sum_of_sample_mean") == ()


def registered_index(tmp_path: Path, metrics: str, logged: tuple[str, ...] = ()) -> MetricIndex:
    path = tmp_path / "metrics.yaml"
    path.write_text(f"version: 1\nmetrics:\n{metrics}")
    return MetricIndex(registry.load(path, "metrics.yaml", load_builtin()[0])[0], logged)


def test_a_bare_identifier_never_fills_a_registry_placeholder(tmp_path: Path) -> None:
    """Issue 14: `rollout/{status}_count` claimed `token_count`; `{m}/output{i}`, `output_predictions`."""
    index = registered_index(tmp_path, '  "rollout/{status}_count":\n  "{m}/output{i}":\n  "train/{tag}grad_norm":\n')
    assert index.for_name("token_count") == ()
    assert index.for_name("output_predictions") == ()
    assert index.for_name("critic_grad_norm") == ()
    assert index.for_name("grad_norm") == ("train/{tag}grad_norm",)  # the fixed text itself
    assert index.for_name("rollout/aborted_count") == ("rollout/{status}_count",)  # a full key


def test_a_key_counts_once_however_many_templates_it_fits(tmp_path: Path) -> None:
    index = registered_index(tmp_path, '  "train/{x}_mean":\n  "train/{a}_{b}":\n  "eval/{a}_loss":\n  "eval/pg_lo{b}":\n')
    assert index.for_key("train/kl_mean") == ("train/{x}_mean",)  # the one whose fixed text pins it
    assert index.for_key("eval/pg_loss") == ()  # a tie: no one metric for sure


def test_two_keys_under_one_template_are_two_series(tmp_path: Path) -> None:
    index = registered_index(tmp_path, '  "rollout/{status}_count":\n')
    assert index.one_named_in("`rollout/aborted_count` is averaged over ranks.") == "rollout/{status}_count"
    assert index.one_named_in("`rollout/aborted_count` and `rollout/done_count` are averaged.") is None


def test_a_bare_key_names_a_metric_in_prose_only_as_an_alias(tmp_path: Path) -> None:
    """Megatron: a config field logged once, drafted as `data_parallel_size`, made every comment
    about the variable a claim."""
    index = registered_index(tmp_path, '  "data_parallel_size":\n  "train_loss":\n    aliases: [train_loss]\n')
    assert index.for_name("data_parallel_size") == ()
    assert index.one_named_in("Each data_parallel_size replica is global.") is None
    assert index.for_name("train_loss") == ("train_loss",)
    assert index.for_name("data_parallel_size", naming=True) == ("data_parallel_size",)  # a docs table of metrics
    assert index.for_key("data_parallel_size") == ("data_parallel_size",)  # what code logs under it


SCOPES = (
    'def log(tokens):\n    """Args:\n        tokens: Tokens per GPU in this step.\n    """\n    m = {"perf/tokens": tokens}  # {other}\n'
)
SCOPE_REGISTRY = "version: 1\nmetrics:\n  perf/tokens:\n    semantics:\n      scope: {scope}\n"


@pytest.mark.parametrize(
    ("other", "registry", "expected"),
    [
        ("per rank", None, []),  # one rank drives one device (rules/code/ranks.yaml `alike`): the texts agree
        ("per-rank count", "per-rank", []),
        ("summed over all ranks", None, ["ML002 train.py:3"]),
        ("per rank", "global", ["ML001 train.py:3", "ML001 train.py:5"]),
    ],
)
def test_per_rank_and_per_device_say_the_same_as_the_code_check_already_holds(
    in_tmp: Path, other: str, registry: str | None, expected: list[str]
) -> None:
    write_project(in_tmp, {"train.py": SCOPES.replace("{other}", other)}, SCOPE_REGISTRY.replace("{scope}", registry) if registry else None)
    assert finding_lines(invoke("check", ".", "--select", "ML001,ML002", "--no-cache")) == expected


def test_a_bounds_name_restated_by_a_text_is_no_reduction() -> None:
    """`max_requests: Maximum number of requests allowed` restates the setting's name (rules/
    names.yaml `bounds`); the same words about a key that ends with its reduction state it."""
    index = MetricIndex(None, ["engine/max_requests", "engine/requests_max"])
    for key, expected in (("max_requests", []), ("requests_max", [("engine/requests_max", "reduction", "max")])):
        text = "Maximum number of requests allowed in one step."
        found = attribute(mention(text, flows_to=(f"engine/{key}",)), read(text, VOCABULARY), index)
        assert [(c.metric, c.facet, c.value) for c in found] == expected
