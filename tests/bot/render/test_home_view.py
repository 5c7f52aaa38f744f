"""App Home as Block Kit: the queue, standing approvals and recent decisions, within the tab's 100 blocks."""

from datetime import UTC, datetime, timedelta

from slack_sdk.models.views import View

from bot.domain.edits import CallEdit
from bot.domain.grants import Grant, ListedGrant
from bot.domain.progress import Progress
from bot.render.home_view import home_view
from tests.bot.render.test_blocks import all_texts, decision, request

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def test_app_home_shows_five_standing_approvals_then_how_many_more_within_slacks_100_blocks() -> None:
    grants = [
        ListedGrant(
            Grant(
                grant_id=f"g{index}", team_id="T1", channel_id="C1", rule="r", tool="deploy",
                tool_input={"n": index}, digest="d", terms="t", requester=None, granted_by="U1",
                granted_at=NOW, expires_at=NOW + timedelta(hours=1), granted_ms=0, approval_id="a",
            ),
            index,
        )
        for index in range(8)
    ]  # fmt: skip
    view = home_view(queue=[], recent=[], now=NOW, grants=grants)
    revokes = [block for block in view["blocks"] if "accessory" in block]
    assert len(revokes) == 5
    assert "…and 3 more" in str(view["blocks"])
    assert len(view["blocks"]) <= 100


def test_a_full_queue_and_recent_decisions_stay_within_the_tab() -> None:
    queue = [(request(approval_id=f"a{index}"), Progress(level=1)) for index in range(40)]
    recent = [(request(tool="deploy", tool_input={"env": "<!channel>"}), decision("approve"))] * 20
    view = home_view(queue=queue, recent=recent, now=NOW)
    assert len(view["blocks"]) <= 100
    assert View(**view).to_dict() == view
    texts = all_texts(view)
    assert "…and 25 more, oldest first above." in texts
    assert "escalation level 1" in texts
    assert texts.count('`deploy` `{"env":"&lt;!channel&gt;"}`: ✅ Approved by <@U_OPS>') == 10


def test_edited_requests_show_their_edit_and_the_queue_still_fits_the_tab() -> None:
    edit = CallEdit(input={"service": "checkout", "replicas": 2}, digest="d", edited_by="U_ED", edited_at=NOW)
    queue = [(request(approval_id=f"a{index}"), Progress(edit=edit)) for index in range(40)]
    recent = [(request(), decision("approve"))] * 20
    grants = [
        ListedGrant(
            Grant(
                grant_id=f"g{index}", team_id="T1", channel_id="C1", rule="r", tool="deploy", tool_input={},
                digest="d", terms="t", requester=None, granted_by="U1", granted_at=NOW,
                expires_at=NOW + timedelta(hours=1), granted_ms=0, approval_id="a",
            ),
            0,
        )
        for index in range(8)
    ]  # fmt: skip
    view = home_view(queue=queue, recent=recent, now=NOW, grants=grants)
    assert len(view["blocks"]) <= 100
    assert View(**view).to_dict() == view
    texts = all_texts(view)
    assert texts.count("Edited by <@U_ED>") == 12  # 6 blocks each within the queue's 75
    assert "- replicas: 3\n+ replicas: 2" in texts
    assert "…and 28 more, oldest first above." in texts


def test_a_grant_whose_revoke_is_not_finished_says_so_and_keeps_its_revoke_button() -> None:
    """Issue #42: it showed as an ordinary live grant, as if nobody had pressed Revoke."""
    grant = Grant(
        grant_id="g1", team_id="T1", channel_id="C1", rule="r", tool="deploy", tool_input={}, digest="d", terms="t",
        requester=None, granted_by="U1", granted_at=NOW, expires_at=NOW + timedelta(hours=1), granted_ms=0,
        approval_id="a",
    )  # fmt: skip
    view = home_view(queue=[], recent=[], now=NOW, grants=[ListedGrant(grant, 2, revoking=True), ListedGrant(grant, 1)])
    assert View(**view).to_dict() == view
    revoking, live = [block for block in view["blocks"] if "accessory" in block]
    assert "*Revoking…* not finished" in revoking["text"]["text"]
    assert "Press Revoke again, or Signoff finishes it on its own." in revoking["text"]["text"]
    assert "Revoking" not in live["text"]["text"]
    assert revoking["accessory"]["text"]["text"] == live["accessory"]["text"]["text"] == "Revoke"
