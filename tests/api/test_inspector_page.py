"""GET /inspect: the Inspector's page and assets are public (they hold no data), served with a
strict CSP; the API they call still wants a key; nothing refers to another origin."""

from __future__ import annotations

import re

from app.inspector import STATIC
from tests.support.apps import MakeClient
from tests.support.factories import assert_error

KEYS = "acme:key-a"


async def test_the_page_and_assets_need_no_key_but_the_api_does(make_client: MakeClient) -> None:
    client = await make_client(api_keys=KEYS)
    page = await client.get("/inspect")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert '<script type="module" src="/inspect/static/app.js">' in page.text
    modules = sorted(path.name for path in STATIC.glob("*.js"))
    assert {"app.js", "session.js", "virtual.js"} <= set(modules)
    for asset in (*modules, "inspector.css"):
        response = await client.get(f"/inspect/static/{asset}")
        assert response.status_code == 200, asset
    # Every module app.js imports, directly or not, is fetched at once, not one level a trip.
    preloaded = re.findall(r'rel="modulepreload" href="/inspect/static/([\w.-]+)"', page.text)
    assert sorted(preloaded) == [name for name in modules if name != "app.js"]
    assert (await client.get("/inspect/", follow_redirects=False)).status_code == 308
    assert_error(await client.get("/inspect/static/missing.js"), 404, "not_found")
    assert_error(await client.get("/sessions"), 401, "unauthorized")
    assert_error(await client.get("/inspector"), 401, "unauthorized")  # only the prefix is open


# The providers' endpoints, shown in the request tab's curl line (text, never fetched).
PROVIDER_URLS = {
    "https://api.anthropic.com/v1/messages",
    "https://api.openai.com/v1/chat/completions",
    "https://api.openai.com/v1/responses",
    "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
}


def test_the_assets_load_nothing_from_elsewhere() -> None:
    for path in STATIC.iterdir():
        text = path.read_text("utf-8")
        urls = set(re.findall(r"https?://[^\s\"'`]*", text))
        assert urls <= (PROVIDER_URLS if path.name == "request.js" else set()), path.name
        if path.name == "request.js":  # only as the `url` of a provider, never loaded
            assert "fetch(" not in text and "import(" not in text
