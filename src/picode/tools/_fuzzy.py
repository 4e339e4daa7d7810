"""Finding the text an edit replaces: exactly, then forgivingly, else the closest candidates.

The forgiving match compares normalised text: trailing whitespace of every line dropped
(which also makes CRLF equal LF), NFKC applied, typographic quotes, dashes, spaces and
ellipses turned into their ASCII forms. Normalising never joins or splits lines, so a match
found in normalised text maps back to the original through (line, column).
"""

from __future__ import annotations

import bisect
import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

_ASCII_FORMS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u00a0\u2007\u202f\u3000", " "),
        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff", ""),
        "\u2026": "...",
    }
)

#: Enough to show the model that a match is ambiguous without flooding it.
MAX_REPORTED_MATCHES = 50


def _normalize_cluster(cluster: str) -> str:
    return unicodedata.normalize("NFKC", cluster).translate(_ASCII_FORMS)


def _clusters(line: str) -> list[tuple[int, int]]:
    """(start, end) of each base character with the combining marks that follow it."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(line):
        end = index + 1
        while end < len(line) and unicodedata.combining(line[end]):
            end += 1
        spans.append((index, end))
        index = end
    return spans


def normalize_line(line: str) -> str:
    if line.isascii():
        return line.rstrip()
    return "".join(_normalize_cluster(line[a:b]) for a, b in _clusters(line)).rstrip()


def normalize_text(text: str) -> str:
    return "\n".join(normalize_line(line) for line in text.split("\n"))


def _column_map(line: str) -> tuple[list[int], list[int]]:
    """For each char of ``normalize_line(line)``: the original (start, end) it came from."""
    starts: list[int] = []
    ends: list[int] = []
    if line.isascii():
        kept = len(line.rstrip())
        return list(range(kept)), list(range(1, kept + 1))
    for a, b in _clusters(line):
        piece = _normalize_cluster(line[a:b])
        starts.extend([a] * len(piece))
        ends.extend([b] * len(piece))
    kept = len(normalize_line(line))
    return starts[:kept], ends[:kept]


@dataclass(slots=True)
class NormalizedText:
    """``original`` split into lines, with the normalised text and where each line begins."""

    original: str
    lines: list[str]
    normalized: str
    original_offsets: list[int]
    normalized_offsets: list[int]

    @classmethod
    def build(cls, original: str) -> NormalizedText:
        lines = original.split("\n")
        normalized_lines = [normalize_line(line) for line in lines]
        original_offsets: list[int] = []
        normalized_offsets: list[int] = []
        position = normalized_position = 0
        for line, normalized_line in zip(lines, normalized_lines, strict=True):
            original_offsets.append(position)
            normalized_offsets.append(normalized_position)
            position += len(line) + 1
            normalized_position += len(normalized_line) + 1
        normalized = "\n".join(normalized_lines)
        return cls(original, lines, normalized, original_offsets, normalized_offsets)

    def to_original(self, position: int, *, end: bool) -> int:
        """Original index for a normalised index (``end``: an exclusive end position)."""
        probe = position - 1 if end else position
        line_index = bisect.bisect_right(self.normalized_offsets, probe) - 1
        column = probe - self.normalized_offsets[line_index]
        line = self.lines[line_index]
        starts, ends = _column_map(line)
        if column >= len(starts):
            # The newline after the line; trailing whitespace before it belongs to the match.
            newline = self.original_offsets[line_index] + len(line)
            return newline + 1 if end else newline
        base = self.original_offsets[line_index]
        return base + (ends[column] if end else starts[column])


@dataclass(slots=True)
class Matches:
    spans: list[tuple[int, int]]
    fuzzy: bool


def find_all(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    position = haystack.find(needle)
    while position != -1 and len(found) < MAX_REPORTED_MATCHES:
        found.append(position)
        position = haystack.find(needle, position + 1)
    return found


def find_matches(content: str, old_text: str) -> Matches:
    """Spans of ``old_text`` in ``content``: exact ones, else forgiving ones (maybe none)."""
    exact = find_all(content, old_text)
    if exact:
        return Matches([(start, start + len(old_text)) for start in exact], fuzzy=False)
    needle = normalize_text(old_text)
    if not needle.strip():
        return Matches([], fuzzy=True)
    normalized = NormalizedText.build(content)
    spans = [
        (
            normalized.to_original(start, end=False),
            normalized.to_original(start + len(needle), end=True),
        )
        for start in find_all(normalized.normalized, needle)
    ]
    return Matches(spans, fuzzy=True)


@dataclass(slots=True)
class Candidate:
    first_line: int
    lines: list[str]
    similarity: float


#: Bounds on the work spent explaining a failed match in a big file.
_MAX_ANCHORS_PER_LINE = 200
_MAX_WINDOWS = 60
_WORD = re.compile(r"\w+")


def _line_key(line: str) -> str:
    # Indentation is ignored when looking for where the model probably meant.
    return normalize_line(line).strip()


def closest_candidates(content: str, old_text: str, count: int = 3) -> list[Candidate]:
    """The windows of lines most similar to ``old_text`` (1-based line numbers).

    Windows are anchored on file lines equal to a line of ``old_text`` (ignoring
    indentation); failing any, on lines sharing its words. Only those windows
    are compared in full, so the cost stays near linear in the file size.
    """
    file_lines = content.split("\n")
    target_lines = old_text.strip("\n").split("\n")
    span = min(len(target_lines), len(file_lines))
    keys = [_line_key(line) for line in file_lines]
    target_keys = [_line_key(line) for line in target_lines]
    starts = _anchored_starts(keys, target_keys) or _shared_word_starts(keys, target_keys)
    last_start = len(file_lines) - span
    windows = sorted({min(max(start, 0), last_start) for start in starts})
    matcher = difflib.SequenceMatcher(autojunk=False)
    # Similarity is measured with indentation, so a re-indented copy is not shown as 100 %.
    matcher.set_seq2("\n".join(normalize_line(line) for line in target_lines))
    ranked: list[tuple[float, int]] = []
    for start in windows:
        matcher.set_seq1(
            "\n".join(normalize_line(line) for line in file_lines[start : start + span])
        )
        ratio = matcher.ratio()
        if ratio >= 0.4:
            ranked.append((ratio, start))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [
        Candidate(start + 1, file_lines[start : start + span], ratio)
        for ratio, start in _without_overlaps(ranked, span)[:count]
    ]


def _anchored_starts(keys: list[str], target_keys: list[str]) -> list[int]:
    positions: dict[str, list[int]] = {}
    wanted = {key for key in target_keys if key}
    for index, key in enumerate(keys):
        if key in wanted:
            positions.setdefault(key, []).append(index)
    votes: Counter[int] = Counter()
    for offset, key in enumerate(target_keys):
        for position in positions.get(key, ())[:_MAX_ANCHORS_PER_LINE]:
            votes[position - offset] += 1
    return [start for start, _ in votes.most_common(_MAX_WINDOWS)]


def _shared_word_starts(keys: list[str], target_keys: list[str]) -> list[int]:
    """Window starts voted for by words of ``old_text``, rare words weighing more."""
    wanted: dict[str, list[int]] = {}
    for offset, key in enumerate(target_keys):
        for word in set(_WORD.findall(key)):
            wanted.setdefault(word, []).append(offset)
    if not wanted:
        return []
    positions: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        for word in _WORD.findall(key):
            if word in wanted:
                positions.setdefault(word, []).append(index)
    votes: dict[int, float] = {}
    for word, found in positions.items():
        if len(found) > _MAX_ANCHORS_PER_LINE * 5:
            continue
        weight = 1.0 / len(found)
        for position in found:
            for offset in wanted[word]:
                start = position - offset
                votes[start] = votes.get(start, 0.0) + weight
    ranked = sorted(votes, key=lambda start: (-votes[start], start))
    return ranked[:_MAX_WINDOWS]


def _without_overlaps(ranked: list[tuple[float, int]], span: int) -> list[tuple[float, int]]:
    kept: list[tuple[float, int]] = []
    for ratio, index in ranked:
        if all(abs(index - other) >= span for _, other in kept):
            kept.append((ratio, index))
    return kept
