"""Browser tests' shared parts: Debian's chromium driven by Playwright (its own browser builds
are never downloaded), and the git-ignored folder the tests save screenshots in."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# As root in a closed network: no sandbox, and nothing reaching for Google's hosts.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[1] / ".screenshots"


def need_chromium() -> None:
    """In CI (and under `make test`, which installs it) a missing browser fails the run;
    elsewhere the browser tests skip, saying why."""
    if shutil.which(CHROMIUM):
        return
    message = f"Debian's chromium ({CHROMIUM}) is needed: `make test` installs it"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """Debian's chromium, launched by Playwright (skipped or failed as need_chromium says)."""
    from playwright.async_api import async_playwright

    need_chromium()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=False)
    return path
