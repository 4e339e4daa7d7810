"""Theme files: JSON in ``themes/`` (built in) and ``<config_dir>/themes/`` (the user's).

A theme file names Textual's base colours under ``colors`` and picode's own colour tokens
under ``tokens``; both become one Textual ``Theme`` (tokens as ``Theme.variables``, usable
in TCSS as ``$token``). Extra Textual variables may be set under ``variables``. Every value
is checked when loaded, so a typo is reported with its file and key instead of breaking the
stylesheet later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

import picode

DEFAULT_THEME = "dark"

#: Textual's base colours a theme file may set under "colors" (``primary`` is required).
BASE_COLORS: tuple[str, ...] = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)

#: picode's colour tokens, with the dark defaults used when a theme leaves one out.
DARK_TOKENS: dict[str, str] = {
    "user-message-background": "#262b33",
    "assistant-background": "#121417",
    "thinking": "#7f8796",
    "tool-background": "#171a1f",
    "tool-pending": "#e5c07b",
    "tool-success": "#98c379",
    "tool-error": "#e06c75",
    "diff-added": "#98c379",
    "diff-removed": "#e06c75",
    "diff-added-background": "#1d3123",
    "diff-removed-background": "#3a1f24",
    "diff-hunk": "#56b6c2",
    "diff-context": "#9aa3b2",
    "muted": "#6b7280",
    "md-heading": "#61afef",
    "md-link": "#56b6c2",
    "md-code": "#e5c07b",
    "md-quote": "#9aa3b2",
    "syntax-comment": "#7f848e",
    "syntax-keyword": "#c678dd",
    "syntax-string": "#98c379",
    "syntax-number": "#d19a66",
    "syntax-function": "#61afef",
    "syntax-class": "#e5c07b",
    "syntax-name": "#d8dee9",
    "syntax-operator": "#56b6c2",
    "syntax-constant": "#d19a66",
    "syntax-builtin": "#56b6c2",
    "syntax-decorator": "#61afef",
    "syntax-error": "#e06c75",
}
LIGHT_TOKENS: dict[str, str] = {
    "user-message-background": "#e6e9ef",
    "assistant-background": "#fafafa",
    "thinking": "#8e939c",
    "tool-background": "#f2f3f5",
    "tool-pending": "#c18401",
    "tool-success": "#50a14f",
    "tool-error": "#e45649",
    "diff-added": "#2f7d32",
    "diff-removed": "#c62828",
    "diff-added-background": "#e3f3e3",
    "diff-removed-background": "#fbe7e7",
    "diff-hunk": "#0184bc",
    "diff-context": "#6a6f78",
    "muted": "#8e939c",
    "md-heading": "#4078f2",
    "md-link": "#0184bc",
    "md-code": "#986801",
    "md-quote": "#6a6f78",
    "syntax-comment": "#a0a1a7",
    "syntax-keyword": "#a626a4",
    "syntax-string": "#50a14f",
    "syntax-number": "#986801",
    "syntax-function": "#4078f2",
    "syntax-class": "#c18401",
    "syntax-name": "#383a42",
    "syntax-operator": "#0184bc",
    "syntax-constant": "#986801",
    "syntax-builtin": "#0184bc",
    "syntax-decorator": "#4078f2",
    "syntax-error": "#e45649",
}
TOKENS: frozenset[str] = frozenset(DARK_TOKENS)

_PERCENT = re.compile(r"^\d{1,3}(\.\d+)?%$")


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and the key."""


@dataclass(slots=True)
class ThemeSet:
    themes: dict[str, Theme] = field(default_factory=dict)
    #: One readable line per file that could not be loaded.
    problems: list[str] = field(default_factory=list)
    #: Where each theme came from, for messages.
    sources: dict[str, Path] = field(default_factory=dict)


def default_tokens(dark: bool) -> dict[str, str]:
    return dict(DARK_TOKENS if dark else LIGHT_TOKENS)


def initial_theme(
    wanted: str | None, available: Collection[str], problems: Sequence[str]
) -> tuple[str, str | None]:
    """The theme to start with, and a warning when the wanted one is unknown (a theme that
    failed to load has been reported already)."""
    wanted = wanted or DEFAULT_THEME
    if wanted in available:
        return wanted, None
    warning = None
    if not any(wanted in problem for problem in problems):
        names = ", ".join(sorted(n for n in available if "-" not in n))
        warning = f"Unknown theme '{wanted}' (available: {names}); using '{DEFAULT_THEME}'."
    return (DEFAULT_THEME if DEFAULT_THEME in available else "textual-dark"), warning


