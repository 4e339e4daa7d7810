"""How a reply's Markdown looks (pytest-textual-snapshot): every construct in one reply."""

from __future__ import annotations

from typing import Any

from picode.tui.widgets.markdown import MarkdownView
from tests.tui.hosts import ScrollHost

REPLY = """# Release notes

Intro with **bold**, *emphasis*, ~~gone~~, `inline code` and a [link](https://example.com).
This paragraph is long enough to wrap at least once on an eighty-column screen.

## Changes

- a first point, long enough that its second line hangs under the text, not the bullet
- second point
  - nested
    1. ordered inside
    2. and another

> A quote that runs long enough to wrap onto a second line with the bar on both lines.

| Name | Size | Kind |
|:-----|-----:|:----:|
| alpha | 1 | file |
| beta | 22222 | folder |

```python
def handler(event: dict) -> int:
    # count the items
    return len(event.get("items", []))
```

---

The end.
"""


def test_markdown_reply(snap_compare: Any) -> None:
    app = ScrollHost(MarkdownView(REPLY))
    # The SVG draws the app's title (by default its class name): the one it was taken with.
    app.title = "Harness"
    assert snap_compare(app, terminal_size=(80, 48))
