"""The secret page in a real browser (issue 21, class 7): headless Chromium
(Debian's `chromium` and `chromium-driver`, driven by selenium) opens the
URL-mode page the agent's `type_secret` asked for, the person types and
submits, the page says it was received, the pane gets the secret, and a
second open says it was used. A form another site's page posts to the same
URL is refused. Skipped, with the reason, when Chromium is not installed.

Until issue 21 the form's own post was refused: the page's
`Referrer-Policy: no-referrer` makes Chromium send `Origin: null`."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import Termpilot, poll
from test_elicitation import VALUE, secret_prompt, serve
from test_person import never_shows, shows
from test_audit import run

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
# Every wait on the browser, generous: the machine is loaded.
BROWSER_WAIT_S = 30

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the skip below says so
    webdriver = None

MISSING = (
    "selenium is not installed (tests/e2e/requirements.txt)"
    if webdriver is None
    else "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    if not (CHROMIUM and CHROMEDRIVER)
    else None
)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium with a profile of its own, quit at the end."""
    profile = tempfile.TemporaryDirectory(prefix="tp-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in CI
        "--disable-gpu",
        "--no-proxy-server",
        "--no-first-run",
        f"--user-data-dir={profile.name}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(BROWSER_WAIT_S)
        driver.set_script_timeout(BROWSER_WAIT_S)
        yield driver
    finally:
        driver.quit()
        profile.cleanup()


class OtherSite:
    """Another site's page (served as `localhost`, the secret page being
    `127.0.0.1`: another site) whose form posts to the secret page's URL;
    with `no_referrer` it hides its origin too, as the secret page does."""

    def __init__(self) -> None:
        self.target = ""
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                no_referrer = self.path.startswith("/no-referrer")
                meta = '<meta name="referrer" content="no-referrer">' if no_referrer else ""
                body = (
                    f"<!doctype html><html><head>{meta}</head><body>"
                    f'<form id="f" method="post" action="{site.target}">'
                    '<input name="secret" value="typed-by-another-site"></form>'
                    '<button id="go" onclick="document.getElementById(\'f\').submit()">go</button>'
                    "</body></html>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://localhost:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def other_site() -> Iterator[OtherSite]:
    site = OtherSite()
    try:
        yield site
    finally:
        site.close()


def text_of_page(driver: Any) -> str:
    return driver.find_element(By.TAG_NAME, "body").text


def wait_for_text(driver: Any, text: str) -> str:
    """The page's text once it shows `text` (a page being replaced by the
    next one is waited through)."""
    seen: list[str] = []

    def shown(d: Any) -> bool:
        seen[:] = [text_of_page(d)]
        return text in seen[0]

    WebDriverWait(driver, BROWSER_WAIT_S, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(shown)
    return seen[0]


class BrowserPerson:
    """A URL-mode elicitation callback: a person who first visits another
    site whose form posts to the page (refused), then opens the page in the
    browser, types the secret and submits it."""

    def __init__(self, driver: Any, other_site: OtherSite) -> None:
        self.driver = driver
        self.other_site = other_site
        self.urls: list[str] = []
        self.seen: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert getattr(params, "mode", None) == "url", params
        self.urls.append(params.url)
        await anyio.to_thread.run_sync(self.use_page, params.url)
        return types.ElicitResult(action="accept")

    def use_page(self, url: str) -> None:
        driver = self.driver
        # Another site's form posting to the page: refused, whether it
        # shows its origin or hides it (Origin: null, as the page's own).
        self.other_site.target = url
        for path in ("/no-referrer", "/plain"):
            driver.get(self.other_site.url(path))
            driver.find_element(By.ID, "go").click()
            self.seen.append(wait_for_text(driver, "Not accepted"))
        # The person opens the page, types and submits.
        driver.get(url)
        self.seen.append(wait_for_text(driver, "Type the secret"))
        field = driver.find_element(By.ID, "secret")
        assert field.get_attribute("type") == "password"
        field.send_keys(VALUE)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        self.seen.append(wait_for_text(driver, "Received"))


def pane_text(tp: Termpilot, pane: str) -> str:
    """The pane as tmux has it (not through termpilot, which redacts)."""
    done = subprocess.run(
        ["tmux", "-L", tp.socket, "capture-pane", "-p", "-t", pane],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return done.stdout


def test_a_person_types_a_secret_on_the_page_in_chromium(tp: Termpilot, browser: Any, other_site: OtherSite) -> None:
    person = BrowserPerson(browser, other_site)

    async def body() -> None:
        async with serve(tp, [], elicitation_callback=person) as client:
            pane = await secret_prompt(client, "vault")
            typed = await client.ok("type_secret", {"pane": pane, "name": "vault_password"})
            assert typed["typed_by_person"] is True and typed["name"] == "vault_password", typed
            # The program printed what it read: the person's value, whole.
            await shows(client, pane, f"got {len(VALUE)} chars: [secret vault_password]")

            async def received() -> bool:
                return f"got {len(VALUE)} chars: {VALUE}" in pane_text(tp, pane)

            await poll(received, 10, "the secret in the pane")
            await never_shows(client, pane, "typed-by-another-site")
            # A second open: the page was used.
            (url,) = person.urls
            await anyio.to_thread.run_sync(browser.get, url)
            again = await anyio.to_thread.run_sync(wait_for_text, browser, "Not available")
            assert "was used or has expired" in again, again

    run(body)
    refused_no_referrer, refused_plain, form, received = person.seen
    assert "This page accepts only its own form" in refused_no_referrer, refused_no_referrer
    assert "This page accepts only its own form" in refused_plain, refused_plain
    assert "vault_password" in form, form
    assert VALUE not in received
