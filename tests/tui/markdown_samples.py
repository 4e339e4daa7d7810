"""Generated Markdown replies of a chosen length: the same sections for tests and benches;
and rendered rows compared with their styles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.tui.widgets.md_render import Row

SECTION = """## Section {n}

Some prose with **bold**, `inline code` and a [link](https://example.com/{n}).

- first point about item {n}
- second point, a little longer than the first one

```python
def handler_{n}(event: dict) -> int:
    return len(event.get("items", []))
```

"""


def sections(size: int) -> str:
    """Whole numbered sections until the text holds at least ``size`` characters."""
    parts: list[str] = []
    length = n = 0
    while length < size:
        parts.append(SECTION.format(n=n))
        length += len(parts[-1])
        n += 1
    return "".join(parts)


def signature(rows: list[Row]) -> list[tuple[Any, ...]]:
    """Rows compared with their styles (Content's ``==`` compares text only)."""
    return [
        (
            row.body.plain,
            tuple(row.body.spans),
            row.first.plain,
            tuple(row.first.spans),
            row.rest.plain,
            row.code,
            row.center,
            row.rule,
            row.table,
        )
        for row in rows
    ]
