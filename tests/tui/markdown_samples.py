"""Generated Markdown replies of a chosen length: the same sections for tests and benches."""

from __future__ import annotations

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
