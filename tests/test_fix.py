"""`metriclint fix`: each source kind rewritten to the registry's wording, nothing else touched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import FIXTURES, Golden, copy_fixture, invoke

from metriclint.checks.rewording import styled
from metriclint.fix import rewrite as fixing
from metriclint.model import Finding, Fix, Severity, Span

PROJECT = FIXTURES / "fix_sources"
NEGATED = (
    "comments.py:3:46: ML001 not fixed (negated or coordinated phrasing; reword it by hand): train/grad_norm: "
    'comment says clipping=after ("never before clipping"); registry says before (metrics.yaml:7)'
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "project"
    copy_fixture(PROJECT, target, "*.fixed", "expected.txt")
    monkeypatch.chdir(target)
    return target


def _sources() -> list[Path]:
    return sorted(p.relative_to(PROJECT) for p in PROJECT.rglob("*") if p.is_file() and p.suffix not in (".fixed", ".txt"))


def _expected(name: Path) -> bytes:
    fixed = PROJECT / f"{name}.fixed"
    return (fixed if fixed.exists() else PROJECT / name).read_bytes()


def test_fix_rewrites_every_source_kind_and_reports_the_negated_phrase(project: Path, golden: Golden) -> None:
    result = invoke("fix", ".")
    assert result.exit_code == 1  # the negated phrase is left for a human
    assert NEGATED in result.output.splitlines()
    assert result.output.splitlines()[-1] == "Fixed 10 findings in 7 files; 1 finding left."
    for name in _sources():
        fixed = (project / name).read_bytes()
        if fixed != (PROJECT / name).read_bytes() or (PROJECT / f"{name}.fixed").exists():
            golden(PROJECT / f"{name}.fixed", fixed.decode("utf-8"))  # what `fix` made of the file: *.fixed
    assert len(list(PROJECT.rglob("*.fixed"))) == 7
    assert not [p for p in project.rglob("*.metriclint")]  # no temporary file left behind


def test_fix_twice_changes_nothing_the_second_time(project: Path) -> None:
    invoke("fix", ".")
    before = {name: (project / name).read_bytes() for name in _sources()}
    result = invoke("fix", ".")
    assert result.output.splitlines() == [NEGATED, "Fixed 0 findings in 0 files; 1 finding left."]
    assert {name: (project / name).read_bytes() for name in _sources()} == before


def test_diff_prints_the_changes_and_writes_nothing(project: Path) -> None:
    result = invoke("fix", "--diff", ".")
    assert result.exit_code == 1
    for name in _sources():
        assert (project / name).read_bytes() == (PROJECT / name).read_bytes()
    assert "-        grad_norm: Global gradient norm after\n+        grad_norm: Global gradient norm before\n" in result.stdout
    assert '-  "train/grad_norm": "Größe der Gradienten: global norm after clipping.",\n' in result.stdout
    headers = [line for line in result.stdout.splitlines() if line.startswith("+++ ")]
    assert headers == [
        f"+++ b/{name}"
        for name in ("comments.py", "dashboards/serve.json", "docs/help.yaml", "docs/metrics.md", "metrics.yaml", "train.py", "web/help.ts")
    ]
    assert 'train.py:8:41: ML001 would fix "after clipping" -> "before clipping" (train/grad_norm)' in result.stderr


@pytest.mark.parametrize("name", ["train.py", "web/help.ts", "docs/help.yaml", "docs/metrics.md"])
def test_crlf_line_endings_survive(project: Path, name: str) -> None:
    path = project / name
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    invoke("fix", ".")
    assert path.read_bytes() == _expected(Path(name)).replace(b"\n", b"\r\n")


def test_a_byte_order_mark_and_crlf_survive_in_python(project: Path) -> None:
    path = project / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    invoke("fix", ".")
    assert path.read_bytes() == b"\xef\xbb\xbf" + _expected(Path("train.py")).replace(b"\n", b"\r\n")


def test_a_latin1_python_file_stays_latin1(project: Path) -> None:
    path = project / "latin.py"
    source = '# -*- coding: latin-1 -*-\ndef f(tracker, norm):\n    tracker.log({"train/grad_norm": norm})  # Größe after clipping\n'
    path.write_bytes(source.encode("latin-1"))
    invoke("fix", ".")
    assert path.read_bytes() == source.replace("after", "before").encode("latin-1")


def test_a_read_only_file_is_reported_and_left_alone(project: Path) -> None:
    path = project / "train.py"
    path.chmod(0o444)
    result = invoke("fix", ".")
    assert result.exit_code == 1
    assert path.read_bytes() == (PROJECT / "train.py").read_bytes()
    assert "train.py:8:41: ML001 not fixed (the file is read-only; not written)" in result.output
    assert (project / "comments.py").read_bytes() == _expected(Path("comments.py"))  # the others are fixed


def test_the_file_mode_is_kept(project: Path) -> None:
    path = project / "train.py"
    path.chmod(0o751)
    invoke("fix", ".")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_bytes() == _expected(Path("train.py"))


def _finding(path: str, line: int, column: int, phrase: str, replacement: str) -> Finding:
    span = Span(path, line, column, line, column + len(phrase))
    return Finding(
        rule="ML001", name="registry-contradiction", severity=Severity.ERROR, span=span, message="m", fix=Fix(span, phrase, replacement)
    )


def test_a_file_changed_since_it_was_read_is_not_written(project: Path) -> None:
    (rewrite,), _ = fixing.plan((_finding("comments.py", 2, 47, "After clipping", "Before clipping"),))
    (project / "comments.py").write_text("# edited meanwhile\n" + (PROJECT / "comments.py").read_text())
    assert fixing.write(rewrite, [project]) == "the file changed since it was read; not written (run fix again)"
    assert (project / "comments.py").read_text().startswith("# edited meanwhile\n")


def test_a_rewrite_that_would_not_parse_is_not_written(project: Path) -> None:
    bad = _finding("train.py", 10, 56, "ms", 's"""')  # would close the docstring early
    ok = _finding("train.py", 10, 56, "ms", "s")
    rewrites, unfixed = fixing.plan((bad,))
    assert rewrites == [] and unfixed[0][1].startswith("the rewrite would not parse")
    assert fixing.plan((ok,))[1] == []


