"""Server-sent events decoded straight from the response's bytes.

An SDK's stream turns every line into a ``str``, every event into an object, and every
event's JSON into a typed model, though a provider reads a handful of fields of each and a
reply streams ~100 events a second. This decoder works on bytes: it splits the chunks it is
fed into lines, keeps the ``event`` and ``data`` fields (the only ones the providers use),
and hands over each event's name and data when its blank line arrives, for ``json.loads``
(which takes bytes) to decode. Lines may end in LF, CRLF or a lone CR, and a chunk may end
anywhere: inside a line, inside a UTF-8 character, between the CR and the LF of one line
end (a CR that ends a chunk waits for the next chunk, or for ``end``, to tell which).
Comments (``:`` lines) and other fields are skipped; an event with no blank line after it
when the body ends is not dispatched, as the specification says
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable

#: One dispatched event: its ``event`` field (None when it had none) and its data lines
#: joined with LF.
SseEvent = tuple[bytes | None, bytes]


class SseDecoder:
    """Incremental: ``feed`` each chunk as it arrives, get the events it completed."""

    __slots__ = ("_data", "_event", "_pending")

    def __init__(self) -> None:
        #: The start of a line whose end has not arrived yet.
        self._pending = b""
        self._event: bytes | None = None
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._pending:
            chunk = self._pending + chunk
        held = b""
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                # Its LF may be the next chunk's first byte: decide when that arrives.
                chunk, held = chunk[:-1], b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        self._pending = lines.pop() + held
        events: list[SseEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append((self._event, data[0] if len(data) == 1 else b"\n".join(data)))
                    data = self._data = []
                    self._event = None
                elif self._event is not None:
                    events.append((self._event, b""))
                    self._event = None
            elif line.startswith(b"data:"):
                data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            elif line.startswith(b"event:"):
                self._event = line[7:] if line.startswith(b"event: ") else line[6:]
            elif line == b"data":  # a field name alone has an empty value
                data.append(b"")
            # Anything else is a comment (":"), "id", "retry" or an unknown field.
        return events

    def end(self) -> list[SseEvent]:
        """The body ended: a CR held back for its LF was a line end of its own."""
        return self.feed(b"\n") if self._pending.endswith(b"\r") else []


async def read_events(
    chunks: AsyncIterable[bytes], handle: Callable[[bytes | None, bytes], object]
) -> bool:
    """Decode the body's events and call ``handle(name, data)`` for each as it completes.

    True once ``handle`` returned a true value (the reading stops there: the caller closes
    or drains the rest); False when the body ended first. A failed read is left as the
    HTTP client raised it."""
    decoder = SseDecoder()
    async for chunk in chunks:
        for name, data in decoder.feed(chunk):
            if handle(name, data):
                return True
    return any(handle(name, data) for name, data in decoder.end())
