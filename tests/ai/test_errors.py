"""Readable errors, retry-after hints, overflow and transient classification."""

from __future__ import annotations

import asyncio
import email.utils
import time
from typing import Any

import pytest

from picode.ai.errors import (
    CONNECTION_FAILED,
    CONNECTION_LOST,
    CONNECTION_REFUSED,
    COULD_NOT_CONNECT,
    TIMED_OUT,
    format_error_message,
    format_retry_after,
    is_context_overflow,
    is_transient_error,
    retry_after_from_message,
    retry_after_seconds,
    transport_failure,
)


class FakeResponse:
    def __init__(self, status_code: int, headers: dict[str, str]) -> None:
        self.status_code = status_code
        self.headers = headers


class FakeStatusError(Exception):
    """Shaped like the SDKs' APIStatusError: status_code, response.headers, body, message."""

    def __init__(
        self,
        status_code: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        message: str = "",
    ) -> None:
        super().__init__(message or f"Error code: {status_code} - {body!r}")
        self.status_code = status_code
        self.body = body
        self.message = message or str(self)
        self.response = FakeResponse(status_code, headers or {})


class FakeGenaiError(Exception):
    """Shaped like google-genai's APIError: an int ``code`` and ``details``."""

    def __init__(self, code: int, details: Any) -> None:
        super().__init__(f"{code} {details}")
        self.code = code
        self.details = details


class APIConnectionError(Exception):
    """Named like the SDKs' error for a failed connection."""


class APITimeoutError(APIConnectionError):
    """Named like the SDKs' timeout, which is a connection error there too."""


def test_sdk_status_error_becomes_status_text_body_message_and_retry_hint() -> None:
    exc = FakeStatusError(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down please"}},
        {"Retry-After": "7", "content-type": "application/json"},
    )
    assert format_error_message(exc) == "429 Rate limited: Slow down please (retry after 7 s)"


def test_status_known_only_from_the_response_object() -> None:
    class Bare(Exception):
        pass

    exc = Bare("denied")
    exc.response = FakeResponse(401, {})  # type: ignore[attr-defined]
    assert format_error_message(exc) == "401 Unauthorized (check the API key): Bare: denied"


def test_body_message_is_not_repeated_when_it_only_restates_the_status() -> None:
    exc = FakeStatusError(529, {"error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert format_error_message(exc) == "529 Overloaded"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"error": {"message": "  nested  "}}, "nested"),
        ({"error": "flat string"}, "flat string"),
        ({"message": "top level"}, "top level"),
        ("plain text body", "plain text body"),
    ],
)
def test_body_shapes(body: Any, expected: str) -> None:
    assert format_error_message(FakeStatusError(400, body)) == f"400 Bad request: {expected}"


def test_message_attribute_is_used_when_the_body_says_nothing() -> None:
    exc = FakeStatusError(503, None, message="upstream went away")
    assert format_error_message(exc) == "503 Service unavailable: upstream went away"


def test_google_genai_shape() -> None:
    exc = FakeGenaiError(404, {"error": {"code": 404, "message": "models/x is not found"}})
    assert format_error_message(exc) == (
        "404 Not found (check the model id and base URL): models/x is not found"
    )


def test_unknown_status_and_no_details() -> None:
    assert format_error_message(FakeStatusError(418, {})).startswith("418 HTTP error")
    assert format_error_message() == "Unknown error"
    assert format_error_message(status=502) == "502 Bad gateway"
    assert format_error_message(status=500, body_message="boom") == "500 Server error: boom"


def test_plain_exceptions_are_described_readably() -> None:
    assert format_error_message(RuntimeError("boom")) == "RuntimeError: boom"
    assert format_error_message(ValueError()) == "ValueError"


# --- transport failures: picode's classification, whatever the SDK's words ------------------


class TimeoutException(Exception):
    """Named like httpx's base class of every timeout."""


class ReadTimeout(TimeoutException):
    pass


class RemoteProtocolError(Exception):
    """Named like httpx's: the peer closed the connection mid-response."""


class ConnectError(Exception):
    """Named like httpx's: the connection could not be made."""


def _wrapped(outer: BaseException, inner: BaseException) -> BaseException:
    outer.__cause__ = inner
    return outer


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TimeoutError(), TIMED_OUT),
        (APITimeoutError("whatever the SDK says"), TIMED_OUT),
        (_wrapped(APIConnectionError("x"), ReadTimeout("y")), TIMED_OUT),
        (_wrapped(APIConnectionError("x"), RemoteProtocolError("y")), CONNECTION_LOST),
        (ConnectionResetError(104, "reset"), CONNECTION_LOST),
        (BrokenPipeError(), CONNECTION_LOST),
        (
            _wrapped(
                APIConnectionError("x"), _wrapped(ConnectError("y"), ConnectionRefusedError())
            ),
            CONNECTION_REFUSED,
        ),
        (_wrapped(APIConnectionError("x"), ConnectError("y")), COULD_NOT_CONNECT),
        # httpcore clears the cause of an error it wraps and keeps it as an argument.
        (ConnectError(ConnectionRefusedError()), CONNECTION_REFUSED),
        (ExceptionGroup("several addresses", [ConnectionRefusedError()]), CONNECTION_REFUSED),
        (APIConnectionError("no cause given"), CONNECTION_FAILED),
    ],
)
def test_transport_failures_are_classified_by_type_not_by_words(
    exc: BaseException, kind: str
) -> None:
    assert transport_failure(exc) == kind
    text = format_error_message(exc)
    assert text.split(":")[0] == kind
    assert is_transient_error(text)


