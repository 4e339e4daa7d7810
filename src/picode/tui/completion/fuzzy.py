"""Fuzzy matching for pickers and completion: the query's characters in order, scored.

A match scores higher when its characters are consecutive, when they start words
(after ``/ _ - . space`` or at a lower→upper case change) and when the text is short.
Several words in a query must each match; their scores add up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

WORD_STARTS = frozenset("/_-. :@")

_CONSECUTIVE = 8.0
_WORD_START = 6.0
_FIRST_CHAR = 4.0
_GAP = 0.5
_SUBSTRING = 20.0
_PREFIX = 15.0
_LENGTH = 0.05


def score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (higher is better), None if it does not match.

    Case-insensitive; whitespace in the query separates words that must all match.
    """
    words = query.lower().split()
    if not words:
        return 0.0
    lower = text.lower()
    total = 0.0
    for word in words:
        found = _word_score(word, lower, text)
        if found is None:
            return None
        total += found
    return total - len(text) * _LENGTH


def _word_score(word: str, lower: str, original: str) -> float | None:
    at = lower.find(word)
    if at >= 0:
        bonus = _SUBSTRING + _CONSECUTIVE * (len(word) - 1)
        if at == 0:
            bonus += _PREFIX
        elif _starts_word(lower, original, at):
            bonus += _WORD_START
        return bonus
    return _subsequence_score(word, lower, original)


def _subsequence_score(word: str, lower: str, original: str) -> float | None:
    # Greedy from the left finds whether it matches; a second pass from each word start
    # of the first character often finds a tighter alignment.
    best: float | None = None
    start = 0
    first = word[0]
    tries = 0
    while tries < 8:
        at = lower.find(first, start)
        if at < 0:
            break
        tries += 1
        found = _align(word, lower, original, at)
        if found is None:
            break  # no later start can succeed if this one could not
        if best is None or found > best:
            best = found
        start = at + 1
    return best


def _align(word: str, lower: str, original: str, at: int) -> float | None:
    total = _FIRST_CHAR if at == 0 else (_WORD_START if _starts_word(lower, original, at) else 0)
    previous = at
    for char in word[1:]:
        position = lower.find(char, previous + 1)
        if position < 0:
            return None
        if position == previous + 1:
            total += _CONSECUTIVE
        else:
            total -= _GAP * min(position - previous - 1, 20)
            if _starts_word(lower, original, position):
                total += _WORD_START
        previous = position
    return total


def _starts_word(lower: str, original: str, at: int) -> bool:
    if at == 0:
        return True
    before = lower[at - 1]
    if before in WORD_STARTS:
        return True
    return original[at].isupper() and not original[at - 1].isupper()


def rank(
    query: str, items: Iterable[T], key: Callable[[T], str], limit: int | None = None
) -> list[T]:
    """``items`` that match, best first; ties keep their original order."""
    if not query.strip():
        found = list(items)
        return found if limit is None else found[:limit]
    scored: list[tuple[float, int, T]] = []
    for index, item in enumerate(items):
        value = score(query, key(item))
        if value is not None:
            scored.append((-value, index, item))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    ranked = [item for _, _, item in scored]
    return ranked if limit is None else ranked[:limit]
