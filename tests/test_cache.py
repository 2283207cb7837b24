"""A cache that cannot lie: entries are JSON rebuilt into exactly the expected types, about
the file they are named for; anything else is deleted and the file read again. The entry
name covers everything that changes a file's extraction, Python and the parsers included."""

from __future__ import annotations

import ast
import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, copy_fixture, invoke, read_sealed, write_sealed

from metriclint.base import plain
from metriclint.base.files import MAX_BYTES
from metriclint.extract import cache, kept, trust
from metriclint.model import Atom, CallFlow, CodeFact, Mention, ResultOf, SourceKind, Span
from metriclint.sources import DEFAULT_OPTIONS, Extraction, extractor_for


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and len(p.name) == 64)


def _demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    return project


def _forge(entry: Path, change: object) -> None:
    """Rewrite a cached extraction with `change(plain value)` applied, sealed with the key."""
    value = read_sealed(entry)
    change(value)  # type: ignore[operator]
    write_sealed(entry, "entry", value)


def _with_mentions(entries: list[Path]) -> Path:
    return next(e for e in entries if '"Extraction"' in e.read_text(encoding="utf-8") and read_sealed(e)["Extraction"][0])


def _forget_kept(cache: Path) -> None:
    """What the last run kept of each file (extract/kept.py) spares a warm run reading its
    entry; without it, the next run reads every entry."""
    shutil.rmtree(cache / "kept")


def test_entries_are_json_and_the_package_never_unpickles() -> None:
    for path in (ROOT / "metriclint").rglob("*.py"):
        imported = {a.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ImportFrom)}
        assert not imported & {"pickle", "marshal", "shelve", "dill"}, path


@pytest.mark.parametrize(
    ("project", "shown"),
    [("demo", "trainer/logging_utils.py"), ("inventory_workers", "crew/workers.py")],  # the second returns dicts in dicts (model.Item)
)
def test_an_extraction_comes_back_equal_from_its_plain_form(project: str, shown: str) -> None:
    source = (FIXTURES / project / shown).read_bytes()
    extraction = extractor_for(".py", DEFAULT_OPTIONS)(shown, source)  # type: ignore[misc]
    assert extraction.texts and extraction.functions
    back = plain.decoder(cache.Entry)(json.loads(json.dumps(plain.encoder(cache.Entry)(extraction))), shown)
    assert back == extraction


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("a line that is text", lambda v: v["Extraction"][0][0][0][3][0].__setitem__(0, "1")),
        ("a mention's text that is a number", lambda v: v["Extraction"][0][0][0].__setitem__(2, 7)),
        ("a field too many", lambda v: v["Extraction"][0][0][0].append(True)),
        ("a class it does not name", lambda v: v.__setitem__("Extraction", {"os.system": ["rm"]})),
        ("true for a number", lambda v: v["Extraction"][0][0][0][3][0].__setitem__(0, True)),
    ],
)
def test_an_entry_of_the_wrong_shape_is_deleted_and_the_file_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, change: object
) -> None:
    project = _demo(tmp_path, monkeypatch)
    first = invoke("check", ".", "--cache-dir", "c").output
    forged = _with_mentions(_entries(project / "c"))
    _forge(forged, change)
    _forget_kept(project / "c")
    second = invoke("check", ".", "--cache-dir", "c")
    assert second.stdout == first and second.stderr == DROPPED, what
    assert plain.decoder(cache.Entry)(read_sealed(forged), read_sealed(forged)["Extraction"][0][0][0][1])


def test_an_entry_cannot_place_a_finding_in_another_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _demo(tmp_path, monkeypatch)
    first = invoke("check", ".", "--cache-dir", "c").output
    forged = _with_mentions(_entries(project / "c"))
    _forge(forged, lambda v: v["Extraction"][0][0][0].__setitem__(1, "/etc/passwd"))
    _forget_kept(project / "c")
    second = invoke("check", ".", "--cache-dir", "c").stdout
    assert second == first and "/etc/passwd" not in second


DROPPED = "warning: 1 cache file was not written with this machine's cache key, or damaged: not used, and what they held was read again from the sources\n"


def _forged_without_the_key(folder: Path, old: bytes, new: bytes) -> list[Path]:
    """Every cache file holding `old`, rewritten with `new` in its place and its digest line
    kept: what a cache restored from elsewhere may hold."""
    changed = [p for p in folder.rglob("*") if p.is_file() and old in p.read_bytes()]
    for path in changed:
        path.write_bytes(path.read_bytes().replace(old, new))
    return changed