@pytest.mark.parametrize(
    "exc", [RuntimeError("connection timed out"), ValueError("peer closed"), KeyError("x")]
)
def test_other_errors_are_not_transport_failures_whatever_they_say(exc: BaseException) -> None:
    assert transport_failure(exc) is None
    assert not format_error_message(exc).startswith((TIMED_OUT, CONNECTION_LOST))


def test_status_errors_are_never_transport_failures() -> None:
    exc = _wrapped(FakeStatusError(503, {"error": {"message": "down"}}), ConnectionResetError())
    assert format_error_message(exc) == "503 Service unavailable: down"


def test_the_sdk_detail_follows_the_classification_once() -> None:
    # An SDK's own message and the socket's cause are kept as detail, never said twice.
    cut = _wrapped(
        APIConnectionError("Connection to h:1 failed: peer closed"),
        RemoteProtocolError("peer closed"),
    )
    assert format_error_message(cut) == f"{CONNECTION_LOST}: Connection to h:1 failed: peer closed"
    generic = _wrapped(APIConnectionError("Connection error."), RemoteProtocolError("peer closed"))
    assert format_error_message(generic) == f"{CONNECTION_LOST}: peer closed"
    assert format_error_message(APITimeoutError("Request timed out.")) == TIMED_OUT
    assert format_error_message(TimeoutError()) == TIMED_OUT


def test_anyio_cancel_scope_noise_is_dropped_from_a_timeout() -> None:
    scope = asyncio.CancelledError("Cancelled via cancel scope 7f12a9aa1120; reason: deadline")
    timeout = APITimeoutError("Request timed out.")
    timeout.__cause__ = TimeoutError()
    timeout.__cause__.__context__ = scope
    assert format_error_message(timeout) == TIMED_OUT


def test_real_httpx_exceptions_are_classified() -> None:
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("GET", "http://127.0.0.1:9/")
    assert transport_failure(httpx.ReadTimeout("t", request=request)) == TIMED_OUT
    assert transport_failure(httpx.RemoteProtocolError("r", request=request)) == CONNECTION_LOST
    assert transport_failure(httpx.ConnectError("c", request=request)) == COULD_NOT_CONNECT


# --- retry-after ------------------------------------------------------------------------


def test_retry_after_in_seconds_and_case_insensitive() -> None:
    assert retry_after_seconds({"Retry-After": "12"}) == 12
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after": "-3"}) == 0


def test_retry_after_as_an_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 90, usegmt=True)
    assert retry_after_seconds({"retry-after": date}, now=now) == pytest.approx(90, abs=1)
    past = email.utils.formatdate(now - 90, usegmt=True)
    assert retry_after_seconds({"retry-after": past}, now=now) == 0


def test_retry_after_date_in_a_formatted_message_uses_the_current_time() -> None:
    date = email.utils.formatdate(time.time() + 120, usegmt=True)
    text = format_error_message(FakeStatusError(429, {}, {"retry-after": date}))
    wait = retry_after_from_message(text)
    assert wait is not None
    assert 115 <= wait <= 121


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25


@pytest.mark.parametrize(
    ("value", "expected"),
    [("6m0s", 360.0), ("1h2m3s", 3723.0), ("1.5s", 1.5), ("250ms", 0.25), ("20", 20.0)],
)
def test_x_ratelimit_reset_durations_and_seconds(value: str, expected: float) -> None:
    assert retry_after_seconds({"x-ratelimit-reset": value}) == pytest.approx(expected)
    assert retry_after_seconds({"x-ratelimit-reset-tokens": value}) == pytest.approx(expected)


def test_x_ratelimit_reset_as_an_epoch_timestamp() -> None:
    now = 1_700_000_000.0
    headers = {"x-ratelimit-reset": str(int(now + 42))}
    assert retry_after_seconds(headers, now=now) == pytest.approx(42)


def test_x_ratelimit_reset_ms() -> None:
    assert retry_after_seconds({"x-ratelimit-reset-ms": "1500"}) == 1.5
    assert retry_after_seconds({"x-ratelimit-reset-requests-ms": "20"}) == 0.02


def test_no_or_unreadable_headers_give_none() -> None:
    assert retry_after_seconds(None) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "soon-ish"}) is None
    assert retry_after_seconds({"x-ratelimit-reset": "whenever"}) is None


