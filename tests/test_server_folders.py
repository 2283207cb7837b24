"""`metriclint server` on a multi-root workspace, end to end: each folder's settings are its
own, whether the editor sends them per folder (`workspace/configuration`) or for all, and a
path in them is read from the folder it is set for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="needs the server extra: pip install -e '.[server]'")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

from lsprotocol import types  # noqa: E402 - only with the extra
from pytest_lsp import LanguageClient  # noqa: E402
from test_server import ALTERNATIVE, _alternative, _codes, _session, _until, demo, uninitialized  # noqa: E402, F401 - fixtures too


def _twin(first: Path) -> tuple[Path, Path]:
    """A second copy of the demo, "other", with the alternative registry in it."""
    other = first.parent / "other"
    shutil.copytree(first, other)
    return other, _alternative(other)


SOURCE = Path("trainer") / "logging_utils.py"


@pytest.mark.asyncio
async def test_a_config_path_is_read_from_its_own_folder(uninitialized: LanguageClient, demo: Path) -> None:  # noqa: F811
    """The same `config` setting for both folders: each folder's editor.toml, and the registry it
    names, relative to that folder (not to the first folder, where the server runs)."""
    client = uninitialized
    other, alternative = _twin(demo)
    (demo / "editor.toml").write_text('registry = "metrics.yaml"\n', encoding="utf-8")
    (other / "editor.toml").write_text(f'registry = "{ALTERNATIVE}"\n', encoding="utf-8")
    await client.initialize_session(_session(demo, other, options={"config": "editor.toml"}))
    await _until(lambda: _codes(client, demo / SOURCE) == [("ML001", 9)] and _codes(client, alternative) == [("ML001", 4)])
    assert _codes(client, other / SOURCE) == [] and _codes(client, other / "editor.toml") == []


@pytest.mark.asyncio
async def test_each_folder_takes_its_settings_from_the_editor(uninitialized: LanguageClient, demo: Path) -> None:  # noqa: F811
    """The client answers `workspace/configuration` per folder: the first folder's registry is
    alt.yaml, the second keeps its own; a configuration change asks again."""
    client = uninitialized
    other, alternative = _twin(demo)
    _alternative(demo)
    client.set_configuration({"registry": ALTERNATIVE}, section="metriclint", scope_uri=demo.as_uri())
    await client.initialize_session(_session(demo, other))
    await _until(lambda: _codes(client, demo / ALTERNATIVE) == [("ML001", 4)] and _codes(client, other / SOURCE) == [("ML001", 9)])
    assert _codes(client, demo / SOURCE) == [] and _codes(client, alternative) == []
    client.set_configuration({"registry": ALTERNATIVE}, section="metriclint", scope_uri=other.as_uri())
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(None))  # pull-model clients send no settings
    await _until(lambda: _codes(client, other / SOURCE) == [] and _codes(client, alternative) == [("ML001", 4)])
    assert _codes(client, demo / ALTERNATIVE) == [("ML001", 4)]
