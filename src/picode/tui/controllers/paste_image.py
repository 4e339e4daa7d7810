"""``ctrl+v``: an image on the system clipboard becomes an attachment (``@`` mention of a
copy kept in picode's data folder); without one, the editor pastes as Textual does."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Protocol

    from picode.tui.config import TuiConfig
    from picode.tui.controllers.host import Reporter
    from picode.tui.widgets.editor import PromptEditor

    class PasteHost(Reporter, Protocol):
        config: TuiConfig
        clipboard_env: Mapping[str, str] | None

        @property
        def editor(self) -> PromptEditor: ...


async def paste_image(host: PasteHost) -> None:
    from picode.tui.clipboard_image import (
        MAX_IMAGE_BYTES,
        keep_pasted_image,
        read_clipboard_image,
    )
    from picode.tui.dropped_files import mention

    folder = host.config.pasted_dir
    found = None
    if folder is not None:
        found = await asyncio.to_thread(read_clipboard_image, env=host.clipboard_env)
    if folder is None or found is None:
        host.editor.paste_app_clipboard()
        return
    if len(found.data) > MAX_IMAGE_BYTES:
        limit = MAX_IMAGE_BYTES // (1024 * 1024)
        host.report(f"The clipboard's image is larger than {limit} MB: not attached.", "warning")
        return
    try:
        path = await asyncio.to_thread(keep_pasted_image, found, folder)
    except OSError as exc:
        host.report(f"Could not keep the pasted image in {folder}: {exc}", "warning")
        return
    host.editor.insert(mention(path) + " ")
