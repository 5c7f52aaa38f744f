"""The bot's Slack client: ``KeepAliveWebClient`` that counts each failed call (``signoff_slack_api_errors_total``)."""

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from bot.observe import metrics
from bot.slack.outbound.web_client import KeepAliveWebClient


class MeteredWebClient(KeepAliveWebClient):
    """Counts failed Web API calls by method and error, then raises as ``WebClient`` does."""

    def api_call(self, api_method: str, **kwargs: Any) -> SlackResponse:
        """Call ``api_method`` as ``WebClient`` does, counting a Slack error or a lost connection, then raising it."""
        try:
            return super().api_call(api_method, **kwargs)
        except SlackApiError as error:
            response = error.response
            code = response.get("error") if isinstance(response.data, dict) else None
            metrics.slack_api_failed(method=api_method, error=str(code or f"http_{response.status_code}"))
            raise
        except OSError:  # DNS, refused connection, timeout (urllib's errors are OSErrors)
            metrics.slack_api_failed(method=api_method, error="unreachable")
            raise
