"""Export: self-contained, escaped HTML and Markdown of every kind of message."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from picode.ai.models import Model
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from picode.tui.export import (
    ExportError,
    ExportMeta,
    default_title,
    export_html,
    export_markdown,
    export_paths,
    export_session,
)

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,1 @@\n-x = 1\n-y = 2\n+x = 10"
META = ExportMeta(
    title="Fix <the> parser & more",
    session_id="abc123",
    cwd="/home/me/project",
    model="anthropic/claude-sonnet-4-5",
    exported_at="2025-01-02 10:11 UTC",
)


def assistant(*blocks: object, stop: str = "toolUse", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),  # type: ignore[arg-type]
        api="faux",
        provider="faux",
        model="faux-1",
        stop_reason=stop,  # type: ignore[arg-type]
        error_message=error,
    )


def conversation() -> list[Message]:
    return [
        UserMessage("Please fix <script>alert('x')</script> & the ```fence``` bug"),
        assistant(
            ThinkingContent("The <b>parser</b> drops torn lines."),
            TextContent("I'll **edit** it. <img src=x onerror=alert(1)>"),
            ToolCall(
                "call-edit", "edit", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 10"}
            ),
            ToolCall("call-bash", "bash", {"command": "pytest -q </dev/null"}),
        ),
        ToolResultMessage(
            "call-edit",
            "edit",
            [TextContent("Edited app.py (1 replacement).\n\n" + DIFF)],
            details={"diff": DIFF, "path": "app.py"},
        ),
        ToolResultMessage(
            "call-bash",
            "bash",
            [TextContent("1 failed <E> in 0.1s\n[exit code 1]")],
            is_error=True,
        ),
        UserMessage([TextContent("and this image"), ImageContent("iVBORw0KGgo=", "image/png")]),
        assistant(TextContent("| a | b |\n|---|---|\n| 1 | 2 |"), stop="stop"),
        assistant(stop="error", error="overloaded <503>"),
        ToolResultMessage("orphan", "read", [TextContent("orphan result")]),
    ]


def test_html_is_self_contained_and_escapes_everything() -> None:
    page = export_html(conversation(), META)
    assert page.startswith("<!DOCTYPE html>")
    assert "<style>" in page
    # Nothing loaded from elsewhere.
    assert not re.search(r"<(script|link|iframe)\b", page, re.IGNORECASE)
    assert not re.search(r'src="(?!data:)', page)
    # Message text is escaped, never interpreted.
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; the" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<title>Fix &lt;the&gt; parser &amp; more</title>" in page
    assert "The &lt;b&gt;parser&lt;/b&gt; drops torn lines." in page
    assert "overloaded &lt;503&gt;" in page
    assert "1 failed &lt;E&gt; in 0.1s" in page
    # Assistant Markdown is rendered.
    assert "<strong>edit</strong>" in page
    assert "<table>" in page and "<td>1</td>" in page


def test_html_shows_thinking_tool_calls_results_and_diffs() -> None:
    page = export_html(conversation(), META)
    assert '<details class="thinking"><summary>Thinking</summary>' in page
    assert '<span class="tool-name">edit</span> <code>app.py</code>' in page
    assert '<span class="tool-name">bash</span> <code>pytest -q &lt;/dev/null</code>' in page
    assert '<span class="del">-x = 1</span>' in page
    assert '<span class="add">+x = 10</span>' in page
    assert '<span class="hunk">@@ -1,2 +1,1 @@</span>' in page
    assert '<div class="tool error">' in page and '<div class="tool ok">' in page
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in page
    assert "Result of read" in page and "orphan result" in page
    # The edit's diff is shown once, as a diff: the summary text stands alone.
    assert page.count("-x = 1") == 1
    assert "<dt>Session</dt><dd>abc123</dd>" in page


def test_markdown_shape() -> None:
    text = export_markdown(conversation(), META)
    assert text.startswith("# Fix <the> parser & more\n\n- **Session:** `abc123`\n")
    assert "- **Exported:** 2025-01-02 10:11 UTC" in text
    headings = re.findall(r"^## .*$", text, re.MULTILINE)
    assert headings == [
        "## User",
        "## Assistant (faux/faux-1)",
        "## User",
        "## Assistant (faux/faux-1)",
        "## Assistant (faux/faux-1)",
    ]
    assert "<details>\n<summary>Thinking</summary>\n\nThe <b>parser</b> drops torn lines." in text
    assert "**Tool call:** `edit` — `app.py`" in text
    assert "```diff\n" + DIFF + "\n```" in text
    assert "**Result** (error):\n\n```text\n1 failed <E> in 0.1s" in text
    assert "*[image: image/png]*" in text
    assert "**Error:** overloaded <503>" in text
    assert "**Result of `read`**:" in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_markdown_fences_outgrow_backticks_in_the_content() -> None:
    messages: list[Message] = [
        assistant(ToolCall("c", "bash", {"command": "echo hi"}), stop="toolUse"),
        ToolResultMessage("c", "bash", [TextContent("has ``` inside\nand ```` too")]),
    ]
    text = export_markdown(messages, META)
    assert "`````text\nhas ``` inside\nand ```` too\n`````" in text


@dataclass
class FakeSession:
    cwd: Path
    session_id: str | None = "0123abcd"
    session_name: str | None = None
    model: Model = field(
        default_factory=lambda: Model(id="faux-1", name="Faux", api="faux", provider="faux")
    )
    messages: list[Message] = field(default_factory=conversation)

    def display_messages(self) -> list[Message]:
        return self.messages


def test_export_session_writes_both_files_in_the_cwd(tmp_path: Path) -> None:
    session = FakeSession(tmp_path)
    html_path, md_path = export_session(session, now=1_735_812_660)
    assert html_path == tmp_path / "picode-session-0123abcd.html"
    assert md_path == tmp_path / "picode-session-0123abcd.md"
    page = html_path.read_text(encoding="utf-8")
    markdown = md_path.read_text(encoding="utf-8")
    # No name: the first message is the title.
    assert "<h1>Please fix &lt;script&gt;" in page
    assert "<dd>2025-01-02 10:11 UTC</dd>" in page
    assert "<dd>faux/faux-1</dd>" in page
    assert markdown.startswith("# Please fix <script>")


def test_export_paths_for_names_folders_and_relative_paths(tmp_path: Path) -> None:
    session = FakeSession(tmp_path, session_name="Named")
    out = tmp_path / "out"
    out.mkdir()
    assert export_paths(session, Path("notes.md")) == (
        tmp_path / "notes.html",
        tmp_path / "notes.md",
    )
    assert export_paths(session, out) == (
        out / "picode-session-0123abcd.html",
        out / "picode-session-0123abcd.md",
    )
    assert export_paths(session, out / "report") == (out / "report.html", out / "report.md")
    html_path, _ = export_session(session, Path("out/x.html"))
    assert html_path == out / "x.html" and "<h1>Named</h1>" in html_path.read_text("utf-8")


def test_export_to_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"Cannot export to .*missing: the folder does not exist"):
        export_session(FakeSession(tmp_path), tmp_path / "missing" / "x.html")


def test_exports_are_private_and_carry_no_key_or_token(tmp_path: Path) -> None:
    import os
    import stat

    from picode.ai.types import UserMessage
    from picode.session.safety.secrets import remember_secret

    remember_secret("plain-local-token-93f1")  # shaped like no known key format
    existing = tmp_path / "picode-session-0123abcd.md"
    existing.write_text("old", encoding="utf-8")
    os.chmod(existing, 0o644)
    leaky = [
        UserMessage("my token is plain-local-token-93f1 and sk-ant-api03-" + "a" * 40),
        UserMessage("and ghp_" + "R4t5Y6u7" * 4 + "iOpA, AKIAIOSFODNN7EXAMPLE"),
        *conversation(),
    ]
    html_path, md_path = export_session(FakeSession(tmp_path, messages=leaky))
    for path in (html_path, md_path):
        text = path.read_text(encoding="utf-8")
        assert "plain-local-token-93f1" not in text
        assert "sk-ant-api03-aaaa" not in text
        assert "ghp_R4t5" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
        assert "[redacted]" in text
        if os.name == "posix":
            assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_exports_spell_out_arguments_and_carry_no_escape_sequence() -> None:
    spoof = "echo HIDDEN > x\r\x1b[2K\x1b[1Als -la\u202e\x9b2J"
    messages: list[Message] = [
        UserMessage("go"),
        assistant(
            TextContent("reply \x1b]52;c;aGVsbG8=\x07 \x1b]0;pwned\x07"),
            ToolCall("c1", "bash", {"command": spoof}),
        ),
        ToolResultMessage("c1", "bash", [TextContent("out \x1b[2J\x9b2J")], None, False),
    ]
    for export in (export_markdown, export_html):
        text = export(messages, META)
        assert not any(char in text for char in "\x1b\x9b\x07\r\u202e")
        # As approved: the carriage return, the escapes and the override spelled out.
        assert "x\\r␛[2K␛[1Als -laU+202E\\x9b2J" in text


def test_an_attached_file_is_shown_as_attached_and_the_title_is_what_was_typed(
    tmp_path: Path,
) -> None:
    from picode.agent.file_blocks import mode_note
    from picode.tools.attachments import attach_mentions

    (tmp_path / "notes.txt").write_text("first line\nsecond line\n")
    typed = "summarise @notes.txt please"
    found = attach_mentions(typed, tmp_path)
    message = UserMessage([TextContent(typed), *found.blocks, mode_note("Plan mode is on.")])
    messages: list[Message] = [message, assistant(TextContent("Done."), stop="stop")]

    assert default_title(messages, None) == typed
    markdown = export_markdown(messages, META)
    assert f"## User\n\n{typed}\n\n*attached: notes.txt (2 lines)*\n\n" in markdown
    assert "```text\nfirst line\nsecond line\n```" in markdown
    page = export_html(messages, META)
    assert '<div class="muted">attached: notes.txt (2 lines)</div>' in page
    assert "<pre>first line\nsecond line</pre>" in page
    for text in (markdown, page):
        # The block's markup and picode's note to the model are not part of the message.
        assert "file path=" not in text and "picode-note" not in text
        assert "Plan mode is on." not in text
