"""Key templates: the index that answers `same_metric` for many keys at once agrees with
asking each key in turn."""

from hypothesis import given, settings
from hypothesis import strategies as st

from metriclint.base import keys

_SEGMENT = st.lists(st.sampled_from(["a", "b", "_x", "{p}", "{q}_", "grad", "{}"]), min_size=0, max_size=3).map("".join)
_KEY = st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEY, max_size=12), _KEY)
def test_key_set_finds_exactly_the_members_that_name_the_same_series(members: list[str], key: str) -> None:
    expected = [m for m in dict.fromkeys(members) if keys.same_metric(m, key)]
    assert keys.KeySet(members).same_metric(key) == expected


def test_key_set_keeps_the_order_members_were_given_in() -> None:
    members = ["train/{tag}grad_norm", "eval/loss", "train/grad_norm", "train/{role}grad_norm", "{section}/grad_norm"]
    assert keys.KeySet(members).same_metric("train/grad_norm") == [
        "train/{tag}grad_norm",
        "train/grad_norm",
        "train/{role}grad_norm",
        "{section}/grad_norm",
    ]
    assert keys.KeySet(members).same_metric("train/{x}grad_norm") == ["train/{tag}grad_norm", "train/grad_norm", "train/{role}grad_norm"]


def test_a_rewritten_key_is_what_the_str_methods_make_of_its_written_text() -> None:
    spaced = (("replace", (" ", "_")), ("lower", ()))
    assert keys.rewritten("Policy Loss", spaced) == "policy_loss"
    assert keys.rewritten("eval:Acc", (("removeprefix", ("eval:",)),)) == "Acc"
    # a template's placeholders stand for texts rewritten where they are filled: left as written
    assert keys.rewritten("Eval {Split} Loss", spaced) == "eval_{Split}_loss"
    assert keys.rewritten("eval:{split}", (("removeprefix", ("eval:",)),)) == "eval:{split}"
    # what the walk never writes (another method, another count of arguments) changes nothing
    assert keys.rewritten("Loss", (("zfill", ("9",)), ("lower", ("x",)))) == "Loss"