def test_a_phrase_no_longer_at_its_place_is_not_rewritten(project: Path) -> None:
    _, unfixed = fixing.plan((_finding("comments.py", 2, 46, "After clipping", "Before clipping"),))
    assert unfixed[0][1] == 'the file does not say "After clipping" in one piece there; reword it by hand'


def test_wording_keeps_a_capital_and_a_wrapped_line() -> None:
    assert styled("before clipping", "After clipping") == "Before clipping"
    assert styled("before clipping", "AFTER CLIPPING") == "BEFORE CLIPPING"
    assert styled("GB", "Megabytes") == "GB"
    assert fixing.respaced("after\n    clipping", "before clipping") == "before\n    clipping"
    assert fixing.respaced("post-clip", "before clipping") == "before clipping"
    assert fixing.respaced("after\n  being clipped", "before clipping") == "before\n  clipping"


def test_a_text_stating_two_values_is_not_fixable(in_tmp: Path) -> None:
    (in_tmp / "metrics.yaml").write_text("version: 1\nmetrics:\n  train/loss:\n    semantics:\n      reduction: mean\n")
    (in_tmp / "t.py").write_text(
        'def f(tracker, x):\n    tracker.log({"train/loss": x})  # the sum of token losses, not the mean of them\n'
    )
    result = invoke("fix", ".")
    assert result.exit_code == 1
    assert "not fixed (the text states several values of reduction; reword it by hand)" in result.output
    assert "not fixed (negated or coordinated phrasing; reword it by hand)" in result.output
    assert os.path.getsize(in_tmp / "t.py") == len(
        'def f(tracker, x):\n    tracker.log({"train/loss": x})  # the sum of token losses, not the mean of them\n'
    )


