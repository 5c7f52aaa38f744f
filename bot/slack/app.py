"""``build_app``: the Bolt app, with nothing created at import time."""

from slack_bolt import App

from bot.services import Services
from bot.settings import Settings
from bot.slack.listeners import approvals, claims, deny, errors, home, requests, thread


def build_app(
    settings: Settings, services: Services, *, token_verification: bool = True, verified_at_edge: bool = False
) -> App:
    """The Slack app over ``services``.

    ``process_before_response=True``: the HTTP response leaves when a listener returns, so
    listeners only ack, write to Redis and queue; Slack calls happen in the worker's outbox or
    in lazy listeners after the response. ``verified_at_edge``: the request guard verifies every
    request before Bolt sees it (``bot.slack.http.guarded_wsgi_app``), so Bolt does not verify again;
    otherwise Bolt verifies signatures itself.
    """
    app = App(
        client=services.slack,
        signing_secret=settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None,
        process_before_response=True,
        request_verification_enabled=not verified_at_edge,
        token_verification_enabled=token_verification,
    )
    errors.register(app, services)
    requests.register(app, services)
    approvals.register(app, services)
    deny.register(app, services)
    thread.register(app, services)
    claims.register(app, services)
    home.register(app, services)
    return app
