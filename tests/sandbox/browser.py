"""Real headless Chromium (Debian's ``chromium``) driven by Playwright, with numbered screenshots per test.

Playwright's own browser download is never used: ``executable_path`` points at the system's Chromium.
"""

import os
import shutil
from pathlib import Path

from playwright.sync_api import Page

SCREENSHOTS = Path(__file__).with_name("screenshots")
CHROMIUM = os.environ.get("SIGNOFF_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Steps:
    """A page, and its screenshots written to ``screenshots/<test>/NN-<step>.png``."""

    def __init__(self, page: Page, folder: Path) -> None:
        self.page = page
        self.folder = folder
        self.count = 0
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    def shot(self, step: str) -> None:
        self.count += 1
        self.page.screenshot(path=str(self.folder / f"{self.count:02d}-{step}.png"))