def test_findings_of_rules_without_a_fix_are_counted_not_listed(in_tmp: Path) -> None:
    (in_tmp / "metrics.yaml").write_text("version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: before\n")
    (in_tmp / "t.py").write_text('def f(tracker, x):\n    tracker.log({"train/grad_norm": x, "train/other": x})  # after clipping\n')
    result = invoke("fix", ".")
    assert result.output.splitlines() == [
        't.py:2:62: ML001 fixed "after clipping" -> "before clipping" (train/grad_norm)',
        "1 other finding of rules with no automatic fix; `metriclint check` lists them.",
        "Fixed 1 finding in 1 file; 1 finding left.",
    ]
    assert result.exit_code == 0  # what is left is a warning (ML004)


def test_a_two_valued_facet_swaps_a_phrase_for_its_counterpart(in_tmp: Path) -> None:
    """ "the post-clip norm" becomes "the pre-clip norm", not "the before clipping norm"."""
    (in_tmp / "metrics.yaml").write_text(
        "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
    )
    module = in_tmp / "step.py"
    module.write_text('def log(grad_norm):\n    """Args:\n        grad_norm: The post-clip norm.\n    """\n')
    invoke("fix", ".")
    assert module.read_text() == 'def log(grad_norm):\n    """Args:\n        grad_norm: The pre-clip norm.\n    """\n'


def test_fix_keeps_hard_links_owner_group_and_extended_attributes(project: Path) -> None:
    """A rename would split the links and drop what the old file carried besides its bytes."""
    linked, other = project / "train.py", project / "comments.py"
    os.link(linked, project / "train_link.py")
    os.setxattr(other, "user.origin", b"review")
    if os.geteuid() == 0:
        os.chown(other, 4321, 4322)
    invoke("fix", ".")
    assert (project / "train_link.py").read_bytes() == linked.read_bytes() == _expected(Path("train.py"))
    assert linked.stat().st_ino == (project / "train_link.py").stat().st_ino
    assert other.read_bytes() == _expected(Path("comments.py"))
    assert os.getxattr(other, "user.origin") == b"review"
    if os.geteuid() == 0:
        assert (other.stat().st_uid, other.stat().st_gid) == (4321, 4322)


def test_fix_writes_through_a_link_inside_the_project_and_refuses_one_out_of_it(project: Path, tmp_path: Path) -> None:
    (project / "comments.py").rename(project / "real_comments.py")
    (project / "comments.py").symlink_to("real_comments.py")
    invoke("fix", "comments.py")
    assert (project / "comments.py").is_symlink() and (project / "real_comments.py").read_bytes() == _expected(Path("comments.py"))

    outside = tmp_path / "elsewhere.py"
    outside.write_bytes((PROJECT / "comments.py").read_bytes())
    (project / "comments.py").unlink()
    (project / "comments.py").symlink_to(outside)
    (rewrite,), _ = fixing.plan((_finding("comments.py", 2, 47, "After clipping", "Before clipping"),))
    assert fixing.write(rewrite, [project]) == "a link to a file outside the project; not written"
    assert outside.read_bytes() == (PROJECT / "comments.py").read_bytes() and (project / "comments.py").is_symlink()


