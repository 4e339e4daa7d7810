"""``<config_dir>/keymap.toml``: remap bindings by id, e.g. ``model_picker = "ctrl+l,f2"``.

Every entry is checked before anything is applied: an unknown id or a key Textual would
never produce is reported with the file and the id, and the rest of the file still
applies. ``hotkeys_text`` renders the table ``/hotkeys`` shows.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from textual.binding import Binding, BindingType
from textual.keys import Keys, format_key, key_to_character

KEYMAP_FILE_NAME = "keymap.toml"

MODIFIERS = ("ctrl", "alt", "shift", "super", "meta", "hyper")
_SPECIAL_KEYS = frozenset(
    {part for key in Keys for part in [key.value.rpartition("+")[2]] if not part.startswith("<")}
    | {"space", "tab", "enter", "escape", "backspace", "delete", "insert", "newline"}
)


def keymap_path(config_dir: Path) -> Path:
    return config_dir / KEYMAP_FILE_NAME


@dataclass(slots=True)
class KeymapResult:
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id → comma-separated keys, only for entries that passed every check."""
    problems: list[str] = field(default_factory=list)
    """One readable line per entry that was not applied (or that clashes)."""


def key_problem(key: str) -> str | None:
    """Why ``key`` is not a key Textual can report, or None if it is fine."""
    if not key:
        return "an empty key"
    if len(key) == 1:
        return None if key.isprintable() else f"{key!r} is not a printable character"
    if key.endswith("++"):
        modifiers, base = key[:-2].split("+"), "plus"
    elif key.endswith("+"):
        return f"'{key}' ends with '+' but names no key after it"
    else:
        *modifiers, base = key.split("+")
    for modifier in modifiers:
        if modifier not in MODIFIERS:
            return f"'{modifier}' in '{key}' is not a modifier (use {', '.join(MODIFIERS)})"
    if len(set(modifiers)) != len(modifiers):
        return f"'{key}' repeats a modifier"
    if len(base) == 1:
        return None if base.isprintable() else f"{base!r} in '{key}' is not printable"
    if base != base.lower():
        return f"'{base}' in '{key}' must be lower case"
    if base in _SPECIAL_KEYS or key_to_character(base) is not None:
        return None  # key_to_character knows named characters: question_mark, slash, ...
    return f"'{base}' in '{key}' is not a key name (examples: ctrl+g, escape, f5, shift+tab)"


def load_keymap(path: Path, known: Mapping[str, Binding] | Iterable[str]) -> KeymapResult:
    """Read and check ``path``; a missing file is an empty keymap, not a problem."""
    result = KeymapResult()
    known_ids = list(known.keys() if isinstance(known, Mapping) else known)
    if not path.is_file():
        if path.exists():
            result.problems.append(f"Keymap {path}: is not a file; no keys were remapped")
        return result
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        result.problems.append(f"Keymap {path}: cannot be read ({exc}); no keys were remapped")
        return result
    except tomllib.TOMLDecodeError as exc:
        result.problems.append(f"Keymap {path}: invalid TOML ({exc}); no keys were remapped")
        return result
    for binding_id, value in data.items():
        problem = _entry_problem(binding_id, value, known_ids)
        if problem is not None:
            result.problems.append(f"Keymap {path}: '{binding_id}': {problem}")
            continue
        keys = [k.strip() for k in value.split(",")]
        result.keymap[binding_id] = ",".join(keys)
    effective = dict(result.keymap)
    if isinstance(known, Mapping):
        # A remapped key may also land on a binding left at its default.
        for binding_id, binding in known.items():
            effective.setdefault(binding_id, binding.key)
    clashes = _clashes(effective, involving=set(result.keymap))
    result.problems += [f"Keymap {path}: {clash}" for clash in clashes]
    return result


