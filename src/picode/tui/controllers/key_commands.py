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
        from picode.tui.pickers.key_prompt import KeyPrompt

        key = await self.host.push_screen_wait(KeyPrompt(provider, session.api_key_file))
        if key is None:
            self.host.report(f"No key saved for {provider}.")
            return
        try:
            saved = session.save_api_key(provider, key)
        except ApiKeyError as exc:
            raise CommandError(str(exc)) from None
        self.host.report(f"Saved the key for {provider} in {saved.path} (readable by you only).")
        if saved.used_instead is not None:
            self.host.report(
                f"{saved.used_instead} gives {provider} a key before the saved one, so requests "
                f"still use that: remove it to use the key saved now.",
                "warning",
            )

    async def logout(self, argument: str) -> None:
        session = session_of(self.host)
        provider = _provider(session, argument)
        try:
            forgotten = session.forget_api_key(provider)
        except ApiKeyError as exc:
            raise CommandError(str(exc)) from None
        if forgotten.removed:
            self.host.report(f"Removed the key for {provider} from {forgotten.path}.")
        else:
            self.host.report(f"{forgotten.path} holds no key for {provider}.")
        if forgotten.still_from is not None:
            self.host.report(f"{provider} still has a key: {forgotten.still_from}.", "warning")


def _provider(session: AgentSession, argument: str) -> str:
    """The provider named, else the current model's."""
    words = argument.split()
    if len(words) > 1:
        raise CommandError("Name one provider, e.g. /login anthropic (none: the model's own).")
    return words[0] if words else session.model.provider
