"""The one redaction pattern: every token shape it promises, text it must leave alone, JSON
that stays JSON, and output that arrives in pieces."""

from __future__ import annotations

import json

import pytest

from picode.ai.redaction import REDACTED, StreamRedactor, redact, remember_secret

GHP = "ghp_" + "A1b2C3d4" * 4 + "wxyz"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDw3Hc1dbLh2HjvEmD5vNPE0c7iXkJi0yL0w9FyA+JtOQAAAJhP2fJ7T9ny\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

SECRETS = {
    "anthropic": "sk-ant-api03-" + "x7" * 20,
    "openai project": "sk-proj-" + "Ab3" * 10,
    "openai legacy": "sk-" + "a1B2" * 10,
    "google": "AIza" + "SyD1" * 8 + "abc",
    "github classic": GHP,
    "github oauth": "gho_" + "Z9" * 18,
    "github app": "ghs_" + "q8" * 18,
    "github fine-grained": "github_pat_11ABCDEFG0" + "x1" * 11 + "_" + "y2" * 29,
    "gitlab": "glpat-" + "a1b2c3d4e5" * 2,
    "slack bot": "xoxb-1234567890-0987654321-" + "AbCdEf" * 4,
    "slack user": "xoxp-1234567890-" + "aBc1" * 6,
    "slack app": "xapp-1-A0123456789-" + "1a2b" * 8,
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "npm": "npm_" + "a1B2c3" * 6,
    "hugging face": "hf_" + "AbCdEfGh" * 5,
    "aws access key id": "AKIAIOSFODNN7EXAMPLE",
    "aws temporary key id": "ASIAY34FZKBOKMUTVV7A",
    "jwt": JWT,
    "pem": PEM,
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_each_token_shape_is_redacted_in_text_and_in_json(secret: str) -> None:
    text = f"before {secret} after"
    redacted, count = redact(text)
    assert redacted == f"before {REDACTED} after"
    assert count == 1

    line = json.dumps({"output": f"line one\n{secret}\nline three"})
    cleaned, count = redact(line)
    assert secret not in cleaned and count == 1
    assert json.loads(cleaned) == {"output": f"line one\n{REDACTED}\nline three"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {REDACTED}"),
        (f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', f'AWS_SECRET_ACCESS_KEY="{REDACTED}"'),
        (f"awsSecretAccessKey: {AWS_SECRET}", f"awsSecretAccessKey: {REDACTED}"),
        ("Authorization: Bearer abc.def-ghi_jkl~mno123", f"Authorization: Bearer {REDACTED}"),
    ],
)
def test_named_values_lose_the_value_and_keep_the_name(text: str, expected: str) -> None:
    assert redact(text) == (expected, 1)
    line = json.dumps({"config": text})
    assert json.loads(redact(line)[0]) == {"config": expected}


@pytest.mark.parametrize(
    "text",
    [
        "pip install scikit-learn sk-learn; task-runner --sk-flag",
        "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
        "headers = {'Authorization': 'Bearer ' + token}",
        "def get_secret_key(self) -> str: return self.secret",
        "ghp_short and AKIA_NOT_A_KEY and eyJ.eyJ.x",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----",
        # Inside a base64 blob (a thinking signature) a shape is no token.
        "EqQBCkgIARABGAIiQM+AKIAIOSFODNN7EXAMPLE/ghp_" + "a" * 40,
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_a_private_key_without_its_end_line_goes_to_the_end_of_its_body() -> None:
    text = 'key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq7BFUpkGp3+rwQ" # cut'
    assert redact(text)[0] == f'key = "{REDACTED}" # cut'


def test_remembered_keys_go_whatever_their_shape_and_shapes_can_be_left_on() -> None:
    remember_secret("corp-gateway-4d9e1f-plain")
    text = f"key corp-gateway-4d9e1f-plain and {GHP}"
    assert redact(text) == (f"key {REDACTED} and {REDACTED}", 2)
    assert redact(text, shapes=False) == (f"key {REDACTED} and {GHP}", 1)


def test_pieces_are_redacted_as_if_whole() -> None:
    whole = f"token {GHP} here\n{PEM}\nid AKIAIOSFODNN7EXAMPLE\nno newline at the end {JWT}"
    for size in (1, 3, 7, 64):
        redactor = StreamRedactor()
        out = "".join(redactor.feed(whole[i : i + size]) for i in range(0, len(whole), size))
        out += redactor.flush()
        assert out == redact(whole)[0], size
        assert GHP not in out and "OPENSSH" not in out and JWT not in out


def test_what_is_held_back_is_bounded() -> None:
    redactor = StreamRedactor(hold_chars=100)
    out = redactor.feed("word " * 50)
    assert len(out) >= 150
    assert redactor.feed("x" * 500) + redactor.flush() != ""


@pytest.mark.parametrize(
    "command",
    [
        "-----BEGIN RSA PRIVATE KEY-----\nrm -rf ~/project\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nrm -rf ~/project",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED; rm -rf ~/project",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA rm -rf ~/project",
    ],
)
def test_text_after_a_begin_line_that_is_no_key_stays_visible(command: str) -> None:
    # An approval ask sent redacted over rpc or acp must still show what would run.
    assert "rm -rf ~/project" in redact(command)[0]
    assert "rm -rf ~/project" in json.loads(redact(json.dumps(command))[0])
