"""Issue 9 item 6: the HTTP API under hostile clients and under load.

The API runs as users run it (`factstream api`, a uvicorn subprocess) over real Kafka and
Weaviate, with the deterministic stub LM. Three namespaces hold facts that carry a secret
word each, so any cross-namespace read shows in a response body.

- Auth matrix: every route the app declares (enumerated from it, so a new route cannot be
  missed) against keys that may read, publish, both, neither, or everything, and against
  malformed credentials: the status is the one the grant implies and no response carries a
  secret its key may not read or its request did not ask for.
- Malformed and oversized requests (hypothesis-generated JSON bodies, query strings, ids,
  raw bytes, wrong content types, huge bodies and headers): always 4xx, never 5xx.
- Load: a second process (fixtures/loadgen.py) runs concurrent clients against /v1/ask:
  zero 5xx, zero connection errors, at least 10 answers (200) a second; p50/p95 reported.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from fixtures.hostile import HOSTILE_NAMESPACES, draw_all, seed_facts
from fixtures.stack import Stack, StackFactory, _wait_http
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError
from starlette.routing import Mount, Route

from factstream.access import hash_key
from factstream.api.app import create_app
from factstream.api.schemas import AskBody, DocumentsBody
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document
from factstream_lab.stack.process import free_port, stop_children

T0 = datetime(2023, 1, 1, tzinfo=UTC)
LOADGEN = Path(__file__).parents[1] / "fixtures" / "loadgen.py"
MAX_BODY = 65_536
# The load test's floor of 200 answers per second of load: the reduced run measured 69/s
# (50 clients x 10 s, 2-core machine busy with another suite), a refuse-all API gets 0.
MIN_ANSWERED_PER_S = 10
SECRETS = {"desk": "DESKSECRET", "other": "OTHERSECRET", "third": "THIRDSECRET"}
FACTS = {
    ns: [
        f"{word}: Mike Lawler is a United States representative.",
        f"{word}: Mike Lawler lives in Pearl River.",
        f"{word}: The secret base of Mike Lawler is in Oslo.",
    ]
    for ns, word in SECRETS.items()
}
KEYS: dict[str, dict[str, list[str]]] = {
    "desk-key": {"read": ["desk"], "publish": ["desk"]},
    "other-key": {"read": ["other"], "publish": ["other"]},
    "reader-key": {"read": ["desk"], "publish": []},
    "writer-key": {"read": [], "publish": ["desk"]},
    "admin-key": {"read": ["*"], "publish": []},
    "nothing-key": {"read": [], "publish": []},
}
# Routes anyone may call: they read no namespace.
PUBLIC = {
    "/healthz",
    "/readyz",
    "/metrics",
    "/docs",
    "/docs/oauth2-redirect",
    "/openapi.json",
    "/redoc",
    # The console's pages are empty shells; their data comes from keyed fragments (/ui/f/...).
    "/ui",
    "/ui/facts",
    "/ui/facts/{fact_id}",
    "/ui/documents/{document_id}",
    "/ui/feed",
    "/ui/overview",
    "/ui/static/console.css",
    "/ui/static/console.js",
}
# Keyed routes that name no namespace: every valid key gets 200 and its own view.
NAMESPACE_FREE = {"/ui/f/namespaces"}
# Keyed reads whose allowed answer shows the namespace's facts (so its secret word).
SHOWS_FACTS = {
    "/v1/ask",
    "/v1/facts",
    "/v1/facts/{fact_id}",
    "/ui/f/facts",
    "/ui/f/facts/{fact_id}",
}
BAD_CREDENTIALS: list[dict[str, Any]] = [
    {},
    {"Authorization": "Bearer"},
    {"Authorization": "Basic ZGVzay1rZXk6"},
    {"Authorization": "Token desk-key"},
    {"Authorization": "Bearer wrong-key"},
    {"Authorization": "Bearer desk-key-"},
    {"Authorization": "Bearer DESK-KEY"},
    {"Authorization": b"Bearer d\xd0\xb5sk-key"},
    {"Authorization": "Bearer " + "k" * 4000},
]


@dataclass
class Api:
    url: str
    stack: Stack
    ids: dict[str, dict[str, str]]  # namespace -> fact id -> text

    def client(self, headers: dict[str, Any] | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=headers or {}, timeout=120)

    def keyed(self, key: str) -> httpx.AsyncClient:
        return self.client({"Authorization": f"Bearer {key}"})


def _env() -> dict[str, str]:
    return {
        "FACTSTREAM_API_KEYS": json.dumps({hash_key(k): v for k, v in KEYS.items()}),
        "FACTSTREAM_API_HOST": "127.0.0.1",
        "FACTSTREAM_API_PORT": str(free_port()),
        "FACTSTREAM_API_MIN_SIMILARITY": "-1",
        "FACTSTREAM_API_MAX_BODY_BYTES": str(MAX_BODY),
    }


@asynccontextmanager
async def served(stack_factory: StackFactory) -> AsyncIterator[Api]:
    """Facts in three namespaces and `factstream api` serving them."""
    stack = await stack_factory(**_env())
    ids = await seed_facts(stack, FACTS, T0)
    with (stack.tmp / "api.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "factstream", "api", "--log-level", "warning"],
            env={**os.environ, **stack.env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{stack.env['FACTSTREAM_API_PORT']}"
    try:
        await asyncio.to_thread(_wait_http, f"{url}/healthz", 120)
        yield Api(url, stack, ids)
        # It served everything without dying (uvicorn exits by re-raising the SIGTERM).
        assert proc.poll() is None, (stack.tmp / "api.log").read_text()[-3000:]
    finally:
        stop_children([proc])


def routes(api: Api) -> list[tuple[str, str]]:
    """Every (method, path template) the app serves, included routers walked."""
    return sorted(_walk(create_app(api.stack.settings).routes, ""))


def _walk(found: list[Any], prefix: str) -> Iterator[tuple[str, str]]:
    for route in found:
        included = getattr(route, "original_router", None)  # FastAPI's include_router
        if included is not None:
            yield from _walk(included.routes, prefix + route.include_context.prefix)
            continue
        if isinstance(route, Mount):  # the console's static files: each one a public GET
            for name in sorted(os.listdir(route.app.directory)):  # type: ignore[attr-defined]
                yield "GET", prefix + route.path + "/" + name
            continue
        assert isinstance(route, Route), route
        for method in (route.methods or set()) - {"HEAD"}:
            yield method, prefix + route.path


def requests_for(method: str, path: str, ns: str, api: Api) -> list[dict[str, Any]]:
    """The requests that use ``ns`` through one protected route (KeyError: an unknown route)."""
    ask = {"question": "Where is the secret base of Mike Lawler?", "namespace": ns}
    ids = [i for n in SECRETS for i in api.ids[n]]
    document = {"namespace": ns, "kind": "article", "timestamp": T0.isoformat(), "text": "News."}
    by_route: dict[tuple[str, str], list[dict[str, Any]]] = {
        ("POST", "/v1/ask"): [
            {"url": path, "json": ask},
            {"url": path, "json": {**ask, "top_k": 50, "choices": ["Oslo", "Rome"]}},
            {"url": path, "json": {**ask, "stream": True}},
        ],
        ("GET", "/v1/facts"): [
            {"url": path, "params": {"namespace": ns, "include_false": True, "limit": 500}},
            {"url": path, "params": {"namespace": ns, "q": "secret base Oslo"}},
        ],
        # Every fact id of every namespace, asked for through this one.
        ("GET", "/v1/facts/{fact_id}"): [
            {"url": path.replace("{fact_id}", i), "params": {"namespace": ns}} for i in ids
        ],
        ("POST", "/v1/documents"): [{"url": path, "json": {"documents": [document]}}],
        ("GET", "/ui/f/namespaces"): [{"url": path}] if ns == "desk" else [],
        ("GET", "/ui/f/facts"): [
            {"url": path, "params": {"namespace": ns, "include_false": True}},
            {"url": path, "params": {"namespace": ns, "q": "secret base Oslo"}},
        ],
        ("GET", "/ui/f/facts/{fact_id}"): [
            {"url": path.replace("{fact_id}", i), "params": {"namespace": ns}} for i in ids
        ],
        ("GET", "/ui/f/documents/{document_id}"): [
            {"url": path.replace("{document_id}", "doc-1"), "params": {"namespace": ns}}
        ],
        ("GET", "/ui/f/overview"): [{"url": path, "params": {"namespace": ns}}],
        # Server-sent events that never end: read up to the first event, then hang up.
        ("GET", "/ui/f/feed"): [{"url": path, "params": {"namespace": ns}, "sse": True}],
    }
    return by_route[(method, path)]


@dataclass
class Reply:
    status_code: int
    headers: httpx.Headers
    text: str


async def send(http: httpx.AsyncClient, method: str, request: dict[str, Any]) -> Reply:
    """One request; a server-sent event stream is read up to its first event."""
    request = dict(request)
    if not request.pop("sse", False):
        response = await http.request(method, **request)
        return Reply(response.status_code, response.headers, response.text)
    async with http.stream(method, **request) as response:
        text = ""
        async for chunk in response.aiter_text():
            text += chunk
            if "\n\n" in text:
                break
        return Reply(response.status_code, response.headers, text)


def _action(method: str, path: str) -> str:
    return "publish" if path == "/v1/documents" else "read"


def _allowed(key: str, action: str, ns: str) -> bool:
    granted = KEYS[key][action]
    return "*" in granted or ns in granted


def _leaks(text: str, key: str | None, ns: str) -> list[str]:
    """Secrets in a response that its request may not see."""
    return [
        word
        for owner, word in SECRETS.items()
        if word in text and (owner != ns or key is None or not _allowed(key, "read", owner))
    ]


async def test_auth_matrix_on_every_route_with_zero_cross_namespace_reads(
    stack_factory: StackFactory, figures: Any
) -> None:
    async with served(stack_factory) as api:
        declared = routes(api)
        protected = [(m, p) for m, p in declared if p not in PUBLIC]
        assert {p for _, p in declared} >= PUBLIC - {"/docs/oauth2-redirect", "/redoc"}
        namespaces = ["desk", "other", "third", "Desk", "DESK", "nowhere"]
        checked = Counter[str]()
        for method, path in protected:
            action = _action(method, path)
            for ns in namespaces:
                for request in requests_for(method, path, ns, api):
                    for headers in BAD_CREDENTIALS if ns in ("desk", "other") else []:
                        async with api.client(headers) as http:
                            response = await send(http, method, request)
                        assert response.status_code == 401, (headers, method, request)
                        assert response.headers["www-authenticate"] == "Bearer"
                        assert _leaks(response.text, None, ns) == []
                        checked["401"] += 1
                    for key in KEYS:
                        async with api.keyed(key) as http:
                            response = await send(http, method, request)
                        code = response.status_code
                        assert _leaks(response.text, key, ns) == [], (key, method, request)
                        if path in NAMESPACE_FREE:  # the key's own view: only what it may read
                            assert code == 200, (key, method, request, response.text)
                            shown = {n for n in namespaces if f'value="{n}"' in response.text}
                            assert all(_allowed(key, "read", n) for n in shown), (key, shown)
                            assert ("desk" in shown) == _allowed(key, "read", "desk"), key
                        elif not _allowed(key, action, ns):
                            assert code == 403, (key, method, request, response.text)
                        elif ns not in SECRETS:
                            expected = 202 if action == "publish" else 404
                            assert code == expected or (
                                action == "read" and path not in SHOWS_FACTS and code == 200
                            ), (key, method, request, response.text)
                        else:
                            assert code in (200, 202, 404), (key, method, request, response.text)
                            if code == 404:  # only a fact id of another namespace
                                assert "/facts/" in request["url"], response.text
                                fact_id = request["url"].rsplit("/", 1)[1]
                                assert fact_id not in api.ids[ns]
                            elif path in SHOWS_FACTS:  # an allowed read reads its namespace
                                assert SECRETS[ns] in response.text, (key, request)
                        checked[str(code)] += 1
        for path in PUBLIC & {p for _, p in declared}:
            async with api.client() as http:
                response = await http.get(path)
            assert response.status_code == 200, (path, response.text)
            assert _leaks(response.text, None, "") == [], path
        # Publishing reached Kafka only where the key may publish.
        published = await api.stack.read_topic(TopicName.DOCUMENTS, Document)
        # desk-key and writer-key to desk, other-key to other; nobody anywhere else.
        assert Counter(d.namespace for d in published) == {"desk": 2, "other": 1}
    figures.record(
        "auth_matrix",
        f"{len(protected)} protected routes x {len(namespaces)} namespaces, "
        f"{sum(checked.values())} requests by status {dict(checked)}, 0 cross-namespace reads",
        routes=len(protected),
        namespaces=len(namespaces),
        requests=sum(checked.values()),
        by_status=dict(sorted(checked.items())),
    )


@st.composite
def _ask_bodies(draw: st.DrawFn) -> Any:
    junk = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
        max_leaves=8,
    )
    fields = {
        "question": st.text(max_size=3000) | junk,
        "namespace": st.sampled_from(["desk", "other", *HOSTILE_NAMESPACES]) | junk,
        "as_of": st.text(max_size=40) | st.datetimes().map(str) | junk,
        "top_k": st.integers(-(10**20), 10**20) | junk,
        "choices": st.lists(st.text(max_size=30), max_size=25) | junk,
        "stream": st.booleans() | junk,
        "surprise": junk,
    }
    body = draw(st.fixed_dictionaries({}, optional=fields))
    return draw(st.just(body) | junk | st.lists(st.just(body), max_size=2))


def _malformed_requests(count: int) -> list[dict[str, Any]]:
    """Requests a correct client would not send; each must get a 4xx."""
    text = st.text(max_size=200)
    params = st.dictionaries(
        st.sampled_from(["namespace", "q", "as_of", "include_false", "limit", "cursor", "x"]),
        text | st.integers(-(10**30), 10**30).map(str),
        max_size=6,
    )
    content_types = st.sampled_from(
        [
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin-1",
            "",
        ]
    )
    kinds = st.one_of(
        _ask_bodies().map(lambda b: {"method": "POST", "url": "/v1/ask", "json": b}),
        _ask_bodies().map(lambda b: {"method": "POST", "url": "/v1/documents", "json": b}),
        st.builds(
            lambda body, ctype, url: {
                "method": "POST",
                "url": url,
                "content": body,
                "headers": {"content-type": ctype},
            },
            st.binary(max_size=300),
            content_types,
            st.sampled_from(["/v1/ask", "/v1/documents"]),
        ),
        params.map(lambda p: {"method": "GET", "url": "/v1/facts", "params": p}),
        st.builds(
            lambda fid, p: {"method": "GET", "url": f"/v1/facts/{fid}", "params": p},
            text.filter(lambda s: s not in ("", ".", "..")).map(lambda s: quote(s, safe="")),
            params,
        ),
    )
    return draw_all(kinds, count)


def _fixed_malformed() -> list[dict[str, Any]]:
    ask = {"question": "Where?", "namespace": "desk"}
    big = json.dumps({**ask, "question": "x" * (MAX_BODY + 1)})

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(8):
            yield b" " * (MAX_BODY // 4)

    return [
        {"method": "POST", "url": "/v1/ask", "content": big},
        {"method": "POST", "url": "/v1/ask", "content": chunks},
        {"method": "POST", "url": "/v1/documents", "content": "[" * 30_000 + "]" * 30_000},
        {"method": "POST", "url": "/v1/ask", "content": '{"question": "\xff"}'.encode("latin-1")},
        {"method": "POST", "url": "/v1/ask", "content": b'\xef\xbb\xbf{"question": "q"}'},
        {"method": "POST", "url": "/v1/ask", "content": b'{"top_k": 1e999}'},
        {"method": "POST", "url": "/v1/ask", "content": b'{"top_k": NaN}'},
        {"method": "POST", "url": "/v1/ask", "content": b""},
        {"method": "POST", "url": "/v1/ask", "json": {**ask, "question": "y" * 2001}},
        {"method": "POST", "url": "/v1/ask", "json": {**ask, "as_of": "2023-02-30T00:00:00Z"}},
        {"method": "POST", "url": "/v1/documents", "json": {"documents": [{}] * 1001}},
        {"method": "GET", "url": "/v1/facts", "params": {"namespace": "desk", "q": "q" * 20_000}},
        {"method": "GET", "url": "/v1/facts", "params": {"namespace": "desk", "limit": -1}},
        {"method": "GET", "url": "/v1/facts", "params": {"namespace": "desk", "limit": "1e3"}},
        {"method": "GET", "url": "/v1/facts", "params": {"namespace": "desk", "cursor": "\x00"}},
        {"method": "GET", "url": "/v1/facts", "headers": {"x-junk": "j" * 100_000}},
        {"method": "GET", "url": "/v1/facts/" + "f" * 5000, "params": {"namespace": "desk"}},
        {"method": "DELETE", "url": "/v1/facts"},
        {"method": "PUT", "url": "/v1/ask", "json": ask},
        {"method": "GET", "url": "/v1/ask"},
        {"method": "GET", "url": "/v1/nothing-here"},
        {"method": "GET", "url": "/../../etc/passwd"},
    ]


async def test_malformed_and_oversized_requests_get_4xx_never_5xx(
    stack_factory: StackFactory, scale: Any, figures: Any
) -> None:
    generated = _malformed_requests(scale.pick(3000, 300))
    fixed = _fixed_malformed()
    statuses: Counter[int] = Counter()
    async with served(stack_factory) as api:
        for key in ("desk-key", "admin-key"):
            async with api.keyed(key) as http:
                for request in fixed:
                    response = await _send(http, request)
                    statuses[response.status_code] += 1
                    assert 400 <= response.status_code < 500, (request, response.text[:300])
                    assert _leaks(response.text, key, request_namespace(request)) == []
        async with api.keyed("desk-key") as http:
            for request in generated:
                response = await _send(http, request)
                statuses[response.status_code] += 1
                assert response.status_code < 500, (request, response.text[:300])
                if not _valid_body(request):
                    assert 400 <= response.status_code < 500, (request, response.text[:300])
                assert _leaks(response.text, "desk-key", request_namespace(request)) == []
        async with api.client() as http:
            metrics = (await http.get("/metrics")).text
    assert server_errors(metrics) == 0
    figures.record(
        "malformed_requests",
        f"{len(generated) + 2 * len(fixed)} requests, by status "
        f"{dict(sorted(statuses.items()))}, 0 5xx",
        requests=len(generated) + 2 * len(fixed),
        by_status={str(k): v for k, v in sorted(statuses.items())},
    )


async def _send(http: httpx.AsyncClient, request: dict[str, Any]) -> httpx.Response:
    request = {**request}
    if callable(request.get("content")):
        request["content"] = request["content"]()
    headers = {**http.headers, **request.pop("headers", {})}
    try:
        return await http.request(**request, headers=headers)
    except httpx.RemoteProtocolError as exc:  # the server hung up: no status at all
        raise AssertionError(f"no HTTP answer to {str(request)[:300]}") from exc


def _valid_body(request: dict[str, Any]) -> bool:
    """Whether a generated POST body passes the API's own models (else it must get 4xx)."""
    if "json" not in request:
        return request["method"] == "GET"  # query strings: validity depends on the store
    model = AskBody if request["url"] == "/v1/ask" else DocumentsBody
    try:
        model.model_validate(request["json"])
    except ValidationError:
        return False
    return True


