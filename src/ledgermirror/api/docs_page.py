"""``/api/v1/docs``: the interactive API documentation (Swagger UI, from the ``swagger-ui-bundle-v2`` wheel,
which ships its assets, so the page works offline), and ``/api/v1/docs/openapi.json``, the generated document it
reads.

Swagger UI groups the operations by tag in the document's ``tags`` order (the reference's), sorts them by path
within a tag, and its "Try it out" sends the request to this server (the document's server is ``/``). Without
JavaScript the page shows a plain table of every endpoint and parameter instead.
"""

from __future__ import annotations

import html
from typing import Any

import orjson
import swagger_ui_bundle  # type: ignore[import-untyped]  # the wheel has no type information
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

DOCS = "/api/v1/docs"
ASSETS = f"{DOCS}/assets"
"""Swagger UI's own files (``swagger-ui.css``, ``swagger-ui-bundle.js``, icons), served from the wheel."""

_STYLE = (
    "body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1b1f24}"
    ".plain{max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "code{background:#f2f4f7;padding:0 .25rem;border-radius:3px}table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #e3e6ea;padding:.3rem .5rem;text-align:left;vertical-align:top}"
    "h2{margin-top:2.5rem}"
)
_INITIALIZER = """window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "DOCS/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    operationsSorter: "alpha",
    displayRequestDuration: true,
    validatorUrl: null,
  });
});
""".replace("DOCS", DOCS)


def plain_table(document: dict[str, Any]) -> str:
    """Every endpoint with its parameters, for a browser without JavaScript."""
    parts = [
        f"<h1>{html.escape(document['info']['title'])} {html.escape(document['info']['version'])}</h1>",
        f"<p>{html.escape(document['info']['description'])} "
        f"Machine-readable: <a href={DOCS}/openapi.json>openapi.json</a>.</p>",
    ]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            parts.append(f"<h2><code>{method.upper()} {html.escape(path)}</code></h2>")
            parts.append(f"<p>{html.escape(operation['summary'])}. {html.escape(operation['description'])}</p>")
            parts.append("<table><tr><th>Parameter<th>Description<th>Example</tr>")
            for parameter in operation["parameters"]:
                example = html.escape(str(parameter.get("example", "")))
                parts.append(
                    f"<tr><td><code>{html.escape(parameter['name'])}</code><td>"
                    f"{html.escape(parameter.get('description', ''))}<td><code>{example}</code></tr>"
                )
            parts.append("</table>")
    return "".join(parts)


def render_page(document: dict[str, Any]) -> str:
    title = html.escape(document["info"]["title"])
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width, initial-scale=1'><title>{title}</title>"
        f"<link rel=stylesheet href={ASSETS}/swagger-ui.css>"
        f"<link rel=icon type=image/png href={ASSETS}/favicon-32x32.png><style>{_STYLE}</style></head>"
        "<body><div id=swagger-ui></div>"
        f"<noscript><div class=plain>{plain_table(document)}</div></noscript>"
        f"<script src={ASSETS}/swagger-ui-bundle.js charset=UTF-8></script>"
        f"<script src={DOCS}/initializer.js charset=UTF-8></script></body></html>"
    )


def routes(document: dict[str, Any]) -> list[BaseRoute]:
    body = orjson.dumps(document)
    page = render_page(document)
    initializer = _INITIALIZER.encode()

    async def openapi_json(request: Request) -> Response:
        return Response(body, media_type="application/json; charset=utf-8")

    async def docs(request: Request) -> Response:
        return HTMLResponse(page)

    async def initializer_js(request: Request) -> Response:
        return Response(initializer, media_type="text/javascript; charset=utf-8")

    return [
        Route(f"{DOCS}/openapi.json", openapi_json, methods=["GET"]),
        Route(f"{DOCS}/initializer.js", initializer_js, methods=["GET"]),
        Mount(ASSETS, app=StaticFiles(directory=str(swagger_ui_bundle.swagger_ui_path)), name="swagger-ui"),
        Route(DOCS, docs, methods=["GET"]),
    ]
