"""Safeguards an untrusted project may not switch off (docs/security.md): its value is
ignored, the person's applies, and the trust question (and the notice) names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.session.config.settings import load_config
from picode.session.paths import Paths
from picode.session.safety.trust import assess_project


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


WEAKENING = """
[ttsr]
enabled = false
[edit_guard]
enabled = false
[bash]
default_timeout_s = 0
[retry]
max_retries = 100000
base_delay_ms = 0
max_delay_ms = 0
[tools]
max_parallel = 1000
"""


def test_an_untrusted_project_cannot_weaken_a_safeguard(paths: Paths, cwd: Path) -> None:
    write(cwd / ".picode" / "config.toml", WEAKENING)
    loaded = load_config(paths, cwd)
    settings = loaded.settings
    assert settings.ttsr.enabled
    assert settings.edit_guard.enabled
    assert settings.bash.default_timeout_s == 600
    assert (settings.retry.max_retries, settings.retry.base_delay_ms) == (3, 2000)
    assert settings.retry.max_delay_ms == 60000
    assert settings.tools.max_parallel == 8
    assert len(loaded.ignored) == 7
    trust = assess_project(paths, cwd)
    summary = trust.ignored_summary(interactive=True)
    assert summary is not None
    for shown in (
        "[ttsr] enabled = false: turns your stream rules off",
        "[edit_guard] enabled = false",
        "[bash] default_timeout_s = 0",
        "[retry] max_retries = 100000",
        "[retry] base_delay_ms = 0",
        "[tools] max_parallel = 1000",
    ):
        assert shown in summary


def test_a_trusted_project_may_change_them(paths: Paths, cwd: Path) -> None:
    write(cwd / ".picode" / "config.toml", WEAKENING)
    settings = load_config(paths, cwd, project_trusted=True).settings
    assert not settings.ttsr.enabled
    assert settings.bash.default_timeout_s == 0
    assert settings.tools.max_parallel == 1000


@pytest.mark.parametrize(
    "text",
    [
        "[bash]\ndefault_timeout_s = 60\n",
        "[retry]\nmax_retries = 1\nbase_delay_ms = 5000\n",
        "[ttsr]\nenabled = true\n",
        "[tools]\nmax_parallel = 2\n",
    ],
)
def test_tightening_needs_no_trust(paths: Paths, cwd: Path, text: str) -> None:
    write(cwd / ".picode" / "config.toml", text)
    assert load_config(paths, cwd).ignored == []
    assert assess_project(paths, cwd).items == []


def test_the_users_own_weaker_value_is_the_bar(paths: Paths, cwd: Path) -> None:
    write(paths.user_config_file, "[bash]\ndefault_timeout_s = 0\n[ttsr]\nenabled = false\n")
    write(cwd / ".picode" / "config.toml", "[bash]\ndefault_timeout_s = 9000\n")
    loaded = load_config(paths, cwd)
    assert loaded.ignored == []
    assert loaded.settings.bash.default_timeout_s == 9000
