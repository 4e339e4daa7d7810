"""Where picode keeps its files."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from picode.session.paths import Paths, project_dir, resolve_paths


def test_picode_home_puts_everything_under_one_folder(tmp_path: Path) -> None:
    paths = resolve_paths({"PICODE_HOME": str(tmp_path)})
    assert paths == Paths(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    assert paths.sessions_dir == tmp_path / "data" / "sessions"
    assert paths.auth_file == tmp_path / "config" / "auth.json"
    assert paths.user_config_file == tmp_path / "config" / "config.toml"
    assert paths.themes_dir == tmp_path / "config" / "themes"
    assert paths.extensions_dir == tmp_path / "config" / "extensions"
    assert paths.rules_dir == tmp_path / "config" / "rules"
    assert paths.keymap_file == tmp_path / "config" / "keymap.toml"


def test_relative_picode_home_becomes_absolute(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = resolve_paths({"PICODE_HOME": "home"})
    assert paths.config_dir == tmp_path / "home" / "config"


def test_without_picode_home_the_platform_folders_are_used() -> None:
    paths = resolve_paths({})
    assert paths.config_dir == Path(platformdirs.user_config_dir("picode", appauthor=False))
    assert paths.data_dir == Path(platformdirs.user_data_dir("picode", appauthor=False))
    assert paths.cache_dir == Path(platformdirs.user_cache_dir("picode", appauthor=False))


def test_blank_picode_home_is_ignored() -> None:
    assert resolve_paths({"PICODE_HOME": "  "}) == resolve_paths({})


def test_project_dir(tmp_path: Path) -> None:
    assert project_dir(tmp_path) == tmp_path / ".picode"
