"""``views.*``: modals opened and updated, App Home tabs published (``hash`` checked as Slack does)."""

import copy

from bot.sandbox.slack_api.methods import JsonDict, MethodTable
from bot.sandbox.slack_api.records import SlackError
from bot.sandbox.slack_api.state import WorkspaceState


def open_view(state: WorkspaceState, args: JsonDict) -> JsonDict:
    if not args.get("trigger_id"):
        raise SlackError("invalid_arguments")
    return {"view": copy.deepcopy(state.store_view(args.get("view")))}


def update(state: WorkspaceState, args: JsonDict) -> JsonDict:
    previous: JsonDict | None = None
    if args.get("view_id"):
        previous = state.views.get(str(args["view_id"]))
    elif args.get("external_id"):
        previous = next((v for v in state.views.values() if v["external_id"] == args["external_id"]), None)
    if previous is None:
        raise SlackError("not_found")
    if args.get("hash") and args["hash"] != previous["hash"]:
        raise SlackError("hash_conflict")
    return {"view": copy.deepcopy(state.store_view(args.get("view"), view_id=previous["id"], previous=previous))}


def publish(state: WorkspaceState, args: JsonDict) -> JsonDict:
    user_id = str(args.get("user_id") or "")
    if user_id not in state.users:
        raise SlackError("user_not_found")
    previous_id = state.home_views.get(user_id)
    previous = state.views.get(previous_id) if previous_id else None
    if previous is not None and args.get("hash") and args["hash"] != previous["hash"]:
        raise SlackError("hash_conflict")
    view = state.store_view(args.get("view"), view_id=previous_id, previous=previous)
    state.home_views[user_id] = view["id"]
    return {"view": copy.deepcopy(view)}


METHODS: MethodTable = {"views.open": open_view, "views.update": update, "views.publish": publish}
