"""The session file's line format (docs/sessions.md): serialising, the fast prefix scan, redaction.

Every entry line starts ``{"type":..,"id":..,"parent_id":..,"timestamp":..`` in exactly that
order, so a scan can read the tree's shape with one regex per line and no JSON parsing.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from picode.agent.file_blocks import split_attachments
from picode.ai.redaction import redact
from picode.ai.text_repair import has_surrogates, repair_tree
from picode.ai.types import Message, TextContent, UserMessage

FORMAT_VERSION = 1
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "custom",
        "label",
        "session_info",
    }
)
RESERVED_KEYS = ("type", "id", "parent_id", "timestamp")

ENTRY_PREFIX = re.compile(
    rb'\{"type":"([a-z_]+)","id":"([^"\\]+)","parent_id":(?:"([^"\\]+)"|null),"timestamp":(-?\d+)'
)
HEADER_PREFIX = b'{"type":"session"'
MESSAGE_LINE_START = b'{"type":"message",'
INFO_LINE_START = b'{"type":"session_info",'


@dataclass(slots=True)
class Entry:
    type: str
    id: str
    parent_id: str | None
    timestamp: int
    data: dict[str, Any]
    """Everything in the JSON object except the four keys above."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_entry_id(taken: Container[str]) -> str:
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def new_session_id() -> str:
    return secrets.token_hex(16)


