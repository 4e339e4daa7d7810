"""Log records leave picode without keys or tokens (stderr, or an extension's handler)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from picode.launch import redact_log_records

GHP = "ghp_" + "L0g5R3d4" * 4 + "cTeD"


@pytest.fixture
def factory() -> Iterator[None]:
    original = logging.getLogRecordFactory()
    try:
        yield
    finally:
        logging.setLogRecordFactory(original)


def test_a_logged_token_and_a_traceback_holding_one_are_masked(factory: None) -> None:
    redact_log_records()
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    logger = logging.getLogger("picode.test.redaction")
    logger.addHandler(handler)
    try:
        logger.warning("request failed for %s", f"https://x.test/?key={GHP}")
        try:
            raise RuntimeError(f"401: bad token {GHP}")
        except RuntimeError:
            logger.exception("provider error")
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    assert GHP not in text
    assert "request failed for https://x.test/?key=[redacted]" in text
    assert "RuntimeError: 401: bad token [redacted]" in text
