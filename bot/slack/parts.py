"""``SlackParts``: what the Slack edge reads of the composition root (``bot.services.Services`` is one).

The edge names the parts it wires into its listeners instead of importing the services that build them, so the
dependency points one way: the services build the edge, the edge never imports them back.
"""

from typing import Protocol

from slack_sdk import WebClient

from bot.domain.clock import Clock
from bot.flow.access import Modals
from bot.flow.attending import Attending
from bot.flow.decisions import DecisionService
from bot.flow.edits import EditFlow
from bot.flow.grants import GrantFlow
from bot.flow.home_queue import HomeQueue
from bot.observe.exposition import WsgiApp
from bot.observe.state_collector import StateCollector
from bot.store.stores import Stores


class SlackParts(Protocol):
    """The owners and flows the app's listeners and its HTTP edge are built from (each listener takes a few)."""

    clock: Clock
    stores: Stores
    slack: WebClient
    decisions: DecisionService
    modals: Modals
    attending: Attending
    edit_flow: EditFlow
    grant_flow: GrantFlow
    home_queue: HomeQueue
    state_metrics: StateCollector
    http_mounts: dict[str, WsgiApp]