def file_timestamp(ms: int) -> str:
    """Sortable and safe in file names on every platform: ``20250102T101112345Z``."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f"{millis:03d}Z"


_UNSAFE_NAME_CHARS = re.compile(r'[\\/:*?"<>|\x00-\x1f]')
_MAX_FOLDER_NAME = 150


def encode_cwd(cwd: Path) -> str:
    """``/home/me/proj`` → ``--home-me-proj--``: one flat, readable folder name per cwd."""
    text = str(cwd).strip("/\\")
    name = "--" + _UNSAFE_NAME_CHARS.sub("-", text) + "--"
    if len(name.encode("utf-8")) > _MAX_FOLDER_NAME:
        digest = hashlib.sha256(str(cwd).encode("utf-8", "surrogatepass")).hexdigest()[:12]
        head = name.encode("utf-8")[: _MAX_FOLDER_NAME - 16].decode("utf-8", "ignore")
        name = f"{head}-{digest}--"
    return name


def session_id_from_name(name: str) -> str | None:
    """``<timestamp>_<id>.jsonl`` → ``<id>``."""
    stem = name[:-6] if name.endswith(".jsonl") else None
    if not stem or "_" not in stem:
        return None
    return stem.partition("_")[2] or None


# --- serialising -----------------------------------------------------------------------


def dump_json(obj: dict[str, Any]) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if has_surrogates(text):
        # Lone surrogates (undecodable bytes smuggled through str) cannot be UTF-8, and
        # escaped they would come back on every load: store U+FFFD instead.
        text = json.dumps(repair_tree(obj), ensure_ascii=False, separators=(",", ":"))
    return text


def loads_line(raw: bytes) -> tuple[Any, str | None]:
    """A stored line as JSON and what had to be repaired (None: nothing).

    Invalid UTF-8 is decoded with U+FFFD; escaped lone surrogates (written by older
    versions) become U+FFFD too, so nothing read back can break a request or a write.
    Raises ValueError when the line is not JSON even after that.
    """
    repaired: str | None = None
    try:
        obj = json.loads(raw)
    except UnicodeDecodeError:
        obj = json.loads(raw.decode("utf-8", "replace"))
        repaired = "invalid UTF-8 replaced by U+FFFD"
    if b"\\ud" in raw or b"\\uD" in raw:
        fixed = repair_tree(obj)
        if fixed != obj:
            obj = fixed
            repaired = repaired or "unpaired surrogates replaced by U+FFFD"
    return obj, repaired


def entry_object(
    kind: str, entry_id: str, parent_id: str | None, timestamp: int, data: dict[str, Any]
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": kind,
        "id": entry_id,
        "parent_id": parent_id,
        "timestamp": timestamp,
    }
    for key, value in data.items():
        if key not in obj:
            obj[key] = value
    return obj


def entry_from_object(obj: dict[str, Any]) -> Entry:
    data = {k: v for k, v in obj.items() if k not in RESERVED_KEYS}
    parent = obj.get("parent_id")
    timestamp = obj.get("timestamp")
    return Entry(
        type=str(obj["type"]),
        id=str(obj["id"]),
        parent_id=str(parent) if parent is not None else None,
        timestamp=timestamp if isinstance(timestamp, int) else 0,
        data=data,
    )


# --- secrets ---------------------------------------------------------------------------


def redact_secrets(text: str) -> tuple[str, int]:
    """Replace the keys picode knows and anything shaped like a key or token
    (``picode.ai.redaction``); the JSON stays valid."""
    return redact(text)


# --- compaction summaries --------------------------------------------------------------

_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
_SUMMARY_SUFFIX = "\n</summary>"


def compaction_summary_message(summary: str, timestamp: int | None = None) -> UserMessage:
    text = f"{_SUMMARY_PREFIX}{summary}{_SUMMARY_SUFFIX}"
    if timestamp is None:
        return UserMessage([TextContent(text)])
    return UserMessage([TextContent(text)], timestamp)


def is_compaction_summary(message: Message) -> bool:
    if not isinstance(message, UserMessage):
        return False
    text = message.text
    return text.startswith(_SUMMARY_PREFIX) and text.endswith(_SUMMARY_SUFFIX)


# --- summaries of a branch left behind (/tree, /rewind) --------------------------------

_BRANCH_PREFIX = (
    "The conversation went back to an earlier point. What was tried on the branch left "
    "behind, kept as context:\n\n<branch-summary>\n"
)
_BRANCH_SUFFIX = "\n</branch-summary>"


def branch_summary_message(summary: str) -> UserMessage:
    return UserMessage([TextContent(f"{_BRANCH_PREFIX}{summary.strip()}{_BRANCH_SUFFIX}")])


def branch_summary_of(message: Message) -> str | None:
    """The summary a branch-summary message holds; None for any other message."""
    if not isinstance(message, UserMessage):
        return None
    text = message.text
    if text.startswith(_BRANCH_PREFIX) and text.endswith(_BRANCH_SUFFIX):
        return text[len(_BRANCH_PREFIX) : -len(_BRANCH_SUFFIX)]
    return None


# --- a command the person ran with ``!cmd`` ----------------------------------------------

_SHELL_RUN = re.compile(
    r"I ran `(?P<command>[^\n]*?)`:\n(?P<fence>`{3,})\n(?P<output>.*)\n(?P=fence)", re.DOTALL
)
#: Also with its white space run together, as a listing keeps a first message.
_SHELL_RUN_START = re.compile(r"I ran `(?P<command>[^\n]*?)`:\s*`{3}")


def shell_run_text(command: str, output: str) -> str:
    """The user message that tells the model what the person ran and what it printed."""
    fence = "```"
    while fence in output:
        fence += "`"
    return f"I ran `{command}`:\n{fence}\n{output.rstrip()}\n{fence}"


def read_shell_run(text: str) -> tuple[str, str] | None:
    """``shell_run_text`` read back: (command, output), else None."""
    found = _SHELL_RUN.fullmatch(text)
    return (found["command"], found["output"]) if found is not None else None


def typed_text(message: UserMessage) -> str:
    """What the person typed of ``message``: without the contents of the files it attached
    (``@path`` stays as typed), and a ``!cmd`` given to the model as ``!cmd``."""
    return as_typed(split_attachments(message)[0])


def as_typed(text: str) -> str:
    """A person's message as they typed it: ``!cmd`` for a command's output given to the
    model (also when only its start is at hand, as in a preview), else the text itself."""
    found = _SHELL_RUN_START.match(text)
    return f"!{found['command']}" if found is not None else text
