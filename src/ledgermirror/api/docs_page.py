"""``/api/v1/docs`` (an HTML page of endpoints and parameters) and ``/api/v1/docs/openapi.json``."""

from __future__ import annotations

import html
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

_STYLE = (
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}"
    "code{background:#f2f4f7;padding:0 .25rem;border-radius:3px}table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #e3e6ea;padding:.3rem .5rem;text-align:left;vertical-align:top}"
    "h2{margin-top:2.5rem}"
)


def render_page(document: dict[str, Any]) -> str:
    parts = [
        "<!doctype html><html lang=en><meta charset=utf-8>",
        f"<title>{html.escape(document['info']['title'])}</title><style>{_STYLE}</style>",
        f"<h1>{html.escape(document['info']['title'])} {html.escape(document['info']['version'])}</h1>",
        f"<p>{html.escape(document['info']['description'])} "
        "Machine-readable: <a href=/api/v1/docs/openapi.json>openapi.json</a>.</p>",
    ]
    for path, item in document["paths"].items():
        operation = item["get"]
        parts.append(f"<h2><code>GET {html.escape(path)}</code></h2><p>{html.escape(operation['summary'])}. ")
        parts.append(f"{html.escape(operation['description'])}</p>")
        parts.append("<table><tr><th>Parameter<th>Description<th>Example</tr>")
        for parameter in operation["parameters"]:
            example = html.escape(str(parameter.get("example", "")))
            parts.append(
                f"<tr><td><code>{html.escape(parameter['name'])}</code><td>"
                f"{html.escape(parameter.get('description', ''))}<td><code>{example}</code></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def routes(document: dict[str, Any]) -> list[Route]:
    body = orjson.dumps(document)
    page = render_page(document)

    async def openapi_json(request: Request) -> Response:
        return Response(body, media_type="application/json; charset=utf-8")

    async def docs(request: Request) -> Response:
        return HTMLResponse(page)

    return [
        Route("/api/v1/docs/openapi.json", openapi_json, methods=["GET"]),
        Route("/api/v1/docs", docs, methods=["GET"]),
    ]
