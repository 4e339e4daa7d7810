"""What, if anything, to complete at the cursor: ``/command`` or ``@path``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_COMMAND = re.compile(r"^/([\w:-]*)\Z")
_FILE = re.compile(r"(?:^|(?<=\s))@(\S*)\Z")


@dataclass(slots=True, frozen=True)
class Trigger:
    kind: Literal["command", "file"]
    query: str
    """What was typed after ``/`` or ``@``."""
    start: int
    """Offset (in the text before the cursor) of the ``/`` or ``@``."""


def find_trigger(before_cursor: str) -> Trigger | None:
    """``before_cursor``: the editor text from its start to the cursor.

    A command completes only as the first word of the message; a file wherever ``@``
    starts a word (so ``me@example.com`` does not trigger).
    """
    if "\n" not in before_cursor and (found := _COMMAND.match(before_cursor)):
        return Trigger("command", found.group(1), 0)
    line_start = before_cursor.rfind("\n") + 1
    if found := _FILE.search(before_cursor, line_start):
        return Trigger("file", found.group(1), found.start())
    return None


def apply_completion(text: str, cursor: int, trigger: Trigger, value: str) -> tuple[str, int]:
    """The text with the token at ``trigger`` replaced by ``value``, and the new cursor.

    Commands get a trailing space; files too, except folders (``dir/``) so typing can go on
    into them. A path with spaces is quoted (``@"my file.txt"``).
    """
    if trigger.kind == "command":
        replacement = value + " "
    else:
        path = f'"{value}"' if any(c.isspace() for c in value) else value
        replacement = "@" + path + ("" if value.endswith("/") else " ")
    end = cursor
    # Swallow the rest of the token after the cursor too (completing in the middle of it).
    while end < len(text) and not text[end].isspace():
        end += 1
    new_text = text[: trigger.start] + replacement + text[end:]
    return new_text, trigger.start + len(replacement)
