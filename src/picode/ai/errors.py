"""Readable provider errors, retry-after hints and context-overflow detection.

Providers turn every failure into one text (``AssistantMessage.error_message``) because that
is what a session stores and a person reads. The helpers here build that text the same way
for every SDK and read back what later layers need from it: is it transient, is it a context
overflow, how long did the server ask us to wait.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Any


class MissingApiKeyError(ValueError):
    """No API key was configured for a provider that needs one."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ProviderSetupError(ValueError):
    """A provider lacks a setting (region, project, endpoint) or an optional package; the
    message says what to set or install."""


RETRY_AFTER_NOTE = re.compile(r"\(retry after (\d+(?:\.\d+)?) ?s\)")

_STATUS_TEXT = {
    400: "Bad request",
    401: "Unauthorized (check the API key)",
    403: "Forbidden",
    404: "Not found (check the model id and base URL)",
    408: "Request timeout",
    413: "Request too large",
    429: "Rate limited",
    500: "Server error",
    502: "Bad gateway",
    503: "Service unavailable",
    504: "Gateway timeout",
    529: "Overloaded",
}

#: Error ``type`` values in API error bodies, for errors that carry no useful HTTP status
#: (an ``error`` event in the middle of a 200 stream).
_ERROR_TYPES = {
    "overloaded_error": "Overloaded",
    "rate_limit_error": "Rate limited",
    "api_error": "Server error",
    "server_error": "Server error",
    "invalid_request_error": "Bad request",
    "authentication_error": "Unauthorized",
    "permission_error": "Forbidden",
    "not_found_error": "Not found",
    "request_too_large": "Request too large",
    "timeout_error": "Timed out",
}

_OVERFLOW_PATTERNS = re.compile(
    "|".join(
        [
            r"prompt (?:is )?too long",  # Anthropic; Ollama "prompt too long; exceeded ..."
            r"context_length_exceeded",  # OpenAI
            r"exceeds the context window",  # OpenAI Responses
            r"max(?:imum)? context length",  # OpenAI chat, vLLM, Ollama, Mistral
            r"too long to fit into the model",  # vLLM "The prompt (total length N) is ..."
            r"context length is only \d+",  # vLLM
            r"(?:input|prompt) exceeds (?:the )?(?:model's )?context length",  # Ollama runner
            r"greater than the context length",  # LM Studio
            r"token limit exceeded|exceeded model token limit",
            r"input token count.{0,80}exceeds",  # Gemini
            r"exceeds the maximum number of tokens",  # Gemini
            r"context (?:window|length) (?:is )?exceeded",
            r"model_context_window_exceeded",
            r"too many tokens",
            r"exceed(?:s|ed)? context size",  # llama.cpp
            r"the request exceeds the available context size",  # llama.cpp server
            r"input length .{0,40}exceeds",  # Ollama / vLLM variants
            r"prompt tokens? .{0,40}exceed",
            r"reduce the length of the messages",
        ]
    ),
    re.IGNORECASE,
)

_TRANSIENT_PATTERNS = re.compile(
    "|".join(
        [
            r"\boverloaded\b",
            r"rate.?limit",
            r"\b429\b",
            r"\b5\d\d\b",
            r"too many requests",
            r"server[ _]error",
            r"server had an error",
            r"service unavailable",
            r"bad gateway",
            r"gateway timeout",
            r"connection (?:reset|refused|error|closed|aborted|lost|failed)",
            r"could not connect",
            r"timed? ?out",
            r"timeout",
            r"stream (?:ended|cut|closed)",
            r"ended without",
            r"incomplete (?:read|chunked)",
            r"remote ?protocol",
            r"peer closed",
            r"network",
            r"temporarily",
            r"try again",
        ]
    ),
    re.IGNORECASE,
)

