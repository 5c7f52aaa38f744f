"""``build_app``: the Bolt app, with nothing created at import time."""

import logging
from collections.abc import Callable
from typing import Any, Final, cast

from slack_bolt import App
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

from bot.services import Services
from bot.settings import Settings
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
from bot.slack.oauth import InstalledAuthorize, oauth_settings
from bot.store.oauth_states import OAuthStates

# Every listener module of the app, in the order Bolt tries them (the uninstall ones go first, in OAuth mode). An
# approval message's buttons are ``actions``' (one entry each); any other ``signoff_`` button is answered last.
_LISTENERS: Final[tuple[Callable[[App, Services], None], ...]] = (
    failures.register,
    requests.register,
    actions.register,
    deny.register,
    questions.register,
    choices.register,
    edits.register,
    thread.register,
    grants.register,
    similar_grants.register,
    home.register,
    actions.register_unknown,
)


def build_app(
    settings: Settings, services: Services, *, token_verification: bool = True, verified_at_edge: bool = False
) -> App:
    """The Slack app over ``services``.

    ``process_before_response=True``: the HTTP response leaves when a listener returns, so
    listeners only ack, write to Redis and queue; Slack calls happen in the worker's outbox or
    in lazy listeners after the response. ``verified_at_edge``: the request guard verifies every
    request before Bolt sees it (``bot.slack.http.guarded_wsgi_app``), so Bolt does not verify again;
    otherwise Bolt verifies signatures itself.

    In OAuth mode (``Settings.oauth``) the app serves every workspace it is installed in: Bolt's install flow
    (``bot.slack.oauth``) keeps installations in Redis, each request runs with its workspace's token, and an
    uninstall ends that workspace's pending requests.
    """
    _quiet_same_token_warning()
    signing_secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    workspaces: dict[str, Any] = {"token_verification_enabled": token_verification}
    if settings.oauth:
        states = OAuthStates(services.stores.redis)
        workspaces = {
            "oauth_settings": oauth_settings(settings, installations=services.stores.installations, states=states),
            # Bolt's annotation names a function; an ``Authorize`` instance is what it takes as is.
            "authorize": cast(Callable[..., AuthorizeResult], InstalledAuthorize(services.stores.installations)),
        }
    app = App(
        client=services.slack,
        signing_secret=signing_secret,
        process_before_response=True,
        request_verification_enabled=not verified_at_edge,
        **workspaces,
    )
    for register in (installs.register, *_LISTENERS) if settings.oauth else _LISTENERS:
        register(app, services)
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
