"""``[notifications]`` in config.toml: read, checked, and a bad value falls back."""

from __future__ import annotations

from pathlib import Path

from picode.session.config.settings import load_config
from picode.session.paths import Paths


def _write_user(paths: Paths, text: str) -> Path:
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text(text, encoding="utf-8")
    return paths.user_config_file


def test_defaults_notify_for_both_events_by_the_terminal_s_own_method(
    paths: Paths, cwd: Path
) -> None:
    notifications = load_config(paths, cwd).settings.notifications
    assert notifications.method == "auto"
    assert notifications.when == ["done", "approval"]


def test_the_section_is_read(paths: Paths, cwd: Path) -> None:
    _write_user(paths, '[notifications]\nmethod = "osc777"\nwhen = ["approval"]\n')
    loaded = load_config(paths, cwd)
    assert loaded.problems == []
    assert loaded.settings.notifications.method == "osc777"
    assert loaded.settings.notifications.when == ["approval"]


def test_a_bad_method_is_named_and_falls_back_to_auto(paths: Paths, cwd: Path) -> None:
    user = _write_user(paths, '[notifications]\nmethod = "beep"\nwhen = ["done"]\n')
    loaded = load_config(paths, cwd)
    (problem,) = loaded.problems
    assert (problem.file, problem.line, problem.key) == (user, 2, "notifications.method")
    assert loaded.settings.notifications.method == "auto"
    assert loaded.settings.notifications.when == ["done"]  # the rest of the section stays
