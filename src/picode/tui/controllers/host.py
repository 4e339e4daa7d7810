"""What controllers need from the app, as Protocols: each controller takes the app as one
such host (here when several share it, else beside the controller: ``QuitHost``,
``RouterHost``...), never ``PicodeApp`` itself and never callables standing in for its
members. So the controllers and the app import no circle, and a controller can be driven
by a ``Fake*`` host that offers the same few members."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.theme import Theme
    from textual.widget import AwaitMount, Widget

    from picode.session.agent_session import AgentSession
    from picode.tui.completion.commands import CommandRegistry
    from picode.tui.config import TuiConfig
    from picode.tui.controllers.trust import TrustController
    from picode.tui.widgets.editor import PromptEditor
    from picode.tui.widgets.notice import NoticeLevel
    from picode.tui.widgets.transcript import Transcript

T = TypeVar("T")


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class Reporter(Protocol):
        """A voice in the transcript, and a way to give typed text back to the editor."""

        def report(self, text: str, level: NoticeLevel = "info") -> None: ...

        def restore_text(self, text: str) -> None: ...

    class CommandHost(Reporter, Protocol):
        """What slash commands act on."""

        config: TuiConfig
        session: AgentSession | None
        clipboard_env: Mapping[str, str] | None
        theme: str

        @property
        def start_failed(self) -> bool: ...

        @property
        def transcript(self) -> Transcript: ...

        @property
        def trust_controller(self) -> TrustController: ...

        @property
        def available_themes(self) -> dict[str, Theme]: ...

        def theme_names(self) -> list[str]: ...

        def hotkey_lines(self) -> list[str]: ...

        def copy_to_clipboard(self, text: str) -> None: ...

        def start_session(self, spec: str | None, pick: bool) -> None: ...

        def hold_until_open(self, text: str) -> None: ...

        async def shutdown(self) -> None: ...

        def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...

        async def push_screen_wait(self, screen: Screen[T]) -> T: ...

    class CommandSource(Protocol):
        def current(self) -> CommandRegistry:
            """The commands as they are now (extension commands included)."""
            ...

    class CompletionHost(Protocol):
        """Where the completion list mounts, the editor it completes, and the commands it offers."""

        @property
        def editor(self) -> PromptEditor: ...

        @property
        def commands(self) -> CommandSource: ...

        @property
        def session(self) -> AgentSession | None:
            """Its MCP resources complete after ``@`` too."""
            ...

        def mount(
            self, *widgets: Widget, before: int | str | Widget | None = None
        ) -> AwaitMount: ...

        def report(self, text: str, level: NoticeLevel = "info") -> None: ...

        def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...