def _entry_problem(binding_id: str, value: object, known_ids: list[str]) -> str | None:
    if binding_id not in known_ids:
        near = difflib.get_close_matches(binding_id, known_ids, n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        return f"not a binding id; {hint}known ids: {', '.join(sorted(known_ids))}"
    if not isinstance(value, str):
        return 'must be a string of keys, e.g. "ctrl+l" or "ctrl+l,f2"'
    keys = [k.strip() for k in value.split(",")]
    if not any(keys):
        return "names no key"
    for key in keys:
        problem = key_problem(key)
        if problem is not None:
            return problem
    return None


def _clashes(keymap: Mapping[str, str], involving: set[str]) -> list[str]:
    """Keys held by several bindings, at least one of them remapped by the file."""
    owners: dict[str, list[str]] = {}
    for binding_id, keys in keymap.items():
        for key in keys.split(","):
            owners.setdefault(key.strip(), []).append(binding_id)
    return [
        f"'{key}' is given to several bindings ({', '.join(ids)}); only one will react"
        for key, ids in owners.items()
        if len(ids) > 1 and involving.intersection(ids)
    ]


class KeymapHost(Protocol):
    def update_keymap(self, keymap: Mapping[str, str]) -> None: ...


def bindings_by_id(bindings: Iterable[BindingType]) -> dict[str, Binding]:
    """The bindings that have an id (only those can be remapped)."""
    found: dict[str, Binding] = {}
    for binding in bindings:
        if isinstance(binding, Binding) and binding.id:
            found.setdefault(binding.id, binding)
    return found


def apply_keymap_file(app: KeymapHost, path: Path, bindings: Iterable[BindingType]) -> list[str]:
    """Load ``path``, apply what is valid with ``App.update_keymap``, return the problems
    (for the app to show as warnings)."""
    result = load_keymap(path, bindings_by_id(bindings))
    if result.keymap:
        app.update_keymap(result.keymap)
    return result.problems


def apply_keymap(app: KeymapHost, path: Path, bindings: Iterable[BindingType]) -> KeymapResult:
    """``apply_keymap_file`` that also says what was applied (``/hotkeys`` shows it)."""
    result = load_keymap(path, bindings_by_id(bindings))
    if result.keymap:
        app.update_keymap(result.keymap)
    return result


def hotkeys_text(
    bindings: Iterable[BindingType],
    keymap: Mapping[str, str] | None = None,
    *,
    markdown: bool = False,
) -> str:
    """A table of id, keys and description for ``/hotkeys`` (keys after ``keymap``)."""
    rows: list[tuple[str, str, str]] = []
    for binding_id, binding in bindings_by_id(bindings).items():
        keys = (keymap or {}).get(binding_id, binding.key)
        shown = ", ".join(format_key(k.strip()) for k in keys.split(","))
        rows.append((binding_id, shown, binding.description or ""))
    header = ("id", "keys", "description")
    if markdown:
        lines = ["| id | keys | description |", "| --- | --- | --- |"]
        lines += [f"| `{i}` | {_cell(k)} | {_cell(d)} |" for i, k, d in rows]
        return "\n".join(lines)
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(2)]
    lines = [
        f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


#: Keys the editor handles itself (not remappable): shown by ``/hotkeys`` after the bindings.
EDITOR_KEYS: tuple[tuple[str, str], ...] = (
    ("enter", "send (while picode works: steer it)"),
    ("alt+enter", "queue a follow-up for when picode is done"),
    ("shift+enter, ctrl+j", "new line"),
    ("up / down", "earlier / later messages (on the first / last line)"),
    ("/", "commands (tab or enter accepts, esc closes the list)"),
    ("@", "complete a file path"),
    ("!cmd", "run a shell command and add its output to the context (!!cmd: show only)"),
    ("ctrl+z", "undo, while the editor has text (suspends picode when it is empty)"),
    ("ctrl+v", "attach the clipboard's image (a screenshot)"),
)


def hotkey_lines(
    bindings: Iterable[BindingType], keymap: Mapping[str, str] | None, keymap_file: Path | None
) -> list[str]:
    """What ``/hotkeys`` shows: the remappable bindings, then the editor's own keys."""
    lines = hotkeys_text(bindings, keymap).splitlines()
    width = max(len(key) for key, _ in EDITOR_KEYS)
    lines += ["", "editor", *(f"{key.ljust(width)}  {meaning}" for key, meaning in EDITOR_KEYS)]
    if keymap_file is not None:
        lines += ["", f'Remap by id in {keymap_file} (e.g. model_picker = "ctrl+l,f2").']
    return lines
