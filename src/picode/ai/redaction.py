"""Masking secrets in text that leaves picode: one pattern, one function (docs/security.md).

Two kinds of secret are recognised. Keys picode itself read (environment, auth.json, config
``api_key``) are remembered here by value for the process, because a local server's token
has no shape. Everything else is recognised by shape: the token formats of the common
services, AWS secret keys by their variable name, ``Authorization`` header values and PEM
private key blocks. The pattern works on plain text and on JSON text alike (a body's
newlines are ``\\n`` there, and a match never takes a quote), so a JSON line stays valid.

It lives in ``ai`` because everything that writes bytes sits above it: tools (bash's full
output log), the session (files, exports, what the model reads) and the front ends.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

#: Shorter values would mask ordinary words.
MIN_SECRET_CHARS = 8

_known: set[str] = set()
_known_sorted: list[str] = []

#: Characters a token is made of; one that follows such a character is part of a longer
#: word (or of a base64 blob such as a thinking signature), not a token.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/")
_END = r"(?![A-Za-z0-9_-])"
#: A line break in text or in JSON text (``\\n``).
_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
#: Where a PEM line must end: a break, the end, or the closing quote of a string.
_LINE_END = rf"(?=[ \t]*(?:{_BREAK}|\Z|\\?[\"']))"


def _any_case(word: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """``word`` in any case (``_`` as ``_``, ``-`` or nothing) as (first letter, the rest)
    twice: every alternative of the pattern starts with a plain letter, so that the regex
    engine skips ahead to the characters that can start a match."""
    rest = "".join(
        f"[{c.upper()}{c.lower()}]" if c.isalpha() else "[_-]?" if c == "_" else re.escape(c)
        for c in word[1:]
    )
    return (word[0].lower(), rest), (word[0].upper(), rest)


_SHAPES = (
    # Anthropic, OpenAI (project, service account, admin and legacy keys).
    r"sk-ant-[A-Za-z0-9_-]{16,}",
    r"sk-proj-[A-Za-z0-9_-]{16,}",
    r"sk-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}",
    # Google API keys.
    r"AIza[0-9A-Za-z_-]{35}",
    # GitHub: classic tokens and fine-grained personal access tokens.
    r"gh[pousr]_[A-Za-z0-9]{36,}",
    r"github_pat_[A-Za-z0-9_]{22,}",
    # GitLab, Slack, Stripe, npm, PyPI, Hugging Face, SendGrid, DigitalOcean.
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"xox[abeprs]-[A-Za-z0-9-]{10,}",
    r"xapp-[0-9]-[A-Za-z0-9-]{10,}",
    r"sk_(?:live|test)_[A-Za-z0-9]{16,}",
    r"rk_(?:live|test)_[A-Za-z0-9]{16,}",
    r"whsec_[A-Za-z0-9]{24,}",
    r"npm_[A-Za-z0-9]{36}",
    r"pypi-AgE[A-Za-z0-9_-]{50,}",
    r"hf_[A-Za-z0-9]{34,}",
    r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    r"do[opr]_v1_[a-f0-9]{64}",
    # AWS access key ids (long-term and temporary).
    r"AKIA[A-Z0-9]{16}",
    r"ASIA[A-Z0-9]{16}",
    # JSON Web Tokens: a JSON header and payload in base64url ('{"' is 'eyJ').
    r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
)

#: A value after a name that says what it is: the name and separator stay (up to the end of
#: the group ``keep…``), the value goes.
_SEPARATOR = r"[\"'\\]*\s*[=:]\s*[\"'\\]*"
_NAMED = (
    (
        "aws_secret_access_key",
        rf"{_SEPARATOR})[A-Za-z0-9/+]{{40}}(?![A-Za-z0-9/+])",
    ),
    (
        "authorization",
        rf"{_SEPARATOR}(?:[Bb]earer|[Bb]asic|[Tt]oken)\s+)[A-Za-z0-9][A-Za-z0-9._~+/=-]{{15,}}",
    ),
)

#: Only lines a key is made of (its headers, base64): a command hidden after a BEGIN line
#: must stay visible wherever the text is shown redacted (an approval ask over rpc/acp).
_PEM = (
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    rf"(?:{_BREAK}[ \t]*(?:Proc-Type|DEK-Info): [A-Za-z0-9,-]+{_LINE_END})*"
    rf"(?:{_BREAK}+[ \t]*[A-Za-z0-9+/=]+{_LINE_END})*"
    rf"(?:{_BREAK}+[ \t]*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
)


def _build() -> re.Pattern[str]:
    branches = [f"{shape}{_END}" for shape in _SHAPES]
    for index, (name, value) in enumerate(_NAMED):
        for variant, (first, rest) in enumerate(_any_case(name)):
            branches.append(f"{first}(?P<keep{index}_{variant}>{rest}{value}")
    branches.append(_PEM)
    # Grouped by first character: the engine tries one group where a match could start,
    # not every alternative (a third less time on text without secrets).
    groups: dict[str, list[str]] = {}
    for branch in branches:
        groups.setdefault(branch[0], []).append(branch[1:])
    return re.compile(
        "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in groups.items())
    )


PATTERN = _build()


def remember_secret(value: str | None) -> None:
    """Mask ``value`` wherever it appears from now on (keys picode reads)."""
    if not value or len(value.strip()) < MIN_SECRET_CHARS:
        return
    value = value.strip()
    if value not in _known:
        _known.add(value)
        # Longest first: a key that contains another must go whole.
        _known_sorted[:] = sorted(_known, key=len, reverse=True)


def mask_known(text: str, replacement: str = REDACTED) -> tuple[str, int]:
    """``text`` with every remembered key replaced; and how many were."""
    count = 0
    for secret in _known_sorted:
        if secret in text:
            count += text.count(secret)
            text = text.replace(secret, replacement)
    return text, count


def redact(text: str, *, shapes: bool = True) -> tuple[str, int]:
    """``text`` with the remembered keys and (with ``shapes``) every token shape replaced by
    ``[redacted]``; and how many were."""
    text, count = mask_known(text)
    if not shapes:
        return text, count
    replaced = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal replaced
        keep = match.lastgroup
        if keep is None and _inside_word(match.string, match.start()):
            return match.group()
        replaced += 1
        if keep is None:
            return REDACTED
        return match.string[match.start() : match.end(keep)] + REDACTED

    return PATTERN.sub(replace, text), count + replaced


def _inside_word(text: str, start: int) -> bool:
    if start == 0 or text[start - 1] not in _WORD_CHARS:
        return False
    # JSON's and C's escapes (``\\n``) end in a letter but separate words.
    return not (start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt")


def redact_text(text: str) -> str:
    return redact(text)[0]


def looks_like_secret(value: str) -> bool:
    """Does ``value`` hold a remembered key or a token shape?"""
    return redact(value)[1] > 0


class StreamRedactor:
    """``redact`` for text that arrives in pieces (a command's output on its way to a file,
    a reply streamed to a program).

    A token cut between two pieces must still be seen whole, so the unfinished last line
    (with ``words``: the unfinished last word) is held back, and so is a PEM private key
    block until its end line arrives. What is held is bounded: past ``hold_chars`` it goes
    out at the last space, or as it is.
    """

    def __init__(self, hold_chars: int = 64 * 1024, *, words: bool = False) -> None:
        self.hold_chars = hold_chars
        self._breaks = " \t\r\n" if words else "\n"
        self._pending = ""

    def feed(self, text: str) -> str:
        """What can be written now, redacted."""
        text = self._pending + text
        cut = max(text.rfind(mark) for mark in self._breaks) + 1
        begin = text.rfind("-----BEGIN ", 0, cut)
        if begin != -1 and "-----END " not in text[begin:cut]:
            cut = begin
        if len(text) - cut > self.hold_chars:
            space = text.rfind(" ", cut, len(text) - 1)
            cut = space + 1 if space != -1 else len(text)
        self._pending = text[cut:]
        return redact(text[:cut])[0] if cut else ""

    def flush(self) -> str:
        """The rest, redacted: the stream has ended."""
        text, self._pending = self._pending, ""
        return redact(text)[0] if text else ""


class DeltaRedactor:
    """Streamed content blocks (text, thinking, tool arguments) as they may be shown: each
    block's deltas go through a word-holding ``StreamRedactor``, so a key the model writes
    is masked even when the throttle cut it in two. ``end`` gives what a block still held."""

    #: A token is shorter; a PEM key block of 8192 bits is not.
    HOLD_CHARS = 8 * 1024

    def __init__(self) -> None:
        self._blocks: dict[int, StreamRedactor] = {}

    def delta(self, index: int, text: str) -> str:
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = StreamRedactor(self.HOLD_CHARS, words=True)
        return block.feed(text)

    def end(self, index: int) -> str:
        block = self._blocks.pop(index, None)
        return block.flush() if block is not None else ""

    def end_all(self) -> dict[int, str]:
        """What every open block still held (a message that ended without its block ends,
        e.g. aborted); the blocks are forgotten."""
        held = {index: block.flush() for index, block in self._blocks.items()}
        self._blocks.clear()
        return {index: text for index, text in held.items() if text}
