"""The live check's readers on runs as they come: a text log read back by the project's own
format strings, and bad input (a wrong checksum, a truncated record, a length near 2^63, NaN
and infinity, torn JSON lines, a database that is not MLflow's) giving a finding or a clear
message, never a traceback."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project
from live_writers import json_lines, tensorboard, trainer_state

pytest.importorskip("google_crc32c")

from metriclint.live.points import Corrupt, Wanted  # noqa: E402
from metriclint.live.readers.tfevents import EventFile, masked_crc  # noqa: E402

TRAIN = '''\
def report(iteration, grad_norm, loss, writer):
    """Logs one iteration.

    Args:
        grad_norm: The gradient norm after clipping.
    """
    writer.add_scalar("grad-norm", grad_norm, iteration)
    writer.add_scalar("lm loss", loss, iteration)
    line = f" iteration {iteration:8d}/ 1000 |"
    line += f" lm loss: {loss:.6E} |"
    line += f" grad norm: {grad_norm:.3f} |"
    print(line)
'''
REGISTRY = "version: 1\nmetrics:\n  grad-norm:\n    aliases: [grad_norm]\n  lm loss: {}\n"


def _printed(norms: list[float]) -> str:
    """The log `report` prints, run by run, after a timestamp and among other lines."""
    lines = ["starting"]
    for i, norm in enumerate(norms, 1):
        line = f" iteration {10 * i:8d}/ 1000 |"
        line += f" lm loss: {2.5 - i / 10:.6E} |"
        line += f" grad norm: {norm:.3f} |"
        lines.append(f"[2024-01-01 00:00:0{i}] {line}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("norms", "expected"), [([0.8, 2.4, 0.9], ["ML011 train.py:5"]), ([0.8, 0.95, 0.9], [])])
def test_a_text_log_is_read_by_the_format_strings_that_printed_it(norms: list[float], expected: list[str], in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": TRAIN, "train.log": _printed(norms)}, REGISTRY)
    result = invoke("live-check", ".", "--run", "train.log", "--no-cache", "--fact", "max_grad_norm=1.0")
    assert finding_lines(result) == expected, result.output
    if expected:
        assert "first at step 20: 2.4 (train.log)" in result.output  # the iteration slot gives the step


def test_a_text_log_without_templates_is_said_to_be_unread(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n", "train.log": "iteration 1 | loss 2.0\n"}, REGISTRY)
    result = invoke("live-check", ".", "--run", "train.log", "--no-cache")
    assert "ML900 a text log, but the project has no log message with a logged value to read it by" in result.output


def _events(folder: Path) -> Path:
    tensorboard(folder, {"train/grad_norm": [(1, 0.5), (2, 2.5), (3, 0.7)]})
    (found,) = folder.glob("events.out.tfevents.*")
    return found


def _live(folder: Path, *args: str) -> list[str]:
    write_project(folder, {"train.py": "x = 1\n"}, "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: after\n")
    return invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0", *args).output.splitlines()


def test_a_wrong_data_checksum_stops_the_file_with_ml900(in_tmp: Path) -> None:
    path = _events(in_tmp / "run")
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF  # inside the last record's data
    path.write_bytes(bytes(data))
    output = _live(in_tmp)
    assert any("ML900 run file: the record at byte" in line and "wrong data checksum" in line for line in output), output
    assert any("ML011" in line for line in output)  # the records before it were read


def test_a_truncated_last_record_ends_the_file_quietly(in_tmp: Path) -> None:
    path = _events(in_tmp / "run")
    path.write_bytes(path.read_bytes()[:-5])  # a writer still writing
    output = _live(in_tmp)
    assert not any("ML900" in line for line in output), output


@pytest.mark.parametrize("length", [2**63 - 1, 2**64 - 1, 10**12])
def test_a_length_no_file_can_hold_is_ml900(length: int, in_tmp: Path) -> None:
    folder = in_tmp / "run"
    path = _events(folder)
    header = struct.pack("<Q", length)
    path.write_bytes(path.read_bytes() + header + struct.pack("<I", masked_crc(header)) + b"\0" * 20)
    output = _live(in_tmp)
    assert any("ML900 run file: the record at byte" in line and "says it holds" in line for line in output), output


def test_a_wrong_length_checksum_is_ml900(in_tmp: Path) -> None:
    path = _events(in_tmp / "run")
    path.write_bytes(path.read_bytes() + struct.pack("<QI", 20, 12345) + b"\0" * 24)
    assert any("wrong length checksum" in line for line in _live(in_tmp))


def test_an_event_file_is_read_from_an_offset(tmp_path: Path) -> None:
    """What the offsets cache resumes from: the points after a whole record, and the offset
    after the last one read."""
    path = _events(tmp_path)
    first = EventFile(path, "e", Wanted(lambda key: True), "")
    everything = list(first.points())
    assert [p[2:4] for p in everything] == [(1, 0.5), (2, 2.5), (3, pytest.approx(0.7))]
    assert first.offset == path.stat().st_size
    again = EventFile(path, "e", Wanted(lambda key: True), "", offset=first.offset)
    assert list(again.points()) == []


def test_nan_and_infinity_are_values_not_crashes(in_tmp: Path) -> None:
    trainer_state(in_tmp / "run", [{"step": 1, "train/grad_norm": math.nan}, {"step": 2, "train/grad_norm": math.inf}])
    assert "NaN" in (in_tmp / "run" / "trainer_state.json").read_text()
    output = _live(in_tmp)
    assert any("ML011" in line and "step 2: inf" in line for line in output), output


def test_torn_json_lines_are_skipped_and_counted(in_tmp: Path) -> None:
    path = json_lines(in_tmp / "run" / "log.jsonl", [{"step": 1, "train/grad_norm": 0.5}, {"step": 2, "train/grad_norm": 3.0}])
    path.write_text(path.read_text() + '{"step": 3, "train/gr\n[1, 2]\n', encoding="utf-8")
    output = _live(in_tmp)
    assert any("ML900 run file: line 3 is not a JSON object; skipped (and 1 more)" in line for line in output), output
    assert any("ML011" in line for line in output)


def test_a_truncated_trainer_state_is_ml900(in_tmp: Path) -> None:
    folder = trainer_state(in_tmp / "run", [{"step": 1, "train/grad_norm": 3.0}, {"step": 2, "train/grad_norm": 0.5}])
    text = (folder / "trainer_state.json").read_text()
    (folder / "trainer_state.json").write_text(text[: text.index('"step": 2')], encoding="utf-8")
    output = _live(in_tmp)
    assert any("ML900 run file: not a trainer state" in line for line in output), output
    assert any("ML011" in line for line in output)  # the entries before the cut


def test_a_database_that_is_not_mlflows_is_ml900(in_tmp: Path) -> None:
    import sqlite3

    (in_tmp / "run").mkdir()
    sqlite3.connect(in_tmp / "run" / "other.db").execute("CREATE TABLE t (x)").connection.commit()
    assert any("ML900 run file: not an MLflow tracking database" in line for line in _live(in_tmp))


def test_a_wandb_file_with_a_wrong_checksum_is_ml900(in_tmp: Path) -> None:
    from metriclint.live.readers import wandb

    folder = in_tmp / "run"
    folder.mkdir()
    body = b"\x12\x00"  # a Record with an empty history
    (folder / "run-x.wandb").write_bytes(wandb.MAGIC + b"\x00" + struct.pack("<IHB", 1, len(body), 1) + body)
    assert any("ML900 run file: the record at byte 7 has a wrong checksum" in line for line in _live(in_tmp))


def test_usage_errors_are_exit_2(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, None)
    assert invoke("live-check", ".", "--run", "nowhere").exit_code == 2
    (in_tmp / "run.jsonl").write_text("{}\n")
    result = invoke("live-check", ".", "--run", "run.jsonl", "--fact", "max_grad_nrom=1")
    assert result.exit_code == 2 and "is not KEY=VALUE with a KEY of" in result.output
    assert invoke("live-check", ".", "--run", "run.jsonl", "--fact", "max_grad_norm=nan").exit_code == 2


def test_a_corrupt_record_in_the_reader_itself_raises_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1"
    body = b"\x2a\xff"  # field 5 (summary) claiming 127+ bytes it does not have
    header = struct.pack("<Q", len(body))
    path.write_bytes(header + struct.pack("<I", masked_crc(header)) + body + struct.pack("<I", masked_crc(body)))
    with pytest.raises(Corrupt, match="does not decode"):
        list(EventFile(path, "e", Wanted(lambda key: True), "").points())


def test_every_format_carries_the_live_findings(in_tmp: Path) -> None:
    json_lines(in_tmp / "run" / "log.jsonl", [{"step": 1, "train/grad_norm": 3.0}])
    _live(in_tmp)
    for form in ("json", "json-lines", "sarif", "github", "gitlab", "text"):
        output = invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0", "--format", form).output
        assert "ML011" in output and "step 1: 3.0" in output, (form, output)
    document = json.loads(invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0", "--format", "json").output)
    (finding,) = document["findings"]
    assert finding["related"][0]["path"] == "run/log.jsonl" and finding["facet"] == "clipping"


def test_a_git_lfs_pointer_is_said_to_be_one(in_tmp: Path) -> None:
    (in_tmp / "run").mkdir()
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 40991\n"
    (in_tmp / "run" / "events.out.tfevents.1674944078.host.1").write_text(pointer, encoding="utf-8")
    assert any("ML900 run file: a Git LFS pointer, not the run file itself" in line for line in _live(in_tmp))


def _spoil_first_record_and_append(path: Path, extra: Path) -> None:
    """The first record spoiled in place (read again from the start, the file stops there), and
    one more record appended, as its writer appends it."""
    records, data = [], extra.read_bytes()
    at = 0
    while at + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        records.append(data[at : at + 16 + length])
        at += 16 + length
    written = bytearray(path.read_bytes())
    written[20] ^= 0xFF
    path.write_bytes(bytes(written) + records[-1])


def test_an_event_file_is_read_on_from_where_the_last_check_stopped(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: after\n")
    tensorboard(in_tmp / "run", {"train/grad_norm": [(1, 2.0), (2, 3.0)]})
    (path,) = (in_tmp / "run").glob("events.out.tfevents.*")
    args = ("live-check", ".", "--run", "run", "--cache-dir", str(in_tmp / "cache"), "--fact", "max_grad_norm=1.0")
    assert "2 of the 2 values read exceed" in invoke(*args).output
    tensorboard(in_tmp / "more", {"train/grad_norm": [(3, 4.0)]})
    (extra,) = (in_tmp / "more").glob("events.out.tfevents.*")
    _spoil_first_record_and_append(path, extra)
    again = invoke(*args).output
    assert "ML900" not in again and "3 of the 3 values read exceed" in again, again  # the kept probes, and the new record
    other = invoke(*args[:-1], "max_grad_norm=1.5").output  # other facts: the kept state is not this check's
    assert "wrong data checksum" in other, other


def test_a_kept_state_that_names_another_class_is_not_used(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: after\n")
    tensorboard(in_tmp / "run", {"train/grad_norm": [(1, 2.0), (2, 3.0)]})
    args = ("live-check", ".", "--run", "run", "--cache-dir", str(in_tmp / "cache"), "--fact", "max_grad_norm=1.0")
    invoke(*args)
    (kept,) = (in_tmp / "cache" / "live").glob("*.json")
    kept.write_text(kept.read_text(encoding="utf-8").replace('"ClipBound"', '"subprocess.Popen"'), encoding="utf-8")
    assert "2 of the 2 values read exceed" in invoke(*args).output
