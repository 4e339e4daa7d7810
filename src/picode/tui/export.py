"""``/export``: the session as a self-contained HTML page and as Markdown, side by side.

The HTML has its CSS inline and no external assets (images are embedded as data URLs),
so it can be mailed or archived as one file. Everything taken from the session is escaped;
assistant Markdown is rendered with raw HTML disabled.
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

from markdown_it import MarkdownIt

from picode.agent.file_blocks import is_note, read_file_block
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
from picode.ai.untrusted import safe, visible
from picode.session.store import redact_secrets, typed_text
from picode.tui.diff_lines import diff_in, diff_line_kind
from picode.tui.widgets.tool_render import key_argument

_TITLE_CHARS = 80
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

PAGE_CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #6e7781;
  --user: #eef2f7; --panel: #f6f8fa; --border: #d0d7de; --add: #1a7f37; --add-bg: #e6ffec;
  --del: #cf222e; --del-bg: #ffebe9; --hunk: #0969da; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #d8dee9; --bg: #121417; --muted: #8b949e;
  --user: #262b33; --panel: #1a1e24; --border: #30363d; --add: #98c379; --add-bg: #1d3123;
  --del: #e06c75; --del-bg: #3a1f24; --hunk: #56b6c2; --warn: #e5c07b; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 64px; }
h1 { font-size: 1.4em; margin: 0 0 8px; overflow-wrap: anywhere; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 24px;
  color: var(--muted); font-size: 0.9em; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.message { margin: 0 0 18px; padding: 10px 14px; border-radius: 8px; }
.message.user { background: var(--user); }
.message.assistant, .message.tool-only { border-left: 3px solid var(--border); }
.role { font-weight: 600; font-size: 0.85em; margin-bottom: 6px; }
.muted { color: var(--muted); font-weight: normal; }
.plain { white-space: pre-wrap; overflow-wrap: anywhere; }
pre, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--panel); border: 1px solid var(--border); border-radius: 6px;
  padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.markdown :first-child { margin-top: 0; } .markdown table { border-collapse: collapse; }
.markdown th, .markdown td { border: 1px solid var(--border); padding: 4px 8px; }
details.thinking { color: var(--muted); margin: 6px 0; }
details.thinking summary, .tool details summary { cursor: pointer; font-size: 0.85em; }
.tool { border: 1px solid var(--border); border-radius: 6px; padding: 6px 10px; margin: 8px 0; }
.tool.ok { border-left: 3px solid var(--add); } .tool.error { border-left: 3px solid var(--del); }
.tool.pending { border-left: 3px solid var(--warn); }
.tool-name { font-weight: 600; }
.tool-result .label { font-size: 0.85em; color: var(--muted); margin-top: 6px; }
.tool-result.error pre { border-color: var(--del); }
.diff .add { color: var(--add); background: var(--add-bg); display: inline-block; width: 100%; }
.diff .del { color: var(--del); background: var(--del-bg); display: inline-block; width: 100%; }
.diff .hunk { color: var(--hunk); } .diff .file { font-weight: 600; }
.error { color: var(--del); font-weight: 600; }
img { max-width: 100%; border-radius: 4px; }
"""


class ExportError(OSError):
    """The export could not be written; the message names the file and the reason."""


@dataclass(slots=True, frozen=True)
class ExportMeta:
    title: str
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    exported_at: str = ""
    """Already formatted (``2025-01-02 10:11 UTC``); pinned by tests."""


class ExportableSession(Protocol):
    """What ``export_session`` reads (``AgentSession`` provides all of it)."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def session_name(self) -> str | None: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def model(self) -> Model: ...

    def display_messages(self) -> list[Message]: ...


# --- shared helpers --------------------------------------------------------------------


def _results_by_call(messages: Sequence[Message]) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}


def _result_text(result: ToolResultMessage) -> str:
    """The result's text; for an edit with a diff, only the summary before it."""
    text = result.text
    if diff_in(result.details) is not None:
        return text.split("\n\n", 1)[0]
    return text


def _args_json(call: ToolCall) -> str:
    # Spelled out, as approved: json.dumps leaves DEL, C1 controls and bidi characters raw.
    return visible(json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str))


def default_title(messages: Sequence[Message], name: str | None) -> str:
    if name:
        return name
    for message in messages:
        if isinstance(message, UserMessage):
            # As typed: not the contents of the files it attached.
            text = " ".join(typed_text(message).split())
            if text:
                return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"
    return "picode session"


# --- Markdown ---------------------------------------------------------------------------


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{marks}{info}\n{body}{marks}"


