"""A streamed OpenAI request sent and read the way both OpenAI providers do.

The body is encoded by picode (``_json_body``: the params are wire-format already, and the
SDK's typed transform of the whole history is skipped). The reply's server-sent events are
read off the HTTP response by picode (``_sse``) and each event handed over as the dict
``json.loads`` gives: the SDK's stream decodes SSE a line at a time, as ``str``, with an
event object per event, for the provider to read a few fields. Imported only by the OpenAI
providers, which import the SDK anyway.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from openai import APIConnectionError, APIError, APITimeoutError, AsyncOpenAI, AsyncStream

# What the SDK's own stream calls for the same cases, so that picode's reading ends, drains
# and fails exactly as iterating the stream did (both are loaded with ``AsyncStream``).
from openai._httpx2 import request_exceptions, timeout_exceptions
from openai._streaming_cleanup import drain_response_async

from picode.ai.providers._json_body import encode_body
from picode.ai.providers._sse import read_events as read_sse

Json = dict[str, Any]

#: The SDK's words for an error event without a message of its own.
STREAM_ERROR_MESSAGE = "An error occurred during streaming"


async def post_stream(client: AsyncOpenAI, path: str, params: dict[str, Any]) -> AsyncStream[Any]:
    """POST ``params`` with ``stream: true`` to ``path``. The stream returned only holds the
    open response (``async with`` it to close the connection however the reading ends); its
    events are read with ``read_events``, it is never iterated."""
    return await client.post(
        path,
        content=encode_body({**params, "stream": True}),
        # As the SDK's own methods ask: the API key goes as a bearer token.
        options={"security": {"bearer_auth": True}},
        cast_to=object,
        stream=True,
        stream_cls=AsyncStream[object],
    )


async def read_events(stream: AsyncStream[Any], handle: Callable[[Json], object]) -> None:
    """Hand each event's JSON object to ``handle`` as it arrives, until ``data: [DONE]``,
    the end of the body, or ``handle`` returning a true value (a terminal event).

    What the SDK's stream does with the events, picode does: after ``[DONE]`` (and after a
    terminal event: the Responses API sends no ``[DONE]``) the rest of an HTTP/1.1 body is
    drained (briefly) so the connection can be reused; an event whose
    JSON has a non-empty ``error`` is raised as the SDK's ``APIError`` with that error as
    its body; events named ``thread.*`` (the Assistants API's) are not handed on, the SDK
    wrapped them in an object neither provider reads; a failed read is raised as the SDK's
    ``APITimeoutError`` / ``APIConnectionError`` from the HTTP client's error, which
    picode's error mapping classifies by the types in the chain. Events without data are
    skipped (the SDK failed on them as malformed JSON)."""
    response = stream.response
    loads = json.loads
    done = False

    def dispatch(name: bytes | None, data: bytes) -> bool:
        nonlocal done
        if data.startswith(b"[DONE]"):
            done = True
            return True
        if not data or (name is not None and name.startswith(b"thread.")):
            return False
        event = loads(data)
        if not isinstance(event, dict):
            return False
        error = event.get("error")
        if error:
            raise _stream_error(stream, error)
        done = bool(handle(event))
        return done

    try:
        await read_sse(response.aiter_bytes(), dispatch)
    except timeout_exceptions() as err:
        raise APITimeoutError(request=response.request) from err
    except request_exceptions() as err:
        raise APIConnectionError(request=response.request) from err
    if done and response.http_version == "HTTP/1.1":
        await drain_response_async(response)


def _stream_error(stream: AsyncStream[Any], error: object) -> APIError:
    """An event's ``error`` as the SDK's stream raises it."""
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = STREAM_ERROR_MESSAGE
    return APIError(message=message, request=stream.response.request, body=error)
