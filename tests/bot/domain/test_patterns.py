"""The published name patterns say exactly what their validators refuse, character by character, and JSON
Schema's own dialect (ECMA-262, as ``jsonschema_rs`` reads it) agrees with the server on every sample."""

import re
import unicodedata

import jsonschema_rs
import pytest

from bot.domain.patterns import NAME_PATTERN, VISIBLE_NAME_PATTERN

_BASIC_PLANE = [chr(code) for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF]
# Format characters that render as a visible sign (number signs, abbreviation marks): not hidden.
_VISIBLE_FORMATS = {*(chr(code) for code in range(0x0600, 0x0606)), "\u06dd", "\u070f", "\u0890", "\u0891", "\u08e2"}


def _refused_by_name(character: str) -> bool:
    return character.isspace() or unicodedata.category(character) == "Cc"


def _refused_by_visible_name(character: str) -> bool:
    hidden_format = unicodedata.category(character) == "Cf" and character not in _VISIBLE_FORMATS
    return _refused_by_name(character) or hidden_format or "\u2060" <= character <= "\u206f"


@pytest.mark.parametrize(
    ("pattern", "refused"), [(NAME_PATTERN, _refused_by_name), (VISIBLE_NAME_PATTERN, _refused_by_visible_name)]
)
def test_a_pattern_refuses_exactly_the_characters_it_names(pattern: str, refused: object) -> None:
    compiled = re.compile(pattern)
    assert callable(refused)
    wrong = [hex(ord(char)) for char in _BASIC_PLANE if (compiled.fullmatch(char) is None) != refused(char)]
    assert wrong == [], unicodedata.unidata_version


@pytest.mark.parametrize("pattern", [NAME_PATTERN, VISIBLE_NAME_PATTERN])
def test_json_schema_reads_the_pattern_as_the_server_does(pattern: str) -> None:
    schema = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    samples = ["restart_service", "a b", "\u0000", "x\u202ey", "mcp__ops__deploy", "名前", "x\n", "\u00a0", "", "👍"]
    assert [schema.is_valid(sample) for sample in samples] == [
        re.fullmatch(pattern, sample) is not None for sample in samples
    ]
