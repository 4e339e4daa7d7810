"""Long conversations through the real SDKs: the body picode encodes goes out as it is.

The SDKs' own routes walked the whole history once more per request (Anthropic's copy of
the params, OpenAI's typed transform) and encoded it again; picode hands them the bytes
(``_json_body``). These check that, on each API, no such walk or encoding of the body
happens in the SDK, that the server receives the JSON picode built, and that a long reply
sent before is not escaped again for the next request.
"""

from __future__ import annotations

from typing import Any

import anthropic._base_client
import openai._base_client
import openai.resources.chat.completions.completions as chat_completions
import pytest

from picode.ai.models import Model
from picode.ai.providers import _json_body
from picode.ai.types import AssistantMessage, Context, TextContent, UserMessage
from tests.providers.models import READ_TOOL, past_reply, wire_model
from tests.providers.sdk_streaming import options as stream_options
from tests.providers.sdk_streaming import run, stream_all
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import WireResponse, WireServer

REPLY = 'A long earlier reply, with\nlines, "quotes" and ü. ' * 200

REPLIES: dict[str, WireResponse] = {
    "anthropic-messages": AnthropicStream().text("ok").stop().response(),
    "openai-completions": ChatStream().text("ok").end("stop").response(),
    "openai-responses": ResponsesStream()
    .created()
    .message(["ok"])
    .completed(usage(5, 1))
    .response(),
}


class FakeSdkWalks:
    """Counts what the SDKs would have walked or encoded of a body picode built: each
    spy records the data it was given and hands it on to the SDK's own function."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[Any] = []
        for module, name in (
            (anthropic._base_client, "async_prepare_request_data"),
            (anthropic._base_client, "openapi_dumps"),
            (openai._base_client, "openapi_dumps"),
            (chat_completions, "async_maybe_transform"),
        ):
            monkeypatch.setattr(module, name, self._spy(getattr(module, name)))

    def _spy(self, real: Any) -> Any:
        def spy(data: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(data)
            return real(data, *args, **kwargs)

        return spy

    @property
    def bodies(self) -> list[Any]:
        """What of it was a request body (has the conversation in it)."""
        return [d for d in self.seen if isinstance(d, dict) and ({"messages", "input"} & set(d))]


def _reply(model: Model, n: int) -> AssistantMessage:
    return past_reply(model, [TextContent(f"{REPLY}{n}")], stop_reason="stop")


def _conversation(model: Model, turns: int) -> Context:
    messages: list[Any] = []
    for n in range(turns):
        messages.append(UserMessage(f"question {n}"))
        messages.append(_reply(model, n))
    messages.append(UserMessage("and now?"))
    return Context("Be brief.", messages, [READ_TOOL])


def _strings(value: Any) -> list[str]:
    """Every string anywhere in a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@pytest.mark.parametrize("api", list(REPLIES))
def test_the_history_goes_out_as_picode_encoded_it(
    api: str, wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = FakeSdkWalks(monkeypatch)
    model = wire_model(api, wire)
    context = _conversation(model, 3)
    wire.enqueue(REPLIES[api], REPLIES[api])

    async def two_requests() -> None:
        await stream_all(model, context, stream_options(temperature=0.5))
        context.messages += [
            _reply(model, 3),
            UserMessage("one more"),
        ]
        await stream_all(model, context, stream_options(temperature=0.5))

    encoder = _json_body.BodyEncoder()
    monkeypatch.setattr(_json_body, "_ENCODER", encoder)
    run(two_requests)

    assert sdk.bodies == []  # nothing walked or encoded the body in the SDK
    first, second = (request.json for request in wire.requests)
    for body in (first, second):
        assert body["stream"] is True
        assert body["temperature"] == 0.5
        assert body["model"] == model.id
        assert REPLY + "0" in _strings(body)  # the earlier replies are there, intact
    assert wire.requests[0].headers["content-type"] == "application/json"
    # The second request escaped only the reply that is new in it.
    assert encoder.escapes == 3 + 1
