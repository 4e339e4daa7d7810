"""No escape sequence from the model, a tool, a file or a session file gets into what the
TUI draws: each place untrusted text enters a widget, checked on what it would draw."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.content import Content

from picode.session.store.index import SessionSummary
from picode.tui.completion.popup import CompletionItem, _prompt
from picode.tui.pickers.session_picker import _title
from picode.tui.widgets.footer import FooterInfo, InfoFooter, git_branch
from picode.tui.widgets.info import InfoView
from picode.tui.widgets.markdown import MarkdownView, StreamingMarkdown
from picode.tui.widgets.messages import ThinkingView, UserMessageView
from picode.tui.widgets.notice import NoticeView, WelcomeView

HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J\x9b2J\x9d0;t\x9c"
RAW = ("\x1b", "\x9b", "\x9d", "\x07")


def _clean(text: str) -> bool:
    return not any(char in text for char in RAW)


def _row_text(view: MarkdownView) -> str:
    return "\n".join(row.first.plain + row.body.plain + row.rest.plain for row in view.rows())


def test_a_reply_from_history_and_a_streamed_one_draw_no_escape() -> None:
    assert _clean(_row_text(MarkdownView(f"# Title{HOSTILE}\n\nbody {HOSTILE} `x{HOSTILE}`")))
    streaming = StreamingMarkdown()
    for piece in ("text \x1b]52;c;", "aGVsbG8=\x07 and \x9b", "2J done"):
        streaming.feed(piece)
    streaming.finish()
    shown = _row_text(streaming)
    assert _clean(shown) and shown.startswith("text") and shown.endswith("done")
    assert streaming.text_length == len("text \x1b]52;c;aGVsbG8=\x07 and \x9b2J done")


def test_thinking_user_text_and_notices_draw_no_escape() -> None:
    thinking = ThinkingView(f"a{HOSTILE}")
    thinking.feed(f"b{HOSTILE}")
    assert _clean(thinking.render().plain)
    thinking.set_text(f"c{HOSTILE}")
    assert _clean(thinking.render().plain)
    user = UserMessageView(f"pasted{HOSTILE}")
    assert isinstance(user.content, Content) and _clean(user.content.plain)
    notice = NoticeView(f"Error: 500 {HOSTILE}", "error")
    assert isinstance(notice.content, Content) and _clean(notice.content.plain)
    welcome = WelcomeView("1", "m", f"~/dir{HOSTILE}")
    assert isinstance(welcome.content, Content) and _clean(welcome.content.plain)


def test_a_hostile_branch_name_is_spelled_out_in_the_footer(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text(f"ref: refs/heads/main{HOSTILE}\n")
    branch = git_branch(tmp_path)
    assert branch is not None
    footer = InfoFooter(FooterInfo(cwd=f"~/p{HOSTILE}", branch=branch, session_name=HOSTILE))
    suffix = footer.left_suffix()
    assert _clean(suffix) and "main␛]52;c;aGVsbG8=\\x07" in suffix


@pytest.mark.parametrize("name", [HOSTILE, None])
def test_session_titles_and_completions_are_spelled_out(name: str | None) -> None:
    summary = SessionSummary(
        id="s",
        path=Path("s.jsonl"),
        cwd=Path("/p"),
        created=0,
        modified=0,
        name=name,
        first_message=f"hello{HOSTILE}",
        message_count=1,
        size_bytes=1,
    )
    assert _clean(_title(summary).plain)
    item = CompletionItem(value=f"evil{HOSTILE}.py", label=f"evil{HOSTILE}.py", detail=HOSTILE)
    assert _clean(_prompt(item, 20).plain) and _clean(_prompt(CompletionItem("a", HOSTILE)).plain)


def test_info_lines_quoting_a_server_draw_no_escape() -> None:
    view = InfoView("MCP servers", [("files", f"failed: {HOSTILE}"), f"note {HOSTILE}"])
    assert _clean(view.plain)
