"""``session/list``: picode's saved sessions as ACP ``SessionInfo``, newest first, a page at
a time (the cursor is the position of the next one)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo

from picode.session.store import SessionStore

PAGE_SIZE = 50


def list_sessions(sessions_dir: Path, cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    start = _position(cursor)
    folder = Path(cwd).expanduser() if cwd else None
    # A subagent's session is a transcript of one ``task`` call, not a conversation.
    summaries = [s for s in SessionStore(sessions_dir).list(folder) if s.subagent_of is None]
    page = summaries[start : start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(summaries)
    return ListSessionsResponse(
        sessions=[
            SessionInfo(
                session_id=summary.id,
                cwd=str(summary.cwd),
                title=summary.name or summary.first_message,
                updated_at=_iso(summary.modified),
            )
            for summary in page
        ],
        next_cursor=str(start + PAGE_SIZE) if more else None,
    )


def _position(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise RequestError.invalid_params({"message": f"not a cursor picode gave: {cursor!r}"})
    return int(cursor)


def _iso(milliseconds: int) -> str:
    return datetime.fromtimestamp(milliseconds / 1000, UTC).isoformat().replace("+00:00", "Z")
