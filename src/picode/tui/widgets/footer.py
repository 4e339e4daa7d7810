"""The footer: where you are and what it costs (cwd, branch, tokens, cost, context, model)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.config import TuiConfig


@dataclass(slots=True, frozen=True)
class FooterInfo:
    cwd: str
    branch: str | None = None
    session_name: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    context_window: int = 0
    model: str = ""
    thinking: str = "off"
    reasoning: bool = False
    #: Set once a write to the session file failed: shown until another session opens.
    save_error: str | None = None


def footer_info(
    cwd: str, branch: str | None, session: AgentSession | None, config: TuiConfig
) -> FooterInfo:
    """What the footer shows: the configured model until the session is open."""
    if session is None:
        model = config.model
        return FooterInfo(
            cwd=cwd,
            branch=branch,
            context_window=model.context_window,
            model=model.id,
            thinking=config.thinking,
            reasoning=model.reasoning,
        )
    usage = session.usage
    model = session.model
    return FooterInfo(
        cwd=cwd,
        branch=branch,
        session_name=session.session_name,
        input_tokens=usage.input,
        output_tokens=usage.output,
        cache_read=usage.cache_read,
        cost=usage.cost,
        context_tokens=session.context_tokens,
        context_window=session.context_window,
        model=model.id,
        thinking=session.thinking,
        reasoning=model.reasoning,
        save_error=session.save_error,
    )


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def format_cost(cost: float) -> str:
    return f"${cost:.3f}" if cost < 10 else f"${cost:.2f}"


def display_path(path: Path, home: Path | None = None) -> str:
    home = home if home is not None else Path.home()
    try:
        relative = path.relative_to(home)
    except ValueError:
        return str(path)
    return "~" if str(relative) == "." else f"~{os.sep}{relative}"


def git_branch(cwd: Path) -> str | None:
    """The current branch from ``.git/HEAD`` (worktrees too), without spawning git."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():
                pointer = dot_git.read_text(encoding="utf-8").strip()
                if not pointer.startswith("gitdir:"):
                    return None
                git_dir = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
            elif dot_git.is_dir():
                git_dir = dot_git
            else:
                continue
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if head.startswith("ref:"):
            return head.removeprefix("ref:").strip().removeprefix("refs/heads/")
        return head[:7] or None
    return None


SAVE_WARNING = "⚠ session NOT SAVED (disk?) · "


class InfoFooter(Widget):
    DEFAULT_CSS = """
    InfoFooter {
        height: 1;
        padding: 0 1;
        color: $muted;
        background: $background;
    }
    """

    def __init__(self, info: FooterInfo) -> None:
        super().__init__(id="footer")
        self.info = info

    def update_info(self, **changes: object) -> None:
        info = replace(self.info, **changes)  # type: ignore[arg-type]
        if info != self.info:
            self.info = info
            self.refresh()

    def right_text(self) -> Content:
        info = self.info
        parts: list[tuple[str, str] | str] = [
            f"↑{format_tokens(info.input_tokens)} ↓{format_tokens(info.output_tokens)}"
        ]
        if info.cache_read:
            parts.append(f"  R{format_tokens(info.cache_read)}")
        parts.append(f"  {format_cost(info.cost)}")
        if info.context_window:
            percent = 100 * info.context_tokens / info.context_window
            style = "$warning" if percent >= 80 else ""
            parts += ["  ", (f"{percent:.0f}%", style), f" of {format_tokens(info.context_window)}"]
        parts += ["  ", (info.model, "$foreground")]
        if info.reasoning:
            parts += [" • ", (f"thinking {info.thinking}", "$secondary")]
        return Content.assemble(*parts)

    def render(self) -> Content:
        info = self.info
        right = self.right_text()
        left_text = info.cwd + (f" ({info.branch})" if info.branch else "")
        if info.session_name:
            left_text += f" • {info.session_name}"
        width = self.content_size.width
        room = width - right.cell_length - 2
        if room <= 1:
            return right
        warning = Content.styled(SAVE_WARNING, "bold $error") if info.save_error else Content("")
        room -= warning.cell_length
        if room <= 1:
            return Content.assemble(warning, " ", right)
        left = Content(left_text)
        if left.cell_length > room:
            # Keep the end of the path: the folder you are in matters most.
            left = Content("…" + _right_cells(left_text, room - 1))
        left = Content.assemble(warning, left)
        gap = " " * (width - left.cell_length - right.cell_length)
        return Content.assemble(left, gap, right)


def _right_cells(text: str, cells: int) -> str:
    """The longest end of ``text`` that fits in ``cells`` terminal cells."""
    taken = 0
    for index in range(len(text) - 1, -1, -1):
        taken += cell_len(text[index])
        if taken > cells:
            return text[index + 1 :]
    return text
