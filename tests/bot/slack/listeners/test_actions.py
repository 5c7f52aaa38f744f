"""Every button of an approval message is answered: one entry per control, serving its clicks or opening its modal."""

from bot.render import controls
from bot.slack.listeners import actions


def test_every_control_has_one_entry_that_serves_or_opens() -> None:
    assert [each.control for each in actions.ACTIONS] == list(controls.CONTROLS)
    assert all((each.serves is None) != (each.opens is None) for each in actions.ACTIONS)
    assert all(action_id.startswith(actions.PREFIX) for action_id in controls.BUTTONS)
