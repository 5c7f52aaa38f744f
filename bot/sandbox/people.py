"""Who is in the sandbox workspace: one person per role, so one human can play them all."""

from dataclasses import dataclass
from pathlib import Path
from typing import Final

POLICY_FILE: Final = Path(__file__).with_name("policy.yml")
"""The built-in policy naming these people (used unless ``APPROVAL_POLICY`` is set)."""

CHANNEL: Final = "C0SBXOPS"
CHANNEL_NAME: Final = "ops"


@dataclass(frozen=True)
class Person:
    """A sandbox user and the role the page shows next to the name."""

    user_id: str
    name: str
    real_name: str
    role: str


PEOPLE: Final = (
    Person("USBXREQ", "riley", "Riley Requester", "requester"),
    Person("USBXAPPR", "avery", "Avery Approver", "approver"),
    Person("USBXSECOND", "blake", "Blake Approver", "approver"),
    Person("USBXOUTSIDE", "nico", "Nico Bystander", "not an approver"),
    Person("USBXONCALL", "olive", "Olive On-call", "on call"),
)
