"""The explorer page's server and a real headless Chromium driving it, for tests/test_serve.py: Debian's
`chromium` and `chromium-driver` (`make setup-test` installs them), Selenium from the `test` extra."""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import support
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


@contextmanager
def served(lake: Path) -> Iterator[str]:
    """`python -m loaders.serve --lake LAKE` on a free port, to the block's end: its base URL. The block
    then stops it with Ctrl-C, which ends it in one line (exit 130)."""
    started = support.start(support.module("loaders.serve", "--lake", lake, "--port", "0"))
    assert started.proc.stdout is not None
    line = started.proc.stdout.readline().decode()
    url = re.search(r"http://127\.0\.0\.1:[0-9]+", line)
    assert url is not None, (line, started.finish(5))
    try:
        yield url.group()
    finally:
        done = started.stop(signal.SIGINT, timeout=30)
        assert done.returncode == 130, done
        assert "Traceback" not in done.stderr, done.stderr


@contextmanager
def chromium(downloads: Path) -> Iterator[webdriver.Chrome]:
    """A headless Chromium that saves downloads in `downloads`, to the block's end; its own temporary files
    (a singleton socket it leaves behind) go to a folder of their own, deleted at the end. (That folder's
    path must stay short: a Unix socket's path holds at most 107 bytes, and a pytest folder can be longer.)"""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads)})
    scratch = tempfile.mkdtemp(prefix="bgn-chromium-")
    service = Service(DRIVER, env={**os.environ, "TMPDIR": scratch})
    try:
        driver = webdriver.Chrome(options=options, service=service)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    try:
        driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(scratch, ignore_errors=True)


def downloaded(folder: Path, name: str, timeout: float = 30) -> Path:
    """`folder/name` once Chromium has finished saving it (its `.crdownload` gone)."""
    path = folder / name
    deadline = time.monotonic() + timeout
    while not path.exists() or any(folder.glob("*.crdownload")):
        assert time.monotonic() < deadline, (
            f"no {name} in {folder} after {timeout} s: {sorted(folder.iterdir())}"
        )
        time.sleep(0.1)
    return path


def click_and_load(driver: webdriver.Chrome, element: WebElement, timeout: float = 30) -> None:
    """Click a link or submit button, and return once the page it leads to has loaded. A click returns
    before the navigation ends: reading the page at once could find the old page's rows, stale mid-read."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    wait = WebDriverWait(driver, timeout)
    wait.until(expected_conditions.staleness_of(old))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