def _md_code(text: str) -> str:
    """Inline code that survives backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{marks}{pad}{text}{pad}{marks}"


def export_markdown(messages: Sequence[Message], meta: ExportMeta) -> str:
    results = _results_by_call(messages)
    attached: set[str] = set()
    out: list[str] = [f"# {meta.title}", ""]
    for label, value in (
        ("Session", meta.session_id),
        ("Folder", meta.cwd),
        ("Model", meta.model),
        ("Exported", meta.exported_at),
    ):
        if value:
            out.append(f"- **{label}:** {_md_code(value) if label != 'Exported' else value}")
    out += ["", "---", ""]
    for message in messages:
        if isinstance(message, UserMessage):
            out += ["## User", "", *_md_user(message), ""]
        elif isinstance(message, AssistantMessage):
            out += [f"## Assistant ({message.provider}/{message.model})", ""]
            out += _md_assistant(message, results, attached)
        elif message.tool_call_id not in attached:
            out += _md_result(message, message.tool_name)
    # A Markdown file is read with cat too: no escape sequence of the model's or a tool's.
    return safe("\n".join(out).rstrip("\n") + "\n")


def _md_user(message: UserMessage) -> list[str]:
    if isinstance(message.content, str):
        return [message.content]
    lines: list[str] = []
    for block in message.content:
        if isinstance(block, ImageContent):
            part = [f"*[image: {block.mime_type}]*"]
        elif is_note(block.text):
            continue
        elif (file := read_file_block(block.text)) is not None:
            attached, body = file
            part = [f"*{attached.describe()}*", *(["", _fence(body, "text")] if body else [])]
        else:
            part = [block.text]
        if lines:
            lines.append("")
        lines += part
    return lines


def _md_assistant(
    message: AssistantMessage, results: dict[str, ToolResultMessage], attached: set[str]
) -> list[str]:
    out: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            text = "*(redacted thinking)*" if block.redacted else block.thinking.strip()
            if text:
                out += ["<details>", "<summary>Thinking</summary>", "", text, "", "</details>", ""]
        elif isinstance(block, TextContent):
            if block.text.strip():
                out += [block.text.strip(), ""]
        else:
            argument = key_argument(block.name, block.arguments)
            head = f"**Tool call:** {_md_code(block.name)}"
            out += [head + (f" — {_md_code(argument)}" if argument else ""), ""]
            out += [_fence(_args_json(block), "json"), ""]
            result = results.get(block.id)
            if result is not None:
                attached.add(block.id)
                out += _md_result(result, None)
    if message.stop_reason == "error":
        out += [f"**Error:** {message.error_message or 'the request failed'}", ""]
    elif message.stop_reason == "aborted":
        out += ["*(interrupted)*", ""]
    return out


def _md_result(result: ToolResultMessage, standalone_name: str | None) -> list[str]:
    title = (
        "**Result**" if standalone_name is None else f"**Result of {_md_code(standalone_name)}**"
    )
    title += " (error):" if result.is_error else ":"
    out = [title, ""]
    text = _result_text(result)
    if text.strip():
        out += [_fence(text, "text"), ""]
    diff = diff_in(result.details)
    if diff is not None:
        out += [_fence(diff, "diff"), ""]
    for block in result.content:
        if isinstance(block, ImageContent):
            out += [f"*[image: {block.mime_type}]*", ""]
    return out


# --- HTML -------------------------------------------------------------------------------


@cache
def _markdown() -> MarkdownIt:
    # Raw HTML off: anything HTML-looking in a message is shown, never interpreted.
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _render_markdown(text: str) -> str:
    return str(_markdown().render(text))


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def export_html(messages: Sequence[Message], meta: ExportMeta) -> str:
    results = _results_by_call(messages)
    attached: set[str] = set()
    body: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            body.append(_html_user(message))
        elif isinstance(message, AssistantMessage):
            body.append(_html_assistant(message, results, attached))
        elif message.tool_call_id not in attached:
            body.append(
                f'<section class="message tool-only">{_html_result(message, message.tool_name)}'
                "</section>"
            )
    facts = "".join(
        f"<dt>{label}</dt><dd>{_e(value)}</dd>"
        for label, value in (
            ("Session", meta.session_id),
            ("Folder", meta.cwd),
            ("Model", meta.model),
            ("Exported", meta.exported_at),
        )
        if value
    )
    return safe(
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(meta.title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n<main>\n"
        f'<header><h1>{_e(meta.title)}</h1><dl class="meta">{facts}</dl></header>\n'
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def _html_user(message: UserMessage) -> str:
    parts: list[str] = []
    blocks = [TextContent(message.content)] if isinstance(message.content, str) else message.content
    for block in blocks:
        if isinstance(block, ImageContent):
            parts.append(_html_image(block))
        elif is_note(block.text):
            continue
        elif (file := read_file_block(block.text)) is not None:
            attached, body = file
            parts.append(f'<div class="muted">{_e(attached.describe())}</div>')
            if body:
                parts.append(f"<pre>{_e(body)}</pre>")
        else:
            parts.append(f'<div class="plain">{_e(block.text)}</div>')
    return (
        '<section class="message user"><div class="role">User</div>' + "".join(parts) + "</section>"
    )


def _html_assistant(
    message: AssistantMessage, results: dict[str, ToolResultMessage], attached: set[str]
) -> str:
    parts = [
        '<section class="message assistant"><div class="role">Assistant '
        f'<span class="muted">{_e(message.provider)}/{_e(message.model)}</span></div>'
    ]
    for block in message.content:
        if isinstance(block, ThinkingContent):
            text = "(redacted thinking)" if block.redacted else block.thinking.strip()
            if text:
                parts.append(
                    '<details class="thinking"><summary>Thinking</summary>'
                    f'<div class="plain">{_e(text)}</div></details>'
                )
        elif isinstance(block, TextContent):
            if block.text.strip():
                parts.append(f'<div class="markdown">{_render_markdown(block.text)}</div>')
        else:
            parts.append(_html_tool_call(block, results.get(block.id), attached))
    if message.stop_reason == "error":
        error = message.error_message or "the request failed"
        parts.append(f'<div class="error">Error: {_e(error)}</div>')
    elif message.stop_reason == "aborted":
        parts.append('<div class="muted">(interrupted)</div>')
    parts.append("</section>")
    return "".join(parts)


def _html_tool_call(call: ToolCall, result: ToolResultMessage | None, attached: set[str]) -> str:
    argument = key_argument(call.name, call.arguments)
    state = "pending" if result is None else ("error" if result.is_error else "ok")
    head = f'<span class="tool-name">{_e(call.name)}</span>'
    if argument:
        head += f" <code>{_e(argument)}</code>"
    parts = [
        f'<div class="tool {state}"><div class="tool-head">{head}</div>',
        f"<details><summary>Arguments</summary><pre>{_e(_args_json(call))}</pre></details>",
    ]
    if result is not None:
        attached.add(call.id)
        parts.append(_html_result(result, None))
    parts.append("</div>")
    return "".join(parts)


def _html_result(result: ToolResultMessage, standalone_name: str | None) -> str:
    label = "Result" if standalone_name is None else f"Result of {_e(standalone_name)}"
    classes = "tool-result error" if result.is_error else "tool-result"
    parts = [f'<div class="{classes}"><div class="label">{label}</div>']
    text = _result_text(result)
    if text.strip():
        parts.append(f"<pre>{_e(text)}</pre>")
    diff = diff_in(result.details)
    if diff is not None:
        parts.append(f'<pre class="diff">{_html_diff(diff)}</pre>')
    parts += [_html_image(b) for b in result.content if isinstance(b, ImageContent)]
    parts.append("</div>")
    return "".join(parts)


def _html_diff(diff: str) -> str:
    lines: list[str] = []
    for line in diff.splitlines():
        # The kinds are the stylesheet's class names.
        lines.append(f'<span class="{diff_line_kind(line)}">{_e(line)}</span>')
    return "\n".join(lines)


def _html_image(block: ImageContent) -> str:
    if block.mime_type not in _IMAGE_TYPES or not re.fullmatch(
        r"[A-Za-z0-9+/=\s]*", block.data_base64
    ):
        return f'<div class="muted">[image: {_e(block.mime_type)}]</div>'
    data = "".join(block.data_base64.split())
    return f'<img alt="image" src="data:{block.mime_type};base64,{data}">'


# --- writing ------------------------------------------------------------------------------


def meta_for(
    session: ExportableSession, messages: Sequence[Message], now: float | None = None
) -> ExportMeta:
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(time.time() if now is None else now))
    return ExportMeta(
        title=default_title(messages, session.session_name),
        session_id=session.session_id,
        cwd=str(session.cwd),
        model=session.model.ref,
        exported_at=stamp,
    )


def export_paths(session: ExportableSession, path: Path | None) -> tuple[Path, Path]:
    """Where ``export_session`` writes: (html, markdown)."""
    stem = f"picode-session-{session.session_id or time.strftime('%Y%m%dT%H%M%S')}"
    if path is None:
        base = session.cwd / stem
    else:
        path = path.expanduser()
        if not path.is_absolute():
            path = session.cwd / path
        if path.is_dir():
            base = path / stem
        elif path.suffix.lower() in (".html", ".htm", ".md", ".markdown"):
            base = path.with_suffix("")
        else:
            base = path
    return base.with_name(base.name + ".html"), base.with_name(base.name + ".md")


def write_private(target: Path, content: str) -> None:
    """An export holds the whole conversation: readable by the user alone (0600)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        if os.name == "posix":
            os.fchmod(handle.fileno(), 0o600)  # an existing file keeps its mode otherwise
        handle.write(content)


def export_session(
    session: ExportableSession, path: Path | None = None, *, now: float | None = None
) -> tuple[Path, Path]:
    """Write the session as HTML and Markdown next to each other; returns (html, markdown).

    ``path``: None → ``<cwd>/picode-session-<id>.html|.md``; a folder → that folder; a file
    name (with or without ``.html`` / ``.md``) → that name with both suffixes. Relative
    paths are taken from the session's cwd. Raises ExportError.
    """
    html_path, md_path = export_paths(session, path)
    messages = session.display_messages()
    meta = meta_for(session, messages, now)
    folder = html_path.parent
    if not folder.is_dir():
        raise ExportError(f"Cannot export to {folder}: the folder does not exist.")
    for target, content in (
        (html_path, export_html(messages, meta)),
        (md_path, export_markdown(messages, meta)),
    ):
        try:
            write_private(target, redact_secrets(content)[0])
        except OSError as exc:
            raise ExportError(f"Cannot write {target}: {exc.strerror or exc}") from None
    return html_path, md_path
