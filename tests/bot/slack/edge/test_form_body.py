"""``form_fields`` gives exactly what ``parse_qsl`` gives, for any body (it is on every click's path)."""

from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.slack.edge.form_body import form_fields

# The characters that mean something to a form decoder, and some that do not.
_TRICKY = st.sampled_from(list("%+&=\\x0123456789abcdefABCDEFgz \t\n\"'{}é€😀\x00\x7f\u200b\ud800"))


def _standard(body: str) -> dict[str, str]:
    return dict(parse_qsl(body, keep_blank_values=True))


@given(st.text(_TRICKY, max_size=60))
@settings(max_examples=3000, deadline=None)
def test_any_text_reads_as_parse_qsl_reads_it(body: str) -> None:
    assert form_fields(body) == _standard(body)


@given(st.dictionaries(st.text(max_size=12), st.text(max_size=40), max_size=4))
@settings(max_examples=1000, deadline=None)
def test_encoded_forms_read_back_as_parse_qsl_reads_them(fields: dict[str, str]) -> None:
    body = urlencode(fields, encoding="utf-8", errors="surrogatepass")
    assert form_fields(body) == _standard(body)


@given(st.binary(max_size=40))
@settings(max_examples=1000, deadline=None)
def test_any_percent_encoded_bytes_read_as_parse_qsl_reads_them(raw: bytes) -> None:
    """Bytes that are not UTF-8 included: both replace them the same way."""
    body = "payload=" + quote(raw, safe="")
    assert form_fields(body) == _standard(body)


@pytest.mark.parametrize(
    "body",
    [
        "payload=%7B%22a%22%3A+1%7D",  # a click's shape
        "a=%zz&b=%4",  # stray escapes stay as they are
        "a=\\x41%41",  # a backslash is text, never an escape
        "a=%5Cx41",  # an escaped backslash followed by 'x41' is that text
        "&&a=1&&",  # empty pairs are skipped
        "novalue&=empty-name&a==b",
        "a=%C3%A9%E2%82",  # a cut multi-byte character
        "a=é%A9",
        "",
    ],
)
def test_edge_cases_read_as_parse_qsl_reads_them(body: str) -> None:
    assert form_fields(body) == _standard(body)


def test_a_click_body_is_decoded_to_its_json() -> None:
    assert form_fields("payload=%7B%22type%22%3A%22block_actions%22%7D") == {"payload": '{"type":"block_actions"}'}
