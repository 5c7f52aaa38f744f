"""The approval message's buttons as specs: one per action, each id carried by one control."""

from bot.domain.records import PolicySummary
from bot.render import controls
from tests.bot.render.test_blocks import request


def test_each_action_id_belongs_to_one_control_and_take_keeps_its_old_claim_id() -> None:
    ids = [action_id for control in controls.CONTROLS for action_id in control.action_ids]
    assert len(ids) == len(set(ids)) == len(controls.ACTION_IDS)
    assert controls.TAKE.action_ids == ("signoff_take", "signoff_claim")


def test_the_buttons_follow_the_controls_order_and_show_only_where_their_rule_says() -> None:
    plain = request(policy=PolicySummary(name="p"))
    shown = [button["action_id"] for button in controls.approval_actions(plain)["elements"]]
    assert shown == ["signoff_approve", "signoff_deny", "signoff_discuss"]
    taking = request(policy=PolicySummary(name="p", claim_pause_s=600))
    shown = [button["action_id"] for button in controls.approval_actions(taking)["elements"]]
    assert shown == ["signoff_approve", "signoff_deny", "signoff_discuss", "signoff_take"]
