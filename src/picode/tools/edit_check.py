"""The edit tool's early check of streamed arguments (the streaming edit guard,
docs/stream-rules.md).

As soon as an edit call's ``path`` is complete and a long enough prefix of its ``old_text``
(or of an ``edits[i].old_text``) has arrived, the file is checked: a missing file, or a prefix
that cannot occur in it — exactly or under the edit tool's forgiving normalisation — gives a
verdict with a precise error for the model, so the session can abort the stream instead of
waiting for the whole call to fail.

It must never stop a valid edit, so it only judges what is certain:
- a value is complete only once a later key or item has started (partial JSON closes an
  unfinished string, so ``"src/fo`` looks like a path);
- of a value still growing it checks the complete lines plus the part of the last line that
  ends between two ASCII characters, where normalising (NFKC per character cluster) cannot
  change once more text follows;
- an edit whose file an earlier edit or write call of the same message also touches is not
  judged (the calls run concurrently; the model may expect the earlier one's result).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picode.agent.tool import EarlyVerdict, ToolError
from picode.tools._files import Decoded
from picode.tools._fuzzy import closest_candidates, normalize_text
from picode.tools._paths import cut_line, display_path, missing_path_error, resolve_path

WRITING_TOOLS = frozenset({"edit", "write"})
#: A growing old_text is judged once this much of it is certain.
MIN_PREFIX_CHARS = 24
#: Bigger files are left to the edit tool: reading them on the event loop would stall it.
MAX_FILE_BYTES = 8 * 1024 * 1024

KeyPath = tuple[str | int, ...]


class NoStreamCheck:
    """For an edit tool whose files are not read from the disk: it never judges early."""

    def check(
        self, index: int, arguments: dict[str, Any], earlier: Sequence[tuple[str, dict[str, Any]]]
    ) -> EarlyVerdict | None:
        return None


@dataclass(slots=True)
class _FileView:
    text: str
    crlf: bool
    _normalized: str | None = None

    @property
    def normalized(self) -> str:
        if self._normalized is None:
            self._normalized = normalize_text(self.text)
        return self._normalized


@dataclass(slots=True)
class _Problem:
    reason: str
    message: str


@dataclass(slots=True)
class _Probe:
    """What was last checked for one old_text, and where its prefix was found."""

    checked: int = -1
    exact_at: int = 0
    normalized_at: int = 0


@dataclass(slots=True)
class _State:
    files: dict[Path, _FileView | _Problem | None] = field(default_factory=dict)
    probes: dict[tuple[int, KeyPath], _Probe] = field(default_factory=dict)


class EditStreamCheck:
    """One assistant message's checks: files read once, probes resumed as text grows."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._state = _State()

    def check(
        self, index: int, arguments: dict[str, Any], earlier: Sequence[tuple[str, dict[str, Any]]]
    ) -> EarlyVerdict | None:
        raw_path = arguments.get("path")
        if not isinstance(raw_path, str) or not raw_path.strip():
            return None
        if _growing(arguments, ("path",)):
            return None
        try:
            path = resolve_path(self.cwd, raw_path)
        except ToolError:
            return None
        if self._touched_earlier(earlier, path):
            return None
        return self._check(index, path, arguments)

    def _touched_earlier(self, earlier: Sequence[tuple[str, dict[str, Any]]], path: Path) -> bool:
        for name, arguments in earlier:
            if name in WRITING_TOOLS:
                other = arguments.get("path")
                if isinstance(other, str) and other.strip():
                    try:
                        if resolve_path(self.cwd, other) == path:
                            return True
                    except ToolError:
                        continue
        return False

    def _check(self, index: int, path: Path, args: dict[str, Any]) -> EarlyVerdict | None:
        shown = display_path(self.cwd, path)
        view = self._file(path)
        if view is None:
            return None
        if isinstance(view, _Problem):
            return EarlyVerdict(shown, view.reason, view.message)
        for key_path, label, value in _old_texts(args):
            growing = _growing(args, key_path)
            needle = stable_prefix(value) if growing else value
            if not needle or (growing and len(needle) < MIN_PREFIX_CHARS):
                continue
            probe = self._state.probes.setdefault((index, key_path), _Probe())
            if len(needle) == probe.checked:
                continue
            probe.checked = len(needle)
            if not _occurs(view, needle, probe):
                return EarlyVerdict(
                    shown, "old_text not found", _miss_message(shown, label, view, needle, growing)
                )
        return None

    def _file(self, path: Path) -> _FileView | _Problem | None:
        files = self._state.files
        if path not in files:
            files[path] = self._load(path)
        return files[path]

    def _load(self, path: Path) -> _FileView | _Problem | None:
        shown = display_path(self.cwd, path)
        try:
            if path.is_dir():
                return _Problem(
                    "path is a directory",
                    f"{shown} is a directory; edit changes files. The edit was stopped while "
                    "it was being written; nothing was changed.",
                )
            if not path.exists():
                error = missing_path_error(self.cwd, path)
                return _Problem(
                    "file not found",
                    f"{error} The edit was stopped while it was being written; nothing was "
                    "changed. edit changes existing files; use write to create one.",
                )
            if path.stat().st_size > MAX_FILE_BYTES:
                return None
            data = path.read_bytes()
        except OSError:
            return None  # unreadable: the edit tool reports it with its own words
        try:
            decoded = Decoded.from_bytes(data, shown)
        except ToolError:
            return None
        return _FileView(decoded.text, decoded.crlf)


