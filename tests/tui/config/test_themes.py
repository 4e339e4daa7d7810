"""Theme files: the built-in ones, user themes, and clear errors for bad ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from picode.tui import themes
from picode.tui.themes import ThemeFileError, load_theme_file, load_themes
from tests.tui.conftest import SIZE, TuiHarness, run, wait_until


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_builtin_themes_load_with_every_token() -> None:
    found = load_themes()
    assert found.problems == []
    assert {"dark", "light", "ansi"} <= set(found.themes)
    for theme in found.themes.values():
        assert set(theme.variables) >= themes.TOKENS, theme.name
    assert found.themes["light"].dark is False
    ansi = found.themes["ansi"]
    assert ansi.ansi is True
    assert ansi.variables["tool-error"] == "ansi_red"
    assert ansi.foreground == "ansi_default"


def test_builtin_theme_dir_falls_back_to_the_checkout() -> None:
    folder = themes.builtin_theme_dir()
    assert folder is not None and (folder / "dark.json").is_file()


def test_a_bad_colour_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "mine.json",
        {"name": "mine", "colors": {"primary": "#123456"}, "tokens": {"diff-added": "grean"}},
    )
    with pytest.raises(ThemeFileError) as caught:
        load_theme_file(path)
    message = str(caught.value)
    assert str(path) in message and "'tokens.diff-added'" in message and "'grean'" in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "invalid JSON at line 1"),
        ([1, 2], "expected a JSON object"),
        ({"colors": {}}, "'colors.primary' is required"),
        ({"colors": {"primary": "red", "sparkle": "red"}}, "'colors.sparkle' is not a base"),
        ({"colors": {"primary": "red"}, "tokens": {"glow": "red"}}, "'tokens.glow' is not a"),
        ({"colors": {"primary": "red"}, "dark": "yes"}, "'dark' must be true or false"),
        ({"colors": {"primary": "red"}, "extra": 1}, "unknown key(s) 'extra'"),
        ({"colors": {"primary": 3}}, "'colors.primary' must be a string"),
        ({"colors": {"primary": "red 120"}}, "'colors.primary' has a bad colour"),
    ],
)
def test_bad_theme_files_are_explained(tmp_path: Path, data: Any, expected: str) -> None:
    path = _write(tmp_path / "t.json", data)
    with pytest.raises(ThemeFileError, match=None) as caught:
        load_theme_file(path)
    assert expected in str(caught.value)


def test_user_theme_fills_missing_tokens_from_the_defaults(tmp_path: Path) -> None:
    _write(
        tmp_path / "themes" / "sunny.json",
        {
            "name": "sunny",
            "dark": False,
            "colors": {"primary": "#aa5500", "background": "white"},
            "tokens": {"tool-error": "rgb(200, 0, 0)", "thinking": "#777777 80%"},
        },
    )
    found = load_themes(tmp_path)
    sunny = found.themes["sunny"]
    assert found.sources["sunny"] == tmp_path / "themes" / "sunny.json"
    assert sunny.variables["tool-error"] == "rgb(200, 0, 0)"
    assert sunny.variables["diff-added"] == themes.LIGHT_TOKENS["diff-added"]


def test_app_uses_a_user_theme(tui: TuiHarness) -> None:
    _write(
        tui.paths.config_dir / "themes" / "ocean.json",
        {"name": "ocean", "colors": {"primary": "#0077be"}, "tokens": {"muted": "#336699"}},
    )
    app = tui.app(tui.faux(), theme="ocean")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.theme == "ocean"
            assert app.theme_variables["muted"] == "#336699"
            assert app._notifications == [] or not list(app._notifications)

    run(scenario())


def test_broken_theme_is_reported_and_the_default_is_used(tui: TuiHarness) -> None:
    path = _write(
        tui.paths.config_dir / "themes" / "broken.json",
        {"name": "broken", "colors": {"primary": "#12"}},
    )
    app = tui.app(tui.faux(), theme="broken")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: list(app._notifications))
            messages = [n.message for n in app._notifications]
            assert any(str(path) in m and "'colors.primary'" in m for m in messages)
            assert app.theme == "dark"

    run(scenario())


def test_unknown_theme_name_falls_back_with_a_warning(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(), theme="nope")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: list(app._notifications))
            message = next(iter(app._notifications)).message
            assert "Unknown theme 'nope'" in message and "dark" in message and "light" in message
            assert app.theme == "dark"

    run(scenario())


def test_no_color_is_honoured(tui: TuiHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = tui.app(tui.faux())
    assert app.no_color


def test_ansi_theme_uses_the_terminal_colours(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(), theme="ansi")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.theme == "ansi"
            assert app.native_ansi_color  # colours go out as ANSI codes, not RGB
            assert app.theme_variables["tool-success"] == "ansi_green"

    run(scenario())


def test_base_colour_with_opacity_is_applied_without_crashing(tmp_path: Path) -> None:
    from textual.app import App

    from picode.tui.themes import theme_from_dict

    theme = theme_from_dict(
        {"name": "faded", "colors": {"primary": "#3366ff", "boost": "#ffffff 4%"}},
        tmp_path / "faded.json",
    )
    assert theme.boost is not None and theme.boost.lower().startswith("#ffffff")

    class Host(App[None]):
        pass

    async def scenario() -> None:
        app = Host()
        async with app.run_test():
            app.register_theme(theme)
            app.theme = "faded"
            assert app.theme == "faded"

    import asyncio

    asyncio.run(scenario())
