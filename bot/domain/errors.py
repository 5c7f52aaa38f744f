"""The errors ``bot`` raises: one base, ``SignoffError``, and the families under it.

Each error lives beside the code that raises it and derives from this base (directly or through a
family), so ``except SignoffError`` catches exactly what the bot itself refuses or fails on; an
error that callers also know by a built-in kind keeps it as a second base (``PolicyError`` is a
``ValueError``). ``tests/bot/domain/test_errors.py`` holds that for every module of ``bot``.

- ``SetupError``: the deployment cannot run as configured (``bot.settings.ConfigError``, the policy
  file's ``bot.domain.policy.policy_file.PolicyError``); the message says what to fix.
- ``RefusedRequest``: a request from outside is refused, with an answer for whoever sent it (the HTTP
  API's ``bot.flow.api_requests.AskProblem`` and its other refusals, the sandbox page's
  ``bot.sandbox.workspace.PageError``).
- Directly under the base: stored data that cannot be read back
  (``bot.store.approvals.approval_record.ApprovalDataError``, a token no key opens:
  ``bot.store.workspaces.token_seal.UnopenableSecret``), a workspace without the app
  (``bot.domain.workspaces.NotInstalled``), an outbox entry whose turn has not come
  (``bot.slack.outbound.delivery.NotReady``), the agent's own code failing (``bot.flow.runner.AgentCodeError``),
  options or a form an agent offers with a question that Slack cannot show
  (``bot.domain.question_kinds.QuestionError``, also a ``ValueError``),
  and the API refusing the MCP server's call (``bot.mcp.api_client.ApiError``).
"""


class SignoffError(Exception):
    """The base of every error ``bot`` defines."""


class SetupError(SignoffError):
    """Settings or a policy file the bot cannot run with; the message says what to fix."""


class RefusedRequest(SignoffError):
    """A request from outside the bot is refused; the message is the answer its sender gets.

    Attributes:
        status: The HTTP status it is answered with.
    """

    def __init__(self, message: str, *, status: int = 400) -> None:
        """Keep the message and the status."""
        super().__init__(message)
        self.status = status
