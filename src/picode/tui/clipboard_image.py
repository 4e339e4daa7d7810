"""An image on the system clipboard (a screenshot taken to it), read for ``ctrl+v``.

A terminal pastes text only, so an image is read with the platform's tool: ``wl-paste`` on
Wayland, ``xclip`` on X11, ``pngpaste`` or ``osascript`` on macOS. What a tool hands back
is checked by its first bytes (PNG, JPEG, GIF or WebP, as ``@path`` accepts), kept in
picode's data folder (mode 0600: a screenshot may show anything) and attached as that
file's ``@`` mention.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from picode.tools.read import image_mime_type

TOOL_TIMEOUT_S = 3.0
#: The image types asked for, best first (what the models take).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
#: A clipboard image larger than this is not read whole (``@path`` refuses over 5 MB).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
_OSASCRIPT_DATA = re.compile(rb"\xc2\xabdata [A-Za-z]{4}([0-9A-Fa-f]+)\xc2\xbb")


@dataclass(frozen=True, slots=True)
class ClipboardImage:
    data: bytes
    mime_type: str


def read_clipboard_image(
    platform: str = sys.platform, env: Mapping[str, str] | None = None
) -> ClipboardImage | None:
    """The clipboard's image, if it holds one and a tool can read it; None otherwise (no
    tool, no display, text on the clipboard). Blocks: run it in a thread."""
    env = os.environ if env is None else env
    search = env.get("PATH")
    for tool in _tools(platform, env):
        binary = shutil.which(tool.name, path=search)
        if binary is None:
            continue
        kind = ""
        if tool.list_types:
            # One question for what the clipboard offers, one for the image: not one per type.
            offered = (reader_output([binary, *tool.list_types], env) or b"").split()
            kind = next((k for k in IMAGE_TYPES if k.encode() in offered), "")
            if not kind:
                continue
        data = reader_output([binary, *(kind if a == "{type}" else a for a in tool.read)], env)
        image = _image_in(data) if data is not None else None
        if image is not None:
            return image
    return None


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    #: The arguments that print the image; ``{type}`` stands for the type asked for.
    read: tuple[str, ...]
    #: The arguments that list the types on offer; empty: the tool gives PNG or nothing.
    list_types: tuple[str, ...] = ()


def _tools(platform: str, env: Mapping[str, str]) -> list[_Tool]:
    """The clipboard tools worth trying here, in order."""
    if platform == "darwin":
        return [
            _Tool("pngpaste", ("-",)),
            _Tool("osascript", ("-e", "the clipboard as «class PNGf»")),
        ]
    wayland = _Tool("wl-paste", ("--no-newline", "--type", "{type}"), ("--list-types",))
    selection = ("-selection", "clipboard")
    x11 = _Tool("xclip", (*selection, "-t", "{type}", "-o"), (*selection, "-t", "TARGETS", "-o"))
    return [wayland, x11] if env.get("WAYLAND_DISPLAY") else [x11, wayland]


def reader_output(command: list[str], env: Mapping[str, str]) -> bytes | None:
    """What ``command`` printed, if it succeeded in time and printed something."""
    try:
        completed = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TOOL_TIMEOUT_S,
            env=dict(env),
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    if completed.returncode != 0 or not completed.stdout:
        return None
    return completed.stdout[: MAX_IMAGE_BYTES + 1]


def _image_in(data: bytes) -> ClipboardImage | None:
    if (found := _OSASCRIPT_DATA.match(data.strip())) is not None:
        data = bytes.fromhex(found.group(1).decode("ascii"))  # osascript prints it as hex
    mime_type = image_mime_type(data[:16])
    return ClipboardImage(data, mime_type) if mime_type is not None else None


def keep_pasted_image(image: ClipboardImage, folder: Path) -> Path:
    """Write ``image`` into ``folder`` (made 0700) as a new 0600 file; its path."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    extension = _EXTENSIONS[image.mime_type]
    for number in range(1, 1000):
        path = folder / f"pasted-{stamp}-{number}.{extension}"
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as file:
            file.write(image.data)
        return path
    raise OSError(f"no free name for a pasted image in {folder}")