@pytest.mark.parametrize("seconds", [0.0, 0.02, 0.25, 1.0, 1.5, 7.0, 9.75, 12.0, 360.0, 3723.0])
def test_retry_after_round_trips_through_the_message(seconds: float) -> None:
    text = format_error_message(status=429, body_message="later", headers=_ms(seconds))
    assert text.startswith("429 Rate limited: later (retry after ")
    back = retry_after_from_message(text)
    assert back is not None
    # Shown to a person with sensible precision; the hint survives.
    assert back == pytest.approx(seconds, rel=0.05, abs=0.001)
    assert format_retry_after(seconds) in text


def test_retry_after_from_message_without_a_hint() -> None:
    assert retry_after_from_message(None) is None
    assert retry_after_from_message("500 Server error") is None


def _ms(seconds: float) -> dict[str, str]:
    return {"retry-after-ms": str(seconds * 1000)}


# --- context overflow ---------------------------------------------------------------------

OVERFLOWS = [
    "400 Bad request: prompt is too long: 213462 tokens > 200000 maximum",  # Anthropic
    "400 Bad request: Your input exceeds the context window of this model.",  # OpenAI Responses
    "context_length_exceeded",  # OpenAI code
    "400 Bad request: This model's maximum context length is 128000 tokens. However, your "
    "messages resulted in 130000 tokens.",  # OpenAI chat
    "400 Bad request: The input token count (1200000) exceeds the maximum number of tokens "
    "allowed (1048576).",  # Gemini
    "400 Bad request: the request exceeds the available context size, try increasing it",
    "400 Bad request: This model's maximum context length is 32768 tokens. However, you "
    "requested 40000 tokens.",  # vLLM
    "400 Bad request: The prompt (total length 25938) is too long to fit into the model "
    "(context length 4096).",  # vLLM
    "400 Bad request: prompt too long; exceeded max context length by 1200 tokens",  # Ollama
    "500 Server error: input exceeds context length",  # Ollama runner
    "400 Bad request: input length exceeds maximum context length",  # Ollama embed
    "400 Bad request: Requested token count exceeds the model's maximum context length of "
    "131072 tokens",
    "400 Bad request: Trying to keep the first 9000 tokens when context the overflows. "
    "However, the model is loaded with context length of 8192 which is greater than the "
    "context length",  # LM Studio
    "400 Bad request: Please reduce the length of the messages or completion.",  # Groq
]


@pytest.mark.parametrize("message", OVERFLOWS)
def test_provider_overflow_messages_are_recognised_and_not_transient(message: str) -> None:
    assert is_context_overflow(message)
    assert not is_transient_error(message)


def test_silent_overflow_from_usage() -> None:
    assert is_context_overflow(None, input_tokens=200_001, context_window=200_000)
    assert is_context_overflow("", input_tokens=5000, context_window=4096)
    assert not is_context_overflow(None, input_tokens=200_000, context_window=200_000)
    assert not is_context_overflow(None, input_tokens=10**9, context_window=0)


@pytest.mark.parametrize(
    "message",
    [
        None,
        "",
        "429 Rate limited: Rate limit reached for requests",
        "401 Unauthorized (check the API key): invalid x-api-key",
        "Connection error: [Errno 104] Connection reset by peer",
        "RuntimeError: boom",
    ],
)
def test_other_errors_are_not_overflow(message: str | None) -> None:
    assert not is_context_overflow(message)


# --- transient -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "429 Rate limited: slow down (retry after 7 s)",
        "529 Overloaded",
        "500 Server error: internal",
        "502 Bad gateway",
        "503 Service unavailable: upstream connect error",
        "504 Gateway timeout",
        "overloaded_error: Overloaded",
        "Connection error: [Errno 104] Connection reset by peer",
        "Connection error.",
        "Request timed out.",
        "ReadTimeout: The read operation timed out",
        "Stream ended before the provider signalled completion",
        # picode's own classification, as format_error_message writes it
        "Timed out",
        "Connection lost: peer closed",
        "Connection refused",
        "Could not connect: [Errno -2] Name or service not known",
        "Connection failed",
        "RemoteProtocolError: peer closed connection without sending complete message body "
        "(incomplete chunked read)",
        "The server had an error while processing your request. Sorry about that! You can "
        "retry your request, or contact us. Please try again",
    ],
)
def test_transient_errors(message: str) -> None:
    assert is_transient_error(message)


@pytest.mark.parametrize(
    "message",
    [
        None,
        "",
        "401 Unauthorized (check the API key): invalid x-api-key",
        "400 Bad request: messages: text content blocks must be non-empty",
        "404 Not found (check the model id and base URL): model: claude-x",
        "403 Forbidden: network access denied by policy",
        "400 Bad request: prompt is too long: 213462 tokens > 200000 maximum",
        "Request aborted",
        "The model stopped with an error",
    ],
)
def test_permanent_errors(message: str | None) -> None:
    assert not is_transient_error(message)


def test_formatted_sdk_errors_classify_as_expected() -> None:
    rate = format_error_message(FakeStatusError(429, {"error": {"message": "too fast"}}))
    auth = format_error_message(FakeStatusError(401, {"error": {"message": "bad key"}}))
    assert is_transient_error(rate)
    assert not is_transient_error(auth)
    assert is_transient_error(format_error_message(ConnectionResetError("reset by peer")))
