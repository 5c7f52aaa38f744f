"""What the bot's buttons carry is built and read back in one place (``bot.render.action_ids``)."""

from bot.render import action_ids as ids


def test_a_revoke_button_names_the_grant_it_ends() -> None:
    value = ids.revoke_button_value("T1", "C1", "g0123")
    assert ids.parse_revoke_button_value(value) == ("T1", "C1", "g0123")


def test_a_malformed_revoke_value_names_no_grant() -> None:
    assert ids.parse_revoke_button_value("T1") == ("T1", "", "")