_PERMANENT_STATUS = re.compile(r"^(?:400|401|403|404|413|422)\b")


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """Seconds the server asked us to wait, from the usual headers, or None."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    if (value := lower.get("retry-after-ms")) is not None:
        number = _as_float(value)
        if number is not None:
            return max(0.0, number / 1000)
    if (value := lower.get("retry-after")) is not None:
        number = _as_float(value)
        if number is not None:
            return max(0.0, number)
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            parsed = None
        if parsed is not None:
            current = time.time() if now is None else now
            return max(0.0, parsed.timestamp() - current)
    for key in ("x-ratelimit-reset-ms", "x-ratelimit-reset-requests-ms"):
        if (value := lower.get(key)) is not None and (number := _as_float(value)) is not None:
            return max(0.0, number / 1000)
    for key in ("x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
        if (value := lower.get(key)) is not None:
            seconds = _reset_value(value, now)
            if seconds is not None:
                return seconds
    return None


def _reset_value(value: str, now: float | None) -> float | None:
    """x-ratelimit-reset is a duration ("6m0s", "1.5s"), seconds, or an epoch timestamp."""
    number = _as_float(value)
    if number is not None:
        current = time.time() if now is None else now
        if number > 1_000_000_000:  # an epoch timestamp
            return max(0.0, number - current)
        return max(0.0, number)
    total = 0.0
    matched = False
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value):
        matched = True
        total += float(amount) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
    return total if matched else None


def _as_float(value: str) -> float | None:
    try:
        return float(value.strip())
    except ValueError:
        return None


def format_error_message(
    exc: BaseException | None = None,
    *,
    status: int | None = None,
    body_message: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> str:
    """One readable line: ``429 Rate limited: <server text> (retry after 7 s)``."""
    label: str | None = None
    if exc is not None:
        status = status if status is not None else _status_of(exc)
        if status is None and (failure := transport_failure(exc)) is not None:
            return _transport_text(failure, exc)
        headers = headers if headers is not None else _headers_of(exc)
        body_message = body_message or _body_message_of(exc)
        label = _ERROR_TYPES.get(_error_type_of(exc) or "")
    if status is not None and 200 <= status < 300:
        # An error event inside a 200 stream: the status says nothing about the failure.
        status = None
    parts: list[str] = []
    if status:
        parts.append(f"{status} {_STATUS_TEXT.get(status, 'HTTP error')}")
    elif label:
        parts.append(label)
    detail = (body_message or "").strip()
    if not detail and exc is not None:
        detail = _describe_exception(exc)
    if detail and status is None and exc is not None:
        detail = _with_cause(detail, exc)
    if detail and (not parts or detail.lower() not in parts[0].lower()):
        parts.append(detail)
    text = ": ".join(parts) if parts else "Unknown error"
    wait = retry_after_seconds(headers)
    if wait is None and exc is not None:
        wait = _retry_delay_in_body(exc)
    if wait is not None:
        text += f" {format_retry_after(wait)}"
    return text


_RETRY_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _retry_delay_in_body(exc: BaseException) -> float | None:
    """Google puts the wait in the body: ``details: [{..."retryDelay": "17s"}]``."""
    for body in (getattr(exc, "details", None), getattr(exc, "body", None)):
        error = body.get("error", body) if isinstance(body, Mapping) else None
        details = error.get("details") if isinstance(error, Mapping) else None
        if not isinstance(details, list):
            continue
        for item in details:
            delay = item.get("retryDelay") if isinstance(item, Mapping) else None
            match = _RETRY_DELAY.match(delay) if isinstance(delay, str) else None
            if match:
                return float(match.group(1))
    return None


def format_retry_after(seconds: float) -> str:
    if seconds >= 10 or seconds == int(seconds):
        shown = f"{seconds:.0f}"
    elif seconds < 1:
        # Sub-second waits (retry-after-ms) would read as "0.0" with one decimal.
        shown = f"{seconds:.3f}".rstrip("0").rstrip(".")
    else:
        shown = f"{seconds:.1f}"
    return f"(retry after {shown} s)"


def without_retry_after(message: str) -> str:
    """``message`` without the server's "(retry after N s)" note."""
    return RETRY_AFTER_NOTE.sub("", message).replace("  ", " ").strip()


def retry_after_from_message(message: str | None) -> float | None:
    if not message:
        return None
    match = RETRY_AFTER_NOTE.search(message)
    return float(match.group(1)) if match else None


def _describe_exception(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc).strip()
    if name == "JSONDecodeError":
        return f"Malformed data in the server's response ({text})"
    return f"{name}: {text}" if text else name


# --- transport failures ---------------------------------------------------------------------
#
# What a person reads when the connection itself failed is picode's own classification, taken
# from the exception types in the chain (the SDK's error, the HTTP client's, the socket's), not
# from their messages, whose wording changes between releases. The SDK's text follows it as
# detail.

TIMED_OUT = "Timed out"
CONNECTION_REFUSED = "Connection refused"
COULD_NOT_CONNECT = "Could not connect"
CONNECTION_LOST = "Connection lost"
CONNECTION_FAILED = "Connection failed"