def builtin_theme_dir() -> Path | None:
    """The packaged ``picode/themes`` of a wheel, else the checkout's top-level ``themes/``."""
    # A wheel unpacks data next to the code; importlib.resources would cost start-up time.
    packaged = Path(picode.__file__).parent / "themes"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "themes"
    return checkout if checkout.is_dir() else None


def load_themes(config_dir: Path | None = None) -> ThemeSet:
    """Built-in themes, then the user's (a user theme may replace a built-in one)."""
    found = ThemeSet()
    dirs = [builtin_theme_dir()]
    if config_dir is not None:
        dirs.append(config_dir / "themes")
    for folder in dirs:
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as exc:
                found.problems.append(str(exc))
                continue
            found.themes[theme.name] = theme
            found.sources[theme.name] = path
    return found


def load_theme_file(path: Path) -> Theme:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeFileError(f"Theme file {path}: cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ThemeFileError(
            f"Theme file {path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    return theme_from_dict(data, path)


def theme_from_dict(data: Any, path: Path) -> Theme:
    if not isinstance(data, dict):
        raise ThemeFileError(f"Theme file {path}: expected a JSON object at the top level")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"Theme file {path}: 'name' must be a non-empty string")
    dark = data.get("dark", True)
    ansi = data.get("ansi", False)
    for key, value in (("dark", dark), ("ansi", ansi)):
        if not isinstance(value, bool):
            raise ThemeFileError(f"Theme file {path}: '{key}' must be true or false")
    unknown_keys = set(data) - {"name", "dark", "ansi", "colors", "tokens", "variables"}
    if unknown_keys:
        raise ThemeFileError(
            f"Theme file {path}: unknown key(s) {', '.join(sorted(map(repr, unknown_keys)))}"
            " (expected name, dark, ansi, colors, tokens, variables)"
        )
    colors = _section(data, "colors", path)
    tokens = _section(data, "tokens", path)
    variables = _section(data, "variables", path)
    for key in colors:
        if key not in BASE_COLORS:
            raise ThemeFileError(
                f"Theme file {path}: 'colors.{key}' is not a base colour"
                f" (expected one of {', '.join(BASE_COLORS)})"
            )
    if "primary" not in colors:
        raise ThemeFileError(f"Theme file {path}: 'colors.primary' is required")
    for key in tokens:
        if key not in TOKENS:
            raise ThemeFileError(
                f"Theme file {path}: 'tokens.{key}' is not a picode token"
                f" (known tokens: {', '.join(sorted(TOKENS))})"
            )
    for section, values in (("colors", colors), ("tokens", tokens), ("variables", variables)):
        for key, value in values.items():
            _check_colour(value, f"{section}.{key}", path)
    colors = {key: _base_colour(value) for key, value in colors.items()}
    merged = {**default_tokens(dark), **variables, **tokens}
    if ansi:
        # Textual's own stylesheet refers to these in terminal-colour themes.
        merged.setdefault("ansi-background", "ansi_black" if dark else "ansi_white")
        merged.setdefault("ansi-foreground", "ansi_white" if dark else "ansi_black")
    return Theme(
        name=name,
        dark=dark,
        ansi=ansi,
        variables=merged,
        **colors,  # type: ignore[arg-type]
    )


def _base_colour(value: str) -> str:
    """Textual's Theme takes plain colours for its base slots: fold "#rrggbb NN%" into
    "#rrggbbaa" (a theme using the percentage form crashed when it was applied)."""
    colour, _, alpha = value.strip().rpartition(" ")
    if not colour or not alpha.endswith("%"):
        return value
    from textual.color import Color

    return Color.parse(colour).with_alpha(float(alpha[:-1]) / 100).hex


def _section(data: dict[str, Any], key: str, path: Path) -> dict[str, str]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ThemeFileError(f"Theme file {path}: '{key}' must be an object of name → colour")
    for name, colour in value.items():
        if not isinstance(colour, str):
            raise ThemeFileError(f"Theme file {path}: '{key}.{name}' must be a string")
    return value


def _check_colour(value: str, where: str, path: Path) -> None:
    """A colour, optionally followed by an alpha percentage ("#ff0000 40%")."""
    colour, _, alpha = value.strip().rpartition(" ")
    if not colour or _PERCENT.match(alpha) is None:
        colour = value.strip()
    try:
        Color.parse(colour)
        ok = True
    except ColorParseError:
        ok = False
    if not ok:
        raise ThemeFileError(
            f"Theme file {path}: '{where}' has a bad colour {value!r}"
            " (use #rrggbb, rgb(r,g,b), a colour name or an ansi_* name)"
        )
