"""Bedrock's ``invoke-with-response-stream`` body: AWS's binary event-stream framing around
the Anthropic events, the way the service sends it (and botocore reads it).

Each frame is a prelude (total length, headers length, CRC-32 of those eight bytes), typed
headers (``:event-type`` ``chunk`` and so on), the payload ``{"bytes": <base64 of one
Anthropic event's JSON>}`` and a CRC-32 of the whole frame.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from tests.wire.anthropic_protocol import AnthropicStream, decode_sse
from tests.wire.server import Chunk, WireResponse

_STRING = 7


def _header(name: str, value: str) -> bytes:
    key = name.encode()
    data = value.encode()
    return bytes([len(key)]) + key + bytes([_STRING]) + struct.pack(">H", len(data)) + data


def frame(payload: bytes, headers: dict[str, str]) -> bytes:
    packed = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(packed) + len(payload) + 4
    prelude = struct.pack(">II", total, len(packed))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + packed + payload
    return message + struct.pack(">I", zlib.crc32(message))


def chunk_frame(event: Any) -> bytes:
    data = base64.b64encode(json.dumps(event).encode()).decode()
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return frame(json.dumps({"bytes": data}).encode(), headers)


def bedrock_stream(stream: AnthropicStream) -> WireResponse:
    """The same reply as ``stream`` would be on the Anthropic API, framed for Bedrock."""
    body: list[Chunk] = []
    for chunk in stream.body():
        assert isinstance(chunk, str), chunk
        for _, data in decode_sse(chunk.encode()):
            body.append(chunk_frame(data))
    return WireResponse(
        body=body,
        content_type="application/vnd.amazon.eventstream",
        headers={"x-amzn-requestid": "req-bedrock"},
    )
