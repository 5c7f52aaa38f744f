"""``python -m bot`` with nothing configured starts the sandbox; it works end to end and stops cleanly on Ctrl-C."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.render import action_ids as ids
from bot.sandbox.people import CHANNEL
from state.redis_server import find_server_binary
from tests.sandbox.client import APPROVER, REQUESTER, PageClient, buttons

ROOT = Path(__file__).resolve().parents[2]
_SLACK_VARIABLES = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "REDIS_URL", "APPROVAL_POLICY")


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [child for child, ppid in parents.items() if ppid == parent]
        found += kids
        frontier += kids
    return found


def _runs(pid: int, binary: Path) -> bool:
    """Whether ``pid`` executes ``binary`` (whatever its process title says: redis-server, valkey-server)."""
    try:
        return Path(f"/proc/{pid}/exe").resolve() == binary
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("args", [["sandbox", "--port", "0"], []], ids=["sandbox", "default"])
def test_a_fresh_start_serves_the_page_runs_a_request_and_stops_on_ctrl_c(args: list[str]) -> None:
    environment = {key: value for key, value in os.environ.items() if key not in _SLACK_VARIABLES}
    environment.update(LOG_LEVEL="WARNING", SANDBOX_PORT="0", PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as in a terminal: Ctrl-C signals the whole group
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"no URL printed: {line!r}"
        page = PageClient(match.group(0))
        # The child finds the server as the test does: same PATH, same packages.
        server = find_server_binary().resolve()
        redis_children = [pid for pid in _children(process.pid) if _runs(pid, server)]
        assert redis_children, f"the embedded server ({server}) is a child of the sandbox"

        status, body = page.get("/")
        assert status == 200
        assert b"Signoff sandbox" in body
        assert page.get("/static/app.js")[0] == 200

        page.post("message", user=REQUESTER, channel=CHANNEL, text="@signoff restart checkout")
        approval = page.wait_for(
            lambda: next((m for m in page.channel_messages() if ids.APPROVE_ACTION in buttons(m)), None)
        )
        page.post("action", user=APPROVER, channel=CHANNEL, ts=approval["ts"], action_id=ids.APPROVE_ACTION)
        page.wait_for(lambda: not buttons(next(m for m in page.channel_messages() if m["ts"] == approval["ts"])))
        page.wait_for(lambda: any("3 replicas restarted" in m.get("text", "") for m in page.channel_messages()))

        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(20) == 0
        stderr = process.stderr.read() if process.stderr else ""
        assert "Traceback" not in stderr, stderr
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in redis_children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in redis_children), f"{server.name} outlived the sandbox"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
