"""``build_app``: the Bolt app, with nothing created at import time."""

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

from bot.settings import Settings
from bot.slack.edge.oauth import InstalledAuthorize, oauth_settings
from bot.slack.listeners import (
    actions,
    choices,
    deny,
    edits,
    failures,
    grants,
    home,
    installs,
    questions,
    requests,
    similar_grants,
    thread,
)
from bot.slack.parts import SlackParts
from bot.store.workspaces.oauth_states import OAuthStates


def _listeners(parts: SlackParts) -> tuple[Callable[[App], None], ...]:
    """Every listener module of the app, each given what it uses, in the order Bolt tries them.

    An approval message's buttons are ``actions``' (one entry each); any other ``signoff_`` button is answered last.
    """
    stores, decisions, modals = parts.stores, parts.decisions, parts.modals
    outbox, deliveries = stores.outbox, stores.event_deliveries
    return (
        partial(failures.register, outbox=outbox, event_deliveries=deliveries),
        partial(requests.register, jobs=stores.jobs, event_deliveries=deliveries, outbox=outbox),
        partial(actions.register, parts=parts),
        partial(deny.register, decisions=decisions, modals=modals),
        partial(questions.register, decisions=decisions, modals=modals, outbox=outbox),
        partial(choices.register, decisions=decisions, outbox=outbox),
        partial(edits.register, flow=parts.edit_flow, decisions=decisions, modals=modals, outbox=outbox),
        partial(
            thread.register, approvals=stores.approvals, decisions=decisions, event_deliveries=deliveries, outbox=outbox
        ),
        partial(grants.register, flow=parts.grant_flow, trusts=stores.trusts, audit=stores.audit, outbox=outbox),
        partial(similar_grants.register, flow=parts.grant_flow, decisions=decisions, modals=modals, outbox=outbox),
        partial(
            home.register,
            home_viewers=stores.home_viewers,
            outbox=outbox,
            home_queue=parts.home_queue,
            clock=parts.clock,
        ),
        partial(actions.register_unknown, outbox=outbox),
    )


def build_app(
    settings: Settings, parts: SlackParts, *, token_verification: bool = True, verified_at_edge: bool = False
) -> App:
    """The Slack app over ``parts`` (the services: each listener is handed the few it uses).

    ``process_before_response=True``: the HTTP response leaves when a listener returns, so
    listeners only ack, write to Redis and queue; Slack calls happen in the worker's outbox or
    in lazy listeners after the response. ``verified_at_edge``: the request guard verifies every
    request before Bolt sees it (``bot.slack.edge.http.guarded_wsgi_app``), so Bolt does not verify again;
    otherwise Bolt verifies signatures itself.

    In OAuth mode (``Settings.oauth``) the app serves every workspace it is installed in: Bolt's install flow
    (``bot.slack.edge.oauth``) keeps installations in Redis, each request runs with its workspace's token, and an
    uninstall ends that workspace's pending requests.
    """
    _quiet_same_token_warning()
    signing_secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    workspaces: dict[str, Any] = {"token_verification_enabled": token_verification}
    if settings.oauth:
        states = OAuthStates(parts.stores.redis)
        workspaces = {
            "oauth_settings": oauth_settings(settings, installations=parts.stores.installations, states=states),
            # Bolt's annotation names a function; an ``Authorize`` instance is what it takes as is.
            "authorize": cast(Callable[..., AuthorizeResult], InstalledAuthorize(parts.stores.installations)),
        }
    app = App(
        client=parts.slack,
        signing_secret=signing_secret,
        process_before_response=True,
        request_verification_enabled=not verified_at_edge,
        **workspaces,
    )
    if settings.oauth:  # the uninstall listeners go first
        installs.register(app, owed=parts.stores.owed_uninstalls, event_deliveries=parts.stores.event_deliveries)
    for register in _listeners(parts):
        register(app)
    return app


class _SameTokenWarning(logging.Filter):
    """Drops Bolt's start-up warning that ``SLACK_BOT_TOKEN`` goes unused because a client was given.

    The client is built from that same token (``bot.settings``), so the warning, printed at every start
    of every process, would only teach operators to ignore warnings.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def _quiet_same_token_warning() -> None:
    bolt_logger = logging.getLogger("slack_bolt.App")
    if not any(isinstance(each, _SameTokenWarning) for each in bolt_logger.filters):
        bolt_logger.addFilter(_SameTokenWarning())