@pytest.mark.parametrize("digest", ["kept", "recomputed without the key", "removed"])
def test_a_well_formed_forged_entry_changes_no_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, digest: str) -> None:
    """The issue's reproduction: "after" replaced by "before" in the demo's cached entry (and
    in what the last run kept) made `check` print nothing and exit 0."""
    project = _demo(tmp_path, monkeypatch)
    first = invoke("check", ".", "--cache-dir", "c")
    assert first.exit_code == 1 and "ML001" in first.stdout
    changed = _forged_without_the_key(project / "c", b"after clipping", b"before clipping")
    assert {p.parent.parent.name for p in changed} >= {cache.FORMAT} and any(p.parent.name == "kept" for p in changed)
    for path in changed:
        data = path.read_bytes()[65:]
        if digest == "recomputed without the key":
            path.write_bytes(trust.seal(b"a key of the forger's own", "entry" if path.parent.name != "kept" else "kept", path.name, data))
        elif digest == "removed":
            path.write_bytes(data)
    second = invoke("check", ".", "--cache-dir", "c")
    assert (second.exit_code, second.stdout) == (1, first.stdout)
    assert invoke("check", ".", "--cache-dir", "c").stdout == first.stdout


def test_a_corrupt_entry_is_dropped_with_one_warning_and_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry sealed with the key whose decoding raises what no check foresaw (an index out
    of range, here): dropped, its file read again, one warning for the run."""
    project = _demo(tmp_path, monkeypatch)
    first = invoke("check", ".", "--cache-dir", "c").stdout
    _forget_kept(project / "c")
    for entry in _entries(project / "c"):
        write_sealed(entry, "entry", {"Extraction": [[[]]]})
    second = invoke("check", ".", "--cache-dir", "c")
    assert second.stdout == first and second.exit_code == 1
    assert second.stderr == DROPPED.replace("1 cache file was", "3 cache files were")
    third = invoke("check", ".", "--cache-dir", "c")
    assert (third.stdout, third.stderr) == (first, "")


def test_a_span_about_another_path_is_refused() -> None:
    with pytest.raises(plain.Invalid):
        plain.decoder(Span)(["elsewhere.py", 1, 1, 1, 2], "here.py")


@pytest.mark.parametrize("change", ["python", "parsers"])
def test_the_entry_names_change_with_python_and_the_parsers(monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    before = cache.salt(b"", DEFAULT_OPTIONS)
    if change == "python":
        monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    else:
        monkeypatch.setattr(cache, "parsers", lambda: "libcst=0.0.1")
    assert cache.salt(b"", DEFAULT_OPTIONS) != before


def test_the_parsers_versions_are_known() -> None:
    assert {"libcst", "markdown_it_py", "pyyaml", "tree_sitter", "tree_sitter_javascript"} <= {
        item.split("=")[0] for item in cache.parsers().split()
    }


def _chain(depth: int) -> CallFlow:
    """A call passing a result that holds, twice, a result that holds ... a code fact: a
    chain of helpers as deep as a real one, whose parts are shared."""
    atom: Atom = CodeFact("reduction", "max", Span("m.py", 1, 1, 1, 4), "max", "returns the largest item")
    for level in range(depth):
        atom = ResultOf(f"m.helper{level}", None, "m.main", ((0, frozenset({atom})), ("again", frozenset({atom}))))
    return CallFlow("m.log", "m.main", Span("m.py", 9, 1, 9, 9), ((0, frozenset({atom})),))


def test_a_value_met_again_in_an_entry_is_written_once() -> None:
    extraction = Extraction(calls=(_chain(16),))
    written = json.dumps(plain.encoder(cache.Entry)(extraction))
    assert len(written) < 10_000  # in full, 2**16 copies of the fact: megabytes
    assert plain.decoder(cache.Entry)(json.loads(written), "m.py") == extraction


@pytest.mark.parametrize("reference", [7, -1, "0", True, 0.0])
def test_a_reference_to_no_value_written_before_is_refused(reference: object) -> None:
    written = plain.encoder(cache.Entry)(Extraction(calls=(_chain(2),)))
    atoms = written["Extraction"][5][0][3][0][1]
    atoms[0]["ResultOf"][3][1][1] = [{"": reference}]  # the second argument of the outer result
    with pytest.raises(plain.Invalid):
        plain.decoder(cache.Entry)(written, "m.py")


def test_a_reference_to_a_value_of_another_type_is_refused() -> None:
    place = tuple[CodeFact | str, ResultOf | str]
    fact = CodeFact("unit", "bytes", Span("m.py", 1, 1, 1, 2), "len", "counts")
    written = plain.encoder(place)((fact, "x"))
    assert plain.decoder(place)(written, "m.py") == (fact, "x")
    written[1] = {"": 0}  # the fact, where only a call's result may be
    with pytest.raises(plain.Invalid):
        plain.decoder(place)(written, "m.py")


def test_an_empty_extraction_is_a_valid_entry() -> None:
    assert plain.decoder(cache.Entry)(plain.encoder(cache.Entry)(Extraction()), "x.py") == Extraction()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_registry_edit_that_leaves_the_phrases_alone_reads_every_file_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extracted: list[str]
) -> None:
    project = _demo(tmp_path, monkeypatch)
    registry = project / "metrics.yaml"
    invoke("check", ".", "--cache-dir", "c")
    assert extracted == ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]
    entries = _entries(project / "c")
    edits = [
        ("version: 1\n", "# the metrics the trainer logs\nversion: 1\n"),  # a comment, moving every line
        ("averaged over the tokens of the step.", "averaged over the tokens of one step."),  # a description
        ("  train/loss:\n", "  train/lr:\n    description: The learning rate.\n  train/loss:\n"),  # a metric
        ("version: 1\n", "version: 1\nfacets:\n  clipping:\n    description: When the norm is taken.\n    values:\n      before: []\n"),
    ]
    for old, new in edits:
        extracted.clear()
        _edit(registry, old, new)
        result = invoke("check", ".", "--cache-dir", "c")
        assert extracted == [], (new, result.output)
        assert "ML001" in result.output
    assert _entries(project / "c") == entries


def test_a_registry_edit_to_the_phrases_reads_the_files_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extracted: list[str]
) -> None:
    project = _demo(tmp_path, monkeypatch)
    invoke("check", ".", "--cache-dir", "c")
    extracted.clear()
    _edit(project / "metrics.yaml", "version: 1\n", "version: 1\nfacets:\n  clipping:\n    values:\n      before: [ahead of the clip]\n")
    invoke("check", ".", "--cache-dir", "c")
    assert extracted == ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]


@pytest.mark.parametrize(
    "command", [["check"], ["audit"], ["fix", "--diff"], ["explain-metric", "train/loss"], ["init", "-o", "draft.yaml"], ["sources"]]
)
def test_every_analysing_command_reads_and_fills_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extracted: list[str], command: list[str]
) -> None:
    _demo(tmp_path, monkeypatch)
    invoke(*command, "--cache-dir", "c")
    assert extracted == ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]
    extracted.clear()
    invoke("check", "--cache-dir", "c")
    assert extracted == []


def _large(size: int) -> Extraction:
    return Extraction(texts=((Mention(SourceKind.DOCSTRING, "big.py", "x" * size, ((1, 1),)), ()),))


def test_an_entry_larger_than_the_largest_source_file_is_read_back(tmp_path: Path) -> None:
    """An entry names its file in every text it holds, so it can be larger than the file (33 MB
    for a 16 MB module): read with `max-file-size`, a warm run of a large file read it again."""
    store, large = cache.Cache(tmp_path / "c"), _large(MAX_BYTES + 1)
    store.put("ab" * 32, large, tmp_path / "big.py")
    assert store.get("ab" * 32, "big.py") == large


def test_an_entry_larger_than_the_whole_cache_is_not_written(tmp_path: Path) -> None:
    store = cache.Cache(tmp_path / "c", limit=1000)
    store.put("ab" * 32, _large(1000), tmp_path / "big.py")
    store.put("cd" * 32, _large(10), tmp_path / "small.py")
    assert [p.name for p in _entries(tmp_path / "c")] == ["cd" * 32]


def test_a_cache_made_under_the_ci_secret_stays_warm_only_where_the_secret_is_held(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extracted: list[str],
) -> None:
    project = _demo(tmp_path, monkeypatch)
    monkeypatch.setenv("METRICLINT_CACHE_KEY", "the CI secret")
    first = invoke("check", ".", "--cache-dir", "c").stdout
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another machine"))  # the cache restored in another job
    extracted.clear()
    assert invoke("check", ".", "--cache-dir", "c").stdout == first and extracted == []
    monkeypatch.setenv("METRICLINT_CACHE_KEY", "an untrusted branch's guess")
    _forget_kept(project / "c")
    second = invoke("check", ".", "--cache-dir", "c")
    assert second.stdout == first and sorted(extracted) == ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]
    assert second.stderr == DROPPED.replace("1 cache file was", "4 cache files were")  # the entries and the files' statuses


def test_the_machines_key_is_made_once_outside_the_cache_and_kept_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _demo(tmp_path, monkeypatch)
    invoke("check", ".", "--cache-dir", "c")
    key = trust.key_file()
    assert key.is_file() and key.stat().st_mode & 0o077 == 0 and not key.is_relative_to(tmp_path / "demo")
    made = key.read_bytes()
    invoke("check", ".", "--cache-dir", "c")
    assert key.read_bytes() == made and len(bytes.fromhex(made.decode().strip())) == 32


def test_without_a_key_to_be_had_the_run_goes_without_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _demo(tmp_path, monkeypatch)
    (tmp_path / "blocked").write_text("a file where the configuration folder would be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "blocked"))
    result = invoke("check", ".", "--cache-dir", "c")
    assert result.exit_code == 1 and "ML001" in result.stdout
    assert (
        result.stderr.startswith("warning: no cache key (")
        and "METRICLINT_CACHE_KEY gives one): running without the cache" in result.stderr
    )
    assert not (project / "c").exists()


def test_a_run_whose_use_of_the_cache_raises_is_run_again_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a cache file makes the run raise past the checks on reading it: the findings of
    a run without the cache, and one warning."""
    _demo(tmp_path, monkeypatch)
    first = invoke("check", ".", "--cache-dir", "c").stdout

    def broken(*given: object) -> None:
        raise IndexError("tuple index out of range")

    monkeypatch.setattr(kept, "load", broken)
    second = invoke("check", ".", "--cache-dir", "c")
    assert (second.exit_code, second.stdout, second.stderr) == (1, first, DROPPED)
