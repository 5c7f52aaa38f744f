"""What ``python -m bot sandbox`` prints (plain text, a terminal)."""


def sandbox_host_refused(host: str) -> str:
    """``python -m bot sandbox --host <not loopback>`` without ``--public``."""
    return (
        f"the sandbox page lets whoever opens it act as any user, so it listens on 127.0.0.1 only; "
        f"to serve it on {host} anyway, add --public"
    )


def sandbox_public_warning(host: str) -> str:
    """Printed when the sandbox serves an address other machines can reach."""
    rule = "!" * 78
    return (
        f"{rule}\nWARNING: the sandbox listens on {host}. Anyone who can reach this address can open the "
        f"page and act as any user: approve, deny, read every thread. Use it on a trusted network only.\n{rule}"
    )


def sandbox_api_hint(api_url: str, key: str) -> str:
    """The sandbox's second line: its HTTP API, a key for it, and a first request to try."""
    return (
        f"HTTP API: {api_url} (key: {key}). Try: curl -s {api_url}approvals -H 'Authorization: Bearer {key}' "
        """-H 'Content-Type: application/json' -d '{"tool": "restart_service", "input": {"service": "checkout"}}'"""
    )