def _old_texts(args: dict[str, Any]) -> list[tuple[KeyPath, str, str]]:
    found: list[tuple[KeyPath, str, str]] = []
    old_text = args.get("old_text")
    if isinstance(old_text, str):
        found.append((("old_text",), "old_text", old_text))
    edits = args.get("edits")
    if isinstance(edits, list):
        for position, item in enumerate(edits):
            if isinstance(item, dict) and isinstance(item.get("old_text"), str):
                key_path: KeyPath = ("edits", position, "old_text")
                found.append((key_path, f"edits[{position}].old_text", item["old_text"]))
    return found


def _growing(args: dict[str, Any], key_path: KeyPath) -> bool:
    """Is the value at ``key_path`` the one still being streamed (the last key at each level)?"""
    node: Any = args
    for key in key_path:
        if isinstance(node, dict):
            if not node or list(node)[-1] != key:
                return False
        elif isinstance(node, list):
            if not isinstance(key, int) or key != len(node) - 1:
                return False
        else:
            return False
        node = node[key]
    return True


def stable_prefix(value: str) -> str:
    """The part of a still-growing text whose normalised form can no longer change."""
    newline = value.rfind("\n")
    head, partial = value[: newline + 1], value[newline + 1 :]
    cut = 0
    for position in range(len(partial) - 1, 0, -1):
        if partial[position - 1].isascii() and partial[position].isascii():
            cut = position
            break
    return head + partial[:cut]


def _find(haystack: str, needle: str, hint: int) -> int:
    # The needle only grows, so its first occurrence cannot move backwards; the retry from
    # the start only runs on a miss, guarding against a needle that did not simply grow.
    position = haystack.find(needle, hint)
    if position < 0 and hint > 0:
        position = haystack.find(needle)
    return position


def _occurs(view: _FileView, needle: str, probe: _Probe) -> bool:
    exact = needle
    if view.crlf:
        exact = exact.replace("\r\n", "\n").removesuffix("\r")
    position = _find(view.text, exact, probe.exact_at)
    if position >= 0:
        probe.exact_at = position
        return True
    normalized = normalize_text(needle)
    if not normalized.strip():
        return True
    position = _find(view.normalized, normalized, probe.normalized_at)
    if position >= 0:
        probe.normalized_at = position
        return True
    return False


def _miss_message(shown: str, label: str, view: _FileView, needle: str, growing: bool) -> str:
    lines = needle.split("\n")
    matched, where = 0, -1
    for count in range(1, len(lines) + 1):
        position = view.normalized.find(normalize_text("\n".join(lines[:count])))
        if position < 0:
            break
        matched, where = count, position
    missing_index = min(matched, len(lines) - 1)
    missing = repr(cut_line(lines[missing_index], 200))
    if growing and missing_index == len(lines) - 1:
        missing += " (as far as it was written)"
    parts = [
        f"{label} was not found in {shown}. The edit was stopped while it was being written; "
        "nothing was changed."
    ]
    file_lines = view.text.split("\n")
    if matched == 0:
        parts.append(f"Its first line is not in the file: {missing}")
    else:
        first = view.normalized.count("\n", 0, where) + 1
        plural = "s" if matched > 1 else ""
        parts.append(
            f"Its first {matched} line{plural} match the file from line {first}, but its line "
            f"{matched + 1} does not: {missing}"
        )
        there = first + matched
        if there <= len(file_lines):
            parts.append(f"The file has there:\n{there:>6}  {_shown_line(file_lines[there - 1])}")
    candidates = closest_candidates(view.text, lines[missing_index])
    if candidates:
        nearest = "\n".join(
            f"{c.first_line:>6}  {_shown_line(c.lines[0])}" for c in candidates if c.lines
        )
        parts.append(f"Nearest lines in the file:\n{nearest}")
    parts.append("Read the file again and copy old_text exactly from it.")
    return "\n".join(parts)


def _shown_line(line: str) -> str:
    return cut_line(line.rstrip("\r"), 200)
