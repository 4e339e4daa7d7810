"""Images dragged into the terminal. A terminal pastes a dropped file as its path: quoted
(``'/home/me/Shot 1.png'``), with spaces escaped (``/Users/me/Shot\\ 1.png``) or as a
``file://`` address. A paste made only of such paths of images becomes ``@`` mentions, so
the images go with the message as ``@path`` sends them (docs/tui.md "Attaching files");
any other paste is left as it is.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

from picode.tools.read import image_mime_type

#: More paths than this in one paste is text, not a drop.
MAX_DROPPED = 20
#: Longer than this is text, not a few dropped paths.
MAX_DROP_CHARS = 16_384


def dropped_images(text: str) -> str | None:
    """The ``@`` mentions for a paste of nothing but paths of existing image files (PNG,
    JPEG, GIF, WebP, by their first bytes), with a space after; None for any other paste."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_DROP_CHARS:
        return None
    try:
        words = shlex.split(stripped)
    except ValueError:  # an unclosed quote: text
        return None
    if not words or len(words) > MAX_DROPPED:
        return None
    mentions: list[str] = []
    for word in words:
        path = _dropped_path(word)
        if path is None or not _is_image(path):
            return None
        mentions.append(mention(path))
    return " ".join(mentions) + " "


def mention(path: Path) -> str:
    """``path`` as an ``@`` mention (quoted when it has spaces, as completion writes it)."""
    shown = str(path)
    return f'@"{shown}"' if any(c.isspace() for c in shown) else f"@{shown}"


def _dropped_path(word: str) -> Path | None:
    """The absolute path ``word`` names (a drop always gives one); None otherwise."""
    if word.startswith("file://"):
        address = urlparse(word)
        if address.netloc not in ("", "localhost"):
            return None
        word = unquote(address.path)
    if '"' in word or "\n" in word:
        return None  # no way to write it as a mention
    path = Path(word).expanduser()
    return path if path.is_absolute() else None


def _is_image(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return image_mime_type(handle.read(16)) is not None
    except OSError:  # not a file, or not readable: the paste stays text
        return False
