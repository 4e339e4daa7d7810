"""A streamed Gemini request through google-genai's API client, read as plain JSON.

``client.aio.models.generate_content_stream`` validates every streamed chunk into a
``GenerateContentResponse`` and its config into a ``GenerateContentConfig``; pydantic
builds those models' schemas on first use. That was ~150 ms of CPU on the way to the first
answer after launch, and ~0.2 ms a chunk after (docs/benchmarks.md, issue 36). Here the
request goes through the same client, as ``generate_content_stream`` sends it: its URL,
headers and API key (``_build_request``), its HTTP client, retry policy and HTTP errors
(``_async_request``, raising ``APIError``), its SSE framing (``HttpResponse``); only the
body is picode's (``_google_body``, encoded by ``_json_body``) and each chunk stays the
dict the server sent. These are the client's own methods under its public
``async_request_streamed``, which would re-encode every chunk and wrap it in a model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from google import genai
from google.genai import errors

from picode.ai.providers._json_body import encode_body


async def post_stream(
    client: genai.Client, path: str, body: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """POST ``body`` to ``path``; the stream of its chunks (an async generator to close)."""
    api = client.aio._api_client
    request = api._build_request("post", path, {}, None)
    request.data = encode_body(body)
    response = await api._async_request(http_request=request, stream=True)
    return _chunks(response)


async def _chunks(response: Any) -> AsyncIterator[dict[str, Any]]:
    segments = response.async_segments()
    try:
        async for chunk in segments:
            if not isinstance(chunk, dict):
                continue
            error = chunk.get("error")
            if error is not None:
                # An error mid-stream arrives as a chunk; the SDK raises it the same way.
                if not isinstance(error, dict):  # not Google's shape: keep its text
                    chunk = {"error": {"message": str(error)}}
                    error = chunk["error"]
                code = error.get("code")
                if not isinstance(code, int):
                    raise errors.APIError(0, chunk, response)
                await errors.APIError.raise_error_async(code, chunk, response)
            yield chunk
    finally:
        await segments.aclose()
        # Closing the generator above leaves the SDK's inner reader to the garbage
        # collector; an abort must close the connection now.
        stream = response.response_stream
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
        elif (release := getattr(stream, "release", None)) is not None:
            release()  # aiohttp
