"""The Strands records' keys: one builder, refusing ids that would break the session's hash tag."""

import pytest

from agent.strands_bridge import strands_key

SID = "T0TEST:C0OPS:1700000000.000100"


def test_keys_refuse_ids_that_would_break_the_hash_tag() -> None:
    with pytest.raises(ValueError, match="braces"):
        strands_key("a}b", "session")
    with pytest.raises(ValueError, match="agent_id"):
        strands_key(SID, "agent", "x y")
    with pytest.raises(ValueError, match="kind"):
        strands_key(SID, "other", "default")