def test_a_file_changed_between_the_check_and_the_fix_is_not_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The phrase is still where it was, but the text around it is not what was analysed: a
    `not` now turns it around, so the finding no longer holds."""
    plan = fixing.plan
    source = project / "comments.py"
    analysed = source.read_text(encoding="utf-8")

    def edited_meanwhile(findings: tuple[Finding, ...]) -> object:
        source.write_text(analysed.replace("After clipping", "After clipping, not", 1), encoding="utf-8")
        return plan(findings)

    monkeypatch.setattr(fixing, "plan", edited_meanwhile)
    result = invoke("fix", "comments.py")
    assert "not fixed (the file changed since it was checked; not written (run fix again))" in result.output
    assert source.read_text(encoding="utf-8") == analysed.replace("After clipping", "After clipping, not", 1)


@pytest.mark.parametrize("registry", [(), ("--registry", "metrics.yaml")])
def test_fix_refuses_a_named_link_out_of_the_project_and_leaves_its_target_alone(
    project: Path, tmp_path: Path, registry: tuple[str, ...]
) -> None:
    """The issue's reproduction: `fix notes.py`, notes.py a link to ../elsewhere/victim.py,
    rewrote the file outside the project (with --registry, its project was the target's)."""
    victim = tmp_path / "elsewhere" / "victim.py"
    victim.parent.mkdir()
    victim.write_bytes((PROJECT / "comments.py").read_bytes())
    (project / "notes.py").symlink_to("../elsewhere/victim.py")
    before = {p: p.read_bytes() for p in [*project.rglob("*"), victim] if p.is_file()}
    result = invoke("fix", "notes.py", *registry)
    assert result.exit_code == 2
    assert result.stderr == (
        f"metriclint: notes.py leads through a link out of its project (.) to {victim}; not written (name that file itself to write it)\n"
    )
    assert {p: p.read_bytes() for p in before} == before
    named = invoke("fix", str(victim), "--registry", "metrics.yaml")  # the target named itself: the user's choice
    assert named.exit_code == 1 and victim.read_bytes() != before[victim]


@pytest.mark.parametrize(
    "command",
    [
        ("check", ".", "--output-file", "out.txt"),
        ("check", ".", "--write-baseline", "out.txt"),
        ("init", ".", "--output", "out.txt"),
        ("generate", "tooltips", "--format", "json", "--output", "out.txt"),
    ],
)
def test_every_writer_refuses_a_link_out_of_the_project(project: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    (project / "out.txt").symlink_to(outside)
    result = invoke(*command)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert f"out.txt leads through a link out of its project (.) to {outside}; not written" in result.stderr
    assert outside.read_text() == "mine" and (project / "out.txt").is_symlink()
    (project / "out.txt").unlink()
    (project / "out.txt").symlink_to("inside.txt")  # within the project: written through, the link kept
    invoke(*command, *(["--force"] if command[0] == "init" else []))
    assert (project / "inside.txt").stat().st_size > 0 and (project / "out.txt").is_symlink()


def test_a_write_through_a_linked_folder_and_back_up_is_refused_too(project: Path, tmp_path: Path) -> None:
    """`linked/../out.txt` is, for the system, out.txt beside the link's target: not in the project."""
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (project / "linked").symlink_to(tmp_path / "elsewhere" / "sub")
    result = invoke("check", ".", "--output-file", "linked/../out.txt")
    assert result.exit_code == 2 and "linked/../out.txt leads through a link out of its project (.)" in result.stderr
    assert not (tmp_path / "elsewhere" / "out.txt").exists() and not (project / "out.txt").exists()


def test_a_link_out_of_a_folder_that_is_no_project_is_refused_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No settings and no registry where the link is (the registry given on the command line):
    the link's folder is its project."""
    (tmp_path / "work").mkdir()
    victim = tmp_path / "elsewhere" / "victim.py"
    victim.parent.mkdir()
    victim.write_bytes((PROJECT / "comments.py").read_bytes())
    (tmp_path / "work" / "notes.py").symlink_to(victim)
    monkeypatch.chdir(tmp_path / "work")
    result = invoke("fix", "notes.py", "--registry", str(PROJECT / "metrics.yaml"))
    assert result.exit_code == 2 and "notes.py leads through a link out of its project (.)" in result.stderr
    assert victim.read_bytes() == (PROJECT / "comments.py").read_bytes()
