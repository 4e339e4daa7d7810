"""A small, dependency-free reader for the YAML-like front matter of Markdown files.

Supported, one key per line: ``key: value``, ``key: [a, b]`` and ``key:`` followed by
``- item`` lines; single- or double-quoted strings; ``#`` comments (a whole line, or after
whitespace in an unquoted value). Values stay strings: callers interpret them. Backslashes are
kept as written (``"\\d+"`` and ``\\d+`` both mean the regex ``\\d+``), except that inside
double quotes ``\\"`` is a quote and ``\\\\`` one backslash, as in YAML.
"""

from __future__ import annotations

import re

FrontValue = str | list[str]

_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_ITEM_LINE = re.compile(r"^\s*-(?:\s+(.*)|)$")
_FENCE = "---"


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message names the line and the problem."""


def split_front_matter(text: str) -> tuple[dict[str, FrontValue], str]:
    """``(fields, body)``; raise ``FrontMatterError`` when there is no valid front matter."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != _FENCE:
        raise FrontMatterError("no front matter: the file must start with a '---' line")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in (_FENCE, "..."):
            break
    else:
        raise FrontMatterError("the front matter is not closed by a '---' line")
    fields = parse_fields(lines[1:end], first_line_number=2)
    body = "\n".join(lines[end + 1 :]).strip()
    return fields, body


def parse_fields(lines: list[str], first_line_number: int = 1) -> dict[str, FrontValue]:
    fields: dict[str, FrontValue] = {}
    open_list: str | None = None  # key whose "- item" lines may follow
    block_lists: set[str] = set()
    for offset, raw in enumerate(lines):
        number = first_line_number + offset
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        item = _ITEM_LINE.match(raw)
        if item is not None:
            if open_list is None:
                raise FrontMatterError(f"line {number}: '- item' without a 'key:' line above it")
            current = fields[open_list]
            assert isinstance(current, list)
            current.append(_scalar(item.group(1) or "", number))
            continue
        key_line = _KEY_LINE.match(raw)
        if key_line is None:
            raise FrontMatterError(f"line {number}: expected 'key: value' or '- item': {raw!r}")
        key, value = key_line.group(1), (key_line.group(2) or "").strip()
        if key in fields:
            raise FrontMatterError(f"line {number}: key '{key}' appears twice")
        if not value or value.startswith("#"):
            fields[key] = []
            open_list = key
            block_lists.add(key)
            continue
        open_list = None
        if value.startswith("["):
            fields[key] = _flow_list(value, number)
        else:
            fields[key] = _scalar(value, number)
    # "key:" with no items below it is an empty value, not an empty list
    for key in block_lists:
        if fields[key] == []:
            fields[key] = ""
    return fields


def _scalar(text: str, number: int) -> str:
    text = text.strip()
    if text[:1] in ("'", '"'):
        value, end = _quoted(text, 0, number)
        rest = text[end:].strip()
        if rest and not rest.startswith("#"):
            raise FrontMatterError(
                f"line {number}: unexpected text after the quoted value: {rest!r}"
            )
        return value
    return _strip_comment(text)


def _strip_comment(text: str) -> str:
    match = re.search(r"\s#", text)
    return (text[: match.start()] if match else text).strip()


def _quoted(text: str, start: int, number: int) -> tuple[str, int]:
    """The quoted string at ``text[start]`` and the index just past its closing quote."""
    quote = text[start]
    out: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if quote == "'" and char == "'":
            if text.startswith("''", index):
                out.append("'")
                index += 2
                continue
            return "".join(out), index + 1
        if quote == '"' and char == "\\" and index + 1 < len(text) and text[index + 1] in '"\\':
            out.append(text[index + 1])
            index += 2
            continue
        if quote == '"' and char == '"':
            return "".join(out), index + 1
        out.append(char)
        index += 1
    raise FrontMatterError(f"line {number}: unclosed {quote} quote")


def _flow_list(text: str, number: int) -> list[str]:
    """``[a, 'b, c', "d"]``: items split at top-level commas."""
    items: list[str] = []
    index = 1
    current: list[str] = []
    while index < len(text):
        char = text[index]
        if char in ("'", '"') and not "".join(current).strip():
            value, index = _quoted(text, index, number)
            current = [value]
            # a quoted item ends at its closing quote: only spaces may follow before , or ]
            while index < len(text) and text[index] in " \t":
                index += 1
            if index < len(text) and text[index] not in ",]":
                raise FrontMatterError(f"line {number}: expected ',' or ']' after a quoted item")
            items.append(value)
            current = []
            if index < len(text) and text[index] == "]":
                return _after_list(items, text, index, number)
            index += 1
            continue
        if char == ",":
            items.append(_item("".join(current), number))
            current = []
        elif char == "]":
            last = "".join(current).strip()
            if last:  # "[a, b,]" and "[]" are fine
                items.append(last)
            return _after_list(items, text, index, number)
        else:
            current.append(char)
        index += 1
    raise FrontMatterError(f"line {number}: list is not closed with ']'")


def _item(text: str, number: int) -> str:
    text = text.strip()
    if not text:
        raise FrontMatterError(f"line {number}: empty item in the list")
    return text


def _after_list(items: list[str], text: str, end: int, number: int) -> list[str]:
    rest = text[end + 1 :].strip()
    if rest and not rest.startswith("#"):
        raise FrontMatterError(f"line {number}: unexpected text after the list: {rest!r}")
    return items
