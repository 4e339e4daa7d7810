"""A loaded session replayed to an ACP client (``modes/acp/updates.history_updates``): what
was sent, as the client would have shown it."""

from __future__ import annotations

from pathlib import Path

from picode.agent.file_blocks import mode_note
from picode.ai.types import ImageContent, TextContent, UserMessage
from picode.modes.acp.updates import history_updates
from picode.tools.attachments import attach_mentions

PNG = "iVBORw0KGgo="


def test_a_user_message_replays_its_text_and_names_its_attached_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("secret plans\nmore plans\n")
    typed = "summarise @notes.txt"
    attached = attach_mentions(typed, tmp_path).blocks
    message = UserMessage(
        [
            TextContent(typed),
            *attached,
            mode_note("Plan mode is on."),
            ImageContent(PNG, "image/png"),
        ]
    )

    updates = list(history_updates([message], tmp_path))

    assert [u.session_update for u in updates] == ["user_message_chunk"] * 3
    texts = [getattr(u.content, "text", None) for u in updates]
    assert texts[:2] == [typed, "attached: notes.txt (2 lines)"]
    assert updates[2].content.type == "image"
    assert not any("plans" in text or "Plan mode" in text for text in texts if text)
