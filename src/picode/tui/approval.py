"""The inline approval prompt for bash / write / edit calls (approval mode, docs/security.md).

y yes · a always (this session; for a command, those that start like it) · p the same,
saved for this folder (commands only) · n no, then a reason and Enter · Esc no, and stop
the turn.
Keys arriving before the prompt has been on screen for ``ARM_DELAY_S`` are ignored: they
were typed for the editor before the prompt appeared, not as an answer to it.

A command is shown whole, as the session spelled it out (``picode.ai.untrusted``): every
line, long lines wrapped rather than cut, spelled-out characters highlighted. A long one
scrolls inside the prompt (↑ ↓ PgUp PgDn Home End, or the wheel); the choices below it
stay on screen.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Literal

from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from picode.ai.untrusted import one_line
from picode.session.mcp import tool_display_name
from picode.session.safety import ApprovalDecision, ApprovalRequest
from picode.tui.armed_prompt import ARM_DELAY_S, ArmedPrompt, consume, shown

__all__ = ["ARM_DELAY_S", "ApprovalPrompt", "ask_approval"]

#: Lines of a write or edit preview (a command is always shown whole).
PREVIEW_LINES = 20
_LINE_CHARS = 2000
_MORE_LINES = re.compile(r"^… (\d+) more lines$")
#: What ``picode.ai.untrusted.visible`` writes for a character it spells out.
_SPELLED = re.compile(r"␛|↵|\\(?:r|0|x[0-9a-f]{2})|U\+[0-9A-F]{4,5}")
_SPELLED_STYLE = "reverse $warning"

_KEYS: tuple[tuple[str, str], ...] = (
    ("y", "yes"),
    ("a", "always (this session)"),
    ("n", "no (then type a reason, Enter)"),
    ("esc", "no, and stop"),
)
#: Leaving the sandbox: "always" means "and allow network for this session".
_ESCALATION_KEYS: tuple[tuple[str, str], ...] = (
    ("y", "yes, once"),
    ("a", "yes, and allow network for this session"),
    ("n", "no (then type a reason, Enter)"),
    ("esc", "no, and stop"),
)


def render_preview(request: ApprovalRequest, max_lines: int = PREVIEW_LINES) -> Content:
    """The command, or the change with added and removed lines coloured."""
    body, note = preview_parts(request, max_lines)
    return Content("\n").join([body, note]) if note is not None else body


def preview_parts(
    request: ApprovalRequest, max_lines: int = PREVIEW_LINES
) -> tuple[Content, Content | None]:
    """The preview, and the note of the lines it leaves out (None when it shows all)."""
    lines = request.preview.splitlines() or [""]
    already_hidden = 0
    if request.tool_name != "bash" and (more := _MORE_LINES.match(lines[-1])):
        # The session shortened a long write already: count its hidden lines too.
        already_hidden = int(more.group(1))
        lines.pop()
    if request.tool_name == "bash":
        # Whole: what is approved is what runs, so no line is left out or cut.
        body = [Content.assemble(("$ ", "$text-muted"), _marked(lines[0], "bold"))]
        body += [Content.assemble("  ", _marked(line, "bold")) for line in lines[1:]]
        max_lines = len(lines)
    else:
        body = [
            _preview_line(line, first=index == 0) for index, line in enumerate(lines[:max_lines])
        ]
    hidden = len(lines) - min(len(lines), max_lines) + already_hidden
    note = Content.styled(f"… {hidden} more lines", "$text-muted italic") if hidden > 0 else None
    return Content("\n").join(body), note


def _preview_line(line: str, *, first: bool) -> Content:
    line = _clip(line)
    if first:
        return _marked(line, "bold")
    if line.startswith("+"):
        return _marked(line, "$diff-added on $diff-added-background")
    if line.startswith("-"):
        return _marked(line, "$diff-removed on $diff-removed-background")
    if line.startswith(("@@", "edit ", "write ")):
        return _marked(line, "$diff-hunk")
    if line.startswith("…"):
        return Content.styled(line, "$text-muted italic")
    return _marked(line, "$diff-context")


def _marked(line: str, style: str) -> Content:
    """``line`` in ``style``, with each spelled-out character standing out."""
    content = Content.styled(line, style)
    for match in _SPELLED.finditer(line):
        content = content.stylize(_SPELLED_STYLE, match.start(), match.end())
    return content


def _clip(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"


def title_for(request: ApprovalRequest) -> str:
    return f"{request.asker}: {_question(request)}" if request.asker else _question(request)


def _question(request: ApprovalRequest) -> str:
    if request.escalation is not None:
        return f"The sandbox blocked {request.escalation}. Run this command outside it?"
    verb = {"bash": "Run this command", "write": "Write this file", "edit": "Make this edit"}
    # An MCP tool's name comes from its server: spelled out like its arguments.
    name = one_line(tool_display_name(request.tool_name) or request.tool_name)
    title = f"{verb.get(request.tool_name, f'Run {name}')}?"
    if request.protected:
        # Asked in every approval mode: say why this one is asked about.
        title += f"  It changes {request.protected}."
    elif request.asked_by:
        # The rule quoted may be a project's words: one line, spelled out.
        title += f"  {one_line(request.asked_by, 120)} asks each time."
    return title


class ApprovalPrompt(ArmedPrompt[ApprovalDecision]):
    """Mount it, focus it, ``await prompt.ask()``; or use ``ask_approval``.

    Posts ``Answered`` when decided; ``aborted`` is True after Esc (the app should then
    abort the turn as well as deny the call).
    """

    DEFAULT_CSS = """
    ApprovalPrompt {
        height: auto;
        border: round $warning;
        padding: 0 1;
        background: $surface;
    }
    ApprovalPrompt #approval-title {
        color: $warning;
        text-style: bold;
    }
    ApprovalPrompt #approval-scroll {
        height: auto;
        max-height: 50vh;
        margin: 0 0 1 0;
        scrollbar-size-vertical: 1;
    }
    ApprovalPrompt #approval-preview {
        text-wrap: wrap;
    }
    ApprovalPrompt #approval-reason {
        display: none;
        height: 1;
        border: none;
        padding: 0;
        background: $surface;
    }
    ApprovalPrompt.-reason #approval-reason {
        display: block;
    }
    ApprovalPrompt.-reason #approval-keys {
        display: none;
    }
    """

    class Answered(Message):
        def __init__(self, prompt: ApprovalPrompt, decision: ApprovalDecision) -> None:
            super().__init__()
            self.prompt = prompt
            self.decision = decision
            self.aborted = prompt.aborted

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay: float = ARM_DELAY_S,
        max_preview_lines: int = PREVIEW_LINES,
        id: str | None = None,
    ) -> None:
        self.request = request
        super().__init__(
            clock=clock,
            arm_delay=arm_delay,
            id=id,
            keys_id="approval-keys",
            scroll_id="approval-scroll",
        )
        self.max_preview_lines = max_preview_lines
        self.mode: Literal["choose", "reason"] = "choose"
        self.ignored_keys = 0
        self.reason_input = Input(placeholder="Why not? (Enter to send)", id="approval-reason")

    def key_meanings(self) -> tuple[tuple[str, str], ...]:
        if self.request.escalation is not None:
            return _ESCALATION_KEYS
        if self.request.asked_by is not None:
            return (_KEYS[0], *_KEYS[2:])  # asked each time: no "always"
        if self.request.always_means is None:
            return _KEYS
        # The model's words (a command's first ones): spelled out, one line.
        always = f"always for {one_line(self.request.always_means, 60)} (this session)"
        saved = (("p", "the same, saved for this folder"),) if self.request.can_save else ()
        return (_KEYS[0], ("a", always), *saved, *_KEYS[2:])

    def compose(self) -> ComposeResult:
        yield Static(Content(title_for(self.request)), id="approval-title")
        body, note = preview_parts(self.request, self.max_preview_lines)
        yield VerticalScroll(
            Static(body, id="approval-preview"), id="approval-scroll", can_focus=False
        )
        if note is not None:
            # Outside the scrolled part: always in sight, like the choices.
            yield Static(note, id="approval-more")
        yield self.keys_line
        yield self.reason_input

    # --- answering -----------------------------------------------------------------------

    def answer(
        self, kind: Literal["yes", "always", "project", "no"], reason: str | None = None
    ) -> None:
        decision = ApprovalDecision(kind, reason)
        if self.settle(decision):
            self.post_message(self.Answered(self, decision))

    def cancel(self, reason: str | None = None) -> None:
        """Deny without asking (the turn was aborted elsewhere, the app is closing)."""
        self.answer("no", reason)

    def stop(self) -> None:
        """Esc, wherever it was pressed: deny, and mark the turn to be stopped (armed or not:
        an Esc typed early was meant to interrupt anyway)."""
        if self.decision is None:
            self._abort()

    def on_key(self, event: events.Key) -> None:
        if self.decision is not None:
            return
        key = event.key
        if self.mode == "reason":
            if key == "escape":
                consume(event)
                self._abort()
            return
        if self.scrolled(event) or key not in ("y", "a", "p", "n", "escape"):
            return
        if (key == "p" and not self.request.can_save) or (
            key == "a" and self.request.asked_by is not None
        ):
            return
        consume(event)
        if not self.is_armed:
            self.ignored_keys += 1
            return
        if key == "y":
            self.answer("yes")
        elif key == "a":
            self.answer("always")
        elif key == "p":
            self.answer("project")
        elif key == "n":
            self.mode = "reason"
            self.add_class("-reason")
            self.reason_input.focus()
        else:
            self._abort()

    def _abort(self) -> None:
        self.aborted = True
        reason = self.reason_input.value.strip() if self.mode == "reason" else ""
        self.answer("no", reason or None)

    @on(Input.Submitted, "#approval-reason")
    def _reason_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.answer("no", event.value.strip() or None)


async def ask_approval(
    parent: Widget,
    request: ApprovalRequest,
    *,
    before: Widget | None = None,
    clock: Callable[[], float] = time.monotonic,
    arm_delay: float = ARM_DELAY_S,
    on_prompt: Callable[[ApprovalPrompt], None] | None = None,
) -> ApprovalDecision:
    """Mount a prompt in ``parent`` (before ``before`` if given), focus it, wait for the
    answer, then remove it and give focus back to whatever had it.

    ``on_prompt`` sees the prompt once it is mounted (to answer it from elsewhere, e.g. Esc
    handled by the app; ``prompt.aborted`` tells afterwards whether Esc was pressed).
    """
    prompt = ApprovalPrompt(request, clock=clock, arm_delay=arm_delay)
    async with shown(parent, prompt, before=before, closed="The prompt was closed."):
        if on_prompt is not None:
            on_prompt(prompt)
        return await prompt.ask()