#: Lower-case class names (anywhere in an exception's MRO) and what they mean, strongest first.
_TRANSPORT_KINDS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        TIMED_OUT,
        frozenset(
            {
                "timeouterror",  # builtin (ETIMEDOUT) and asyncio's
                "timeoutexception",  # httpx / httpx2: connect, read, write and pool timeouts
                "apitimeouterror",  # anthropic, openai
                "timeout",  # socket.timeout before 3.10, requests' Timeout
            }
        ),
    ),
    (CONNECTION_REFUSED, frozenset({"connectionrefusederror"})),
    (COULD_NOT_CONNECT, frozenset({"connecterror", "gaierror", "proxyerror"})),
    (
        CONNECTION_LOST,
        frozenset(
            {
                "remoteprotocolerror",
                "readerror",
                "writeerror",
                "closeresourceerror",
                "brokenresourceerror",
                "endofstream",
                "incompleteread",
                "connectionreseterror",
                "connectionabortederror",
                "brokenpipeerror",
            }
        ),
    ),
    (
        CONNECTION_FAILED,
        frozenset({"apiconnectionerror", "networkerror", "transporterror", "connectionerror"}),
    ),
)

_GENERIC_SDK_TEXT = re.compile(r"^(?:connection error|request timed out)[.:]*\s*", re.IGNORECASE)


def transport_failure(exc: BaseException) -> str | None:
    """picode's name for a failed connection (``TIMED_OUT``…), or None for any other error."""
    found: set[str] = set()
    for error in _error_chain(exc):
        found.update(cls.__name__.lower() for cls in type(error).__mro__)
    for kind, names in _TRANSPORT_KINDS:
        if found & names:
            return kind
    return None


def _error_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: causes, contexts, exception groups, exceptions as arguments."""
    chain: list[BaseException] = []
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending and len(chain) < 32:
        error = pending.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        chain.append(error)
        wrapped = [error.__cause__, error.__context__, *getattr(error, "exceptions", ())]
        wrapped.extend(arg for arg in error.args if isinstance(arg, BaseException))
        pending.extend(inner for inner in wrapped if isinstance(inner, BaseException))
    return chain


def _transport_text(failure: str, exc: BaseException) -> str:
    """``Connection lost: <what the SDK and the socket said>``."""
    detail = (_body_message_of(exc) or str(exc)).strip()
    if "cancel scope" in detail:
        detail = ""
    detail = _with_cause(detail, exc) if detail else _with_cause("", exc).lstrip(": ")
    # An SDK's own generic words ("Connection error.") restate the classification.
    detail = _GENERIC_SDK_TEXT.sub("", detail).strip()
    if not detail or detail.lower().rstrip(".") == failure.lower():
        return failure
    return f"{failure}: {detail}"


def _with_cause(detail: str, exc: BaseException) -> str:
    """SDKs wrap transport failures in a generic "Connection error."; name the cause."""
    cause = exc.__cause__ or exc.__context__
    for _ in range(3):
        if cause is None:
            return detail
        text = str(cause).strip()
        # anyio's "Cancelled via cancel scope <id>; reason: deadline exceeded" says nothing.
        if text and "cancel scope" not in text and text.lower() not in detail.lower():
            return f"{detail.rstrip('.')}: {text}"
        cause = cause.__cause__ or cause.__context__
    return detail


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and value >= 400 else None


def _error_type_of(exc: BaseException) -> str | None:
    body: Any = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error")
        found = error.get("type") if isinstance(error, Mapping) else body.get("type")
        if isinstance(found, str):
            return found
    found = getattr(exc, "type", None)
    return found if isinstance(found, str) else None


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        return {str(k): str(v) for k, v in headers.items()}
    except Exception:
        return None


def _body_message_of(exc: BaseException) -> str | None:
    body: Any = getattr(exc, "body", None)
    found = _message_in(body)
    if found:
        return found
    details: Any = getattr(exc, "details", None)  # google-genai
    found = _message_in(details)
    if found:
        return found
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message.strip():
        return message.strip()
    return None


def _message_in(body: Any) -> str | None:
    if isinstance(body, str):
        return body.strip() or None
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            message = error.get("message")
            if isinstance(message, str) and message.strip():
                return message.strip()
        elif isinstance(error, str) and error.strip():
            return error.strip()
        message = body.get("message")
        if isinstance(message, str) and message.strip():
            return message.strip()
    return None


def is_context_overflow(
    error_message: str | None, *, input_tokens: int = 0, context_window: int = 0
) -> bool:
    """True for a provider's "too many tokens" error, or a silent overflow seen in usage."""
    if error_message and _OVERFLOW_PATTERNS.search(error_message):
        return True
    return bool(context_window) and input_tokens > context_window


def is_transient_error(error_message: str | None) -> bool:
    """Worth retrying the same request later: overload, rate limit, 5xx, network trouble."""
    if not error_message:
        return False
    if is_context_overflow(error_message):
        return False
    if _PERMANENT_STATUS.match(error_message.strip()):
        return False
    return bool(_TRANSIENT_PATTERNS.search(error_message))
