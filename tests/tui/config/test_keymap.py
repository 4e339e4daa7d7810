"""keymap.toml: valid entries remap keys in a running app; bad ones are named, not fatal."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from picode.tui.keymap import (
    apply_keymap_file,
    hotkeys_text,
    key_problem,
    keymap_path,
    load_keymap,
)
from tests.tui.conftest import run

BINDINGS: list[BindingType] = [
    Binding("escape", "abort", "Interrupt the agent", id="abort"),
    Binding(
        "shift+tab",
        "cycle_thinking",
        "Cycle the thinking level",
        id="cycle_thinking",
        priority=True,
    ),
    Binding("ctrl+l", "model_picker", "Open the model picker", id="model_picker"),
    Binding("ctrl+q", "quit", "Quit"),  # no id: cannot be remapped, not listed
]


class KeyHost(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = BINDINGS

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[str] = []

    def action_abort(self) -> None:
        self.actions.append("abort")

    def action_cycle_thinking(self) -> None:
        self.actions.append("cycle_thinking")

    def action_model_picker(self) -> None:
        self.actions.append("model_picker")


def write(tmp_path: Path, text: str) -> Path:
    path = keymap_path(tmp_path)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_keymap_remaps_keys_in_a_running_app(tmp_path: Path) -> None:
    path = write(tmp_path, 'abort = "ctrl+g, escape"\nmodel_picker = "f2"\n')
    app = KeyHost()

    async def scenario() -> None:
        async with app.run_test(size=(40, 5)) as pilot:
            assert apply_keymap_file(app, path, app.BINDINGS) == []
            await pilot.press("ctrl+g", "escape", "f2", "ctrl+l", "shift+tab")
            assert app.actions == ["abort", "abort", "model_picker", "cycle_thinking"]

    run(scenario())
    assert path.name == "keymap.toml"


def test_unknown_ids_and_bad_keys_are_named_and_the_rest_still_applies(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'abortt = "ctrl+g"\ncycle_thinking = "ctrl+foo"\nmodel_picker = 5\nabort = "ctrl+k"\n',
    )
    result = load_keymap(path, {"abort", "cycle_thinking", "model_picker"})
    assert result.keymap == {"abort": "ctrl+k"}
    first, second, third = result.problems
    assert first.startswith(f"Keymap {path}: 'abortt': not a binding id; did you mean 'abort'?")
    assert "known ids: abort, cycle_thinking, model_picker" in first
    assert second == (
        f"Keymap {path}: 'cycle_thinking': 'foo' in 'ctrl+foo' is not a key name"
        " (examples: ctrl+g, escape, f5, shift+tab)"
    )
    assert third.startswith(f"Keymap {path}: 'model_picker': must be a string of keys")

    app = KeyHost()

    async def scenario() -> None:
        async with app.run_test(size=(40, 5)) as pilot:
            problems = apply_keymap_file(app, path, app.BINDINGS)
            assert len(problems) == 3
            await pilot.press("ctrl+k", "shift+tab")
            assert app.actions == ["abort", "cycle_thinking"]

    run(scenario())


def test_unreadable_files_and_clashes(tmp_path: Path) -> None:
    assert load_keymap(tmp_path / "missing.toml", ["abort"]).problems == []
    broken = write(tmp_path, "abort = \n")
    (problem,) = load_keymap(broken, ["abort"]).problems
    assert (
        problem.startswith(f"Keymap {broken}: invalid TOML") and "no keys were remapped" in problem
    )
    clash = write(tmp_path, 'abort = "ctrl+g"\nmodel_picker = "ctrl+g,f3"\n')
    result = load_keymap(clash, ["abort", "model_picker"])
    assert result.keymap == {"abort": "ctrl+g", "model_picker": "ctrl+g,f3"}
    assert result.problems == [
        f"Keymap {clash}: 'ctrl+g' is given to several bindings (abort, model_picker);"
        " only one will react"
    ]
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    assert "is not a file" in load_keymap(folder, ["abort"]).problems[0]


def test_key_names_are_checked() -> None:
    for good in ("escape", "shift+tab", "ctrl+g", "f5", "ctrl+shift+up", "alt+enter", "?", "a"):
        assert key_problem(good) is None, good
    assert key_problem("ctrl+question_mark") is None
    assert (
        key_problem("Ctrl+g")
        == "'Ctrl' in 'Ctrl+g' is not a modifier (use ctrl, alt, shift, super, meta, hyper)"
    )
    assert key_problem("ctrl+F5") == "'F5' in 'ctrl+F5' must be lower case"
    assert key_problem("ctrl+") == "'ctrl+' ends with '+' but names no key after it"
    assert key_problem("ctrl+ctrl+a") == "'ctrl+ctrl+a' repeats a modifier"
    assert key_problem("") == "an empty key"


def test_hotkeys_text_lists_ids_keys_and_descriptions() -> None:
    table = hotkeys_text(BINDINGS, {"abort": "ctrl+g,escape"}).splitlines()
    assert table[0].split() == ["id", "keys", "description"]
    assert [line.split()[0] for line in table[1:]] == ["abort", "cycle_thinking", "model_picker"]
    assert "ctrl+g, esc" in table[1] and table[1].endswith("Interrupt the agent")
    assert "shift+tab" in table[2]
    columns = {line.index(line.split()[1]) for line in table[1:]}
    assert len(columns) == 1  # aligned
    markdown = hotkeys_text(BINDINGS, markdown=True).splitlines()
    assert markdown[:2] == ["| id | keys | description |", "| --- | --- | --- |"]
    assert markdown[2] == "| `abort` | esc | Interrupt the agent |"


def test_a_remapped_key_that_lands_on_a_default_key_is_a_clash(tmp_path: Path) -> None:
    from picode.tui.app import PicodeApp
    from picode.tui.keymap import bindings_by_id

    path = write(tmp_path, 'interrupt = "escape,ctrl+g"\n')
    result = load_keymap(path, bindings_by_id(PicodeApp.BINDINGS))
    assert result.keymap == {"interrupt": "escape,ctrl+g"}
    assert result.problems == [
        f"Keymap {path}: 'ctrl+g' is given to several bindings (interrupt, external_editor);"
        " only one will react"
    ]
    moved = write(tmp_path, 'interrupt = "escape,ctrl+g"\nexternal_editor = "f4"\n')
    assert load_keymap(moved, bindings_by_id(PicodeApp.BINDINGS)).problems == []
