"""``/login [provider]`` and ``/logout [provider]``: an API key kept in picode's auth file,
typed into a masked box (docs/configuration.md "The auth file")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session.models import ApiKeyError
from picode.tui.controllers.command_error import CommandError, session_of

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import CommandHost


class KeyCommands:
    def __init__(self, host: CommandHost) -> None:
        self.host = host

    async def login(self, argument: str) -> None:
        session = session_of(self.host)
        provider = _provider(session, argument)
        try:
            session.check_key_provider(provider)
        except ApiKeyError as exc:
            raise CommandError(str(exc)) from None
        await self.ask_and_save(session, provider)

    async def ask_and_save(
        self, session: AgentSession, provider: str, why: str | None = None
    ) -> bool:
        """Ask for ``provider``'s key and keep it; True once it is saved. ``why`` says what
        asked (a message that needs it)."""
        from picode.tui.pickers.key_prompt import KeyPrompt

        key = await self.host.push_screen_wait(KeyPrompt(provider, session.api_key_file, why))
        if key is None:
            self.host.report(f"No key saved for {provider}.")
            return False
        try:
            saved = session.save_api_key(provider, key)
        except ApiKeyError as exc:
            self.host.report(str(exc), "warning")
            return False
        self._tell(saved.said(), saved.warning())
        return saved.used_instead is None

    async def logout(self, argument: str) -> None:
        session = session_of(self.host)
        try:
            forgotten = session.forget_api_key(_provider(session, argument))
        except ApiKeyError as exc:
            raise CommandError(str(exc)) from None
        self._tell(forgotten.said(), forgotten.warning())

    def _tell(self, said: str, warning: str | None) -> None:
        self.host.report(said)
        if warning is not None:
            self.host.report(warning, "warning")


def _provider(session: AgentSession, argument: str) -> str:
    """The provider named, else the current model's."""
    words = argument.split()
    if len(words) > 1:
        raise CommandError("Name one provider, e.g. /login anthropic (none: the model's own).")
    return words[0] if words else session.model.provider
