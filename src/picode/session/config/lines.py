"""Find the line a TOML key was written on, so config problems can point at it.

``tomllib`` keeps no positions; this scanner follows table headers and ``key =`` lines,
which is all a problem report needs. It is best effort: odd layouts fall back to the
line of the enclosing table (or none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from picode.session.safety.approval import APPROVAL_POLICIES

Loc = tuple[str | int, ...]

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_ARRAY_HEADER = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]")
_TABLE_HEADER = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]")
_KEY_LINE = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(_KEY_PART)
_SYNTAX_LINE = re.compile(r"at line (\d+)")


def _split_key(dotted: str) -> tuple[str, ...]:
    parts: list[str] = []
    for raw in _PART.findall(dotted):
        if raw[:1] == '"':
            try:
                parts.append(str(json.loads(raw)))
            except ValueError:
                parts.append(raw[1:-1])
        elif raw[:1] == "'":
            parts.append(raw[1:-1])
        else:
            parts.append(raw)
    return tuple(parts)


def key_lines(text: str) -> dict[Loc, int]:
    """Map every key path seen in ``text`` (array tables get their index) to a 1-based line."""
    lines: dict[Loc, int] = {}
    table: Loc = ()
    array_counts: dict[tuple[str, ...], int] = {}
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        if match := _ARRAY_HEADER.match(line):
            path = _split_key(match.group(1))
            index = array_counts.get(path, 0)
            array_counts[path] = index + 1
            table = (*path, index)
            lines.setdefault(path, number)
            lines[table] = number
        elif match := _TABLE_HEADER.match(line):
            table = _split_key(match.group(1))
            lines.setdefault(table, number)
        elif match := _KEY_LINE.match(line):
            lines.setdefault((*table, *_split_key(match.group(1))), number)
            rest = line[match.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
    return lines


def line_of(lines: dict[Loc, int], loc: Sequence[str | int]) -> int | None:
    """The line of ``loc`` or of its closest enclosing key that was found."""
    path = tuple(loc)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return None


def syntax_error_line(message: str) -> int | None:
    match = _SYNTAX_LINE.search(message)
    return int(match.group(1)) if match else None


def dotted(loc: Sequence[str | int]) -> str:
    """``("providers", "local", "models", 0, "id")`` → ``providers.local.models[0].id``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


#: Keys worth keeping from a file that does not parse: losing them would loosen safety.
_SAFETY_KEYS = {"approval": APPROVAL_POLICIES}
_TOP_LEVEL_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(.*?)\s*$")


def salvage_safety_keys(text: str) -> dict[str, str]:
    """The safety keys of a file with a TOML syntax error, read line by line.

    A key whose line is there but unreadable takes its safest value (the last choice), since
    what the person meant is unknown."""
    kept: dict[str, str] = {}
    for line in text.splitlines():
        if _TABLE_HEADER.match(line) or _ARRAY_HEADER.match(line):
            break  # the safety keys are top-level keys
        match = _TOP_LEVEL_KEY.match(line)
        if match is None or match.group(1) not in _SAFETY_KEYS:
            continue
        choices = _SAFETY_KEYS[match.group(1)]
        value = _single_value(match.group(2))
        kept[match.group(1)] = value if value in choices else choices[-1]
    return kept


def _single_value(source: str) -> object:
    import tomllib

    try:
        return tomllib.loads(f"value = {source}").get("value")
    except tomllib.TOMLDecodeError:
        return None