def request_namespace(request: dict[str, Any]) -> str:
    body = request.get("json")
    if isinstance(body, dict) and isinstance(body.get("namespace"), str):
        return str(body["namespace"])
    params = request.get("params") or {}
    return str(params.get("namespace", ""))


def server_errors(metrics: str) -> float:
    """5xx the API counted itself (factstream_api_requests_total by status)."""
    return sum(
        s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
        if s.name == "factstream_api_requests_total" and s.labels["status"].startswith("5")
    )


async def test_load_from_a_second_process_gets_no_5xx(
    stack_factory: StackFactory, scale: Any, tmp_path: Path, figures: Any
) -> None:
    clients, seconds = scale.pick(200, 50), scale.pick(60, 10)
    questions = [
        "Where is the secret base of Mike Lawler?",
        "Where does Mike Lawler live?",
        "Which office does Mike Lawler hold?",
    ]
    bodies = [{"question": q, "namespace": "desk"} for q in questions]
    bodies += [{**b, "choices": ["Oslo", "Pearl River", "Congress"]} for b in bodies]
    (tmp_path / "bodies.json").write_text(json.dumps(bodies))
    async with served(stack_factory) as api:
        out = tmp_path / "stats.json"
        command = [
            sys.executable,
            str(LOADGEN),
            "--url",
            api.url,
            "--key",
            "desk-key",
            "--clients",
            str(clients),
            "--seconds",
            str(seconds),
            "--body",
            str(tmp_path / "bodies.json"),
            "--out",
            str(out),
        ]
        done = await asyncio.to_thread(
            subprocess.run, command, capture_output=True, text=True, timeout=seconds + 300
        )
        assert done.returncode == 0, done.stdout + done.stderr
        async with api.client() as http:
            metrics = (await http.get("/metrics")).text
    stats = json.loads(out.read_text())
    assert stats["requests"] > clients, stats
    # Every request refused with 429 would pass the checks below: the API must also answer.
    assert stats["by_status"].get("200", 0) >= MIN_ANSWERED_PER_S * seconds, stats
    assert stats["server_errors"] == 0 and stats["errors"] == {}, stats
    assert set(stats["by_status"]) <= {"200", "429"}, stats
    assert server_errors(metrics) == 0
    figures.record(
        "load",
        f"{clients} clients for {seconds} s from a second process: "
        f"{stats['requests']} requests, {stats['per_second']}/s, by status {stats['by_status']}, "
        f"p50 {stats['p50_s']} s, p95 {stats['p95_s']} s, p99 {stats['p99_s']} s, 0 5xx",
        clients=clients,
        seconds=seconds,
        **{k: stats[k] for k in ("requests", "per_second", "by_status", "p50_s", "p95_s")},
    )
