"""One JSON line from a client, nested no deeper than picode will ever walk.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) somewhere past a thousand
levels, and a value just under that still breaks whatever walks it next (validation, the
session file). No command picode understands nests more than a few levels, so a line
deeper than ``MAX_DEPTH`` is refused as a whole, with an error the client can read.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200


class TooDeepError(ValueError):
    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels")


def loads_line(line: str | bytes) -> Any:
    """The line's JSON value; ``TooDeepError`` past ``MAX_DEPTH``, ``ValueError`` when it
    is not JSON."""
    try:
        value = json.loads(line)
    except RecursionError:
        raise TooDeepError() from None
    if _deeper_than(value, MAX_DEPTH):
        raise TooDeepError()
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    # A loop, not recursion: the point is not to recurse on the client's nesting.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
