"""Local HTTP servers that speak the OpenAI and Anthropic APIs with scripted answers.

    with ScriptedOpenAIServer(["answer 1", Error(429, retry_after=0), Reply("answer 2", finish="length")]) as srv:
        model = OpenAIModel("gpt-4o", settings, base_url=srv.base_url)
        ...
        srv.requests[0].body["messages"], srv.requests[0].headers["authorization"]

Each request to a known endpoint takes the next item of the script:
- a str or Reply: a successful answer (Reply sets finish="length" for a truncated one,
  token counts and the model name);
- Error(status, retry_after=...): an HTTP error in the provider's error format;
- Malformed(body): a 200 whose body is not a readable answer;
- Delay(seconds, then): waits before answering `then` (for client timeouts).
When the script is used up the server answers 418 ("no answers left"), which no client retries.
Every request is recorded (method, path, headers, JSON body) in `requests`.

ScriptedOpenAIServer serves both /v1/chat/completions and /v1/responses (base_url ends
in /v1, as the openai client expects); ScriptedAnthropicServer serves /v1/messages
(base_url is the bare origin, as the anthropic client expects). An Anthropic request that
forces a tool gets a tool_use block when the scripted text is a JSON object.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Union


@dataclass
class Reply:
    text: str
    finish: Literal["stop", "length"] = "stop"
    input_tokens: int | None = None  # default: about a token per 4 characters of the request
    output_tokens: int | None = None  # default: about a token per 4 characters of the text
    model: str | None = None  # default: the model the request named


@dataclass
class Error:
    status: int
    message: str = "scripted error"
    retry_after: float | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Malformed:
    body: str = '{"id": "broken", "choices": ['
    status: int = 200


@dataclass
class Delay:
    seconds: float
    then: "Item" = "late answer"


Item = Union[str, Reply, Error, Malformed, Delay]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or the raw text when it is not JSON


@dataclass
class _Answer:
    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedServer:
    paths: tuple[str, ...] = ()
    url_suffix = ""

    def __init__(self, script: list[Item] | None = None) -> None:
        self.script: deque[Item] = deque(script or [])
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._base_url = ""

    # -- public API -------------------------------------------------------------
    def add(self, *items: Item) -> None:
        with self._lock:
            self.script.extend(items)

    @property
    def remaining(self) -> int:
        return len(self.script)

    @property
    def base_url(self) -> str:
        """The URL to give the client (still known after the server stopped, for messages)."""
        assert self._base_url, "the server was never started (use it in a with block)"
        return self._base_url

    def start(self) -> "ScriptedServer":
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        host, port = self._httpd.server_address[:2]
        self._base_url = f"http://{host}:{port}{self.url_suffix}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ----------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> _Answer:
        try:
            body: Any = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        with self._lock:
            self.requests.append(RecordedRequest(method, path, headers, body))
            if path.split("?")[0] not in self.paths:
                return self.error(_ErrorSpec(404, f"no endpoint {path}"))
            if not self.script:
                return self.error(_ErrorSpec(418, "scripted server: no answers left"))
            item = self.script.popleft()
            self._counter += 1
            serial = self._counter
        return self.answer(item, path, body if isinstance(body, dict) else {}, serial)

    def answer(self, item: Item, path: str, request: dict[str, Any], serial: int) -> _Answer:
        if isinstance(item, Delay):
            time.sleep(item.seconds)
            return self.answer(item.then, path, request, serial)
        if isinstance(item, Error):
            answer = self.error(item)
            if item.retry_after is not None:
                answer.headers["retry-after"] = str(item.retry_after)
            answer.headers.update(item.headers)
            return answer
        if isinstance(item, Malformed):
            return _Answer(item.status, item.body, {"content-type": "application/json"})
        reply = item if isinstance(item, Reply) else Reply(item)
        usage = (
            reply.input_tokens if reply.input_tokens is not None else _tokens(json.dumps(request)),
            reply.output_tokens if reply.output_tokens is not None else _tokens(reply.text),
        )
        model = reply.model or str(request.get("model") or "scripted-model")
        payload = self.success(reply, path, request, model, usage, serial)
        return _Answer(200, json.dumps(payload), {"content-type": "application/json"})

    # -- per API ----------------------------------------------------------------
    def success(self, reply: Reply, path: str, request: dict, model: str, usage: tuple[int, int], serial: int) -> dict:
        raise NotImplementedError

    def error(self, spec: "Error | _ErrorSpec") -> _Answer:
        raise NotImplementedError


@dataclass
class _ErrorSpec:
    status: int
    message: str


class ScriptedOpenAIServer(ScriptedServer):
    paths = ("/v1/chat/completions", "/v1/responses")
    url_suffix = "/v1"

    def success(self, reply, path, request, model, usage, serial):
        if path.startswith("/v1/responses"):
            return _responses_payload(reply, model, usage, serial)
        return _chat_payload(reply, model, usage, serial)

    def error(self, spec):
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(spec.status, "server_error")
        body = {"error": {"message": spec.message, "type": kind, "param": None, "code": kind}}
        return _Answer(spec.status, json.dumps(body), {"content-type": "application/json"})


class ScriptedAnthropicServer(ScriptedServer):
    paths = ("/v1/messages",)
    url_suffix = ""

    def success(self, reply, path, request, model, usage, serial):
        forced = (request.get("tool_choice") or {}).get("type") == "tool"
        tool_input = _json_object(reply.text) if forced else None
        if tool_input is not None:
            block = {"type": "tool_use", "id": f"toolu_{serial:04d}", "name": request["tool_choice"]["name"],
                     "input": tool_input}
        else:
            block = {"type": "text", "text": reply.text}
        stop = "max_tokens" if reply.finish == "length" else ("tool_use" if tool_input is not None else "end_turn")
        return {
            "id": f"msg_{serial:04d}", "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }

    def error(self, spec):
        kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(spec.status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": spec.message}}
        return _Answer(spec.status, json.dumps(body), {"content-type": "application/json"})


def _chat_payload(reply: Reply, model: str, usage: tuple[int, int], serial: int) -> dict:
    return {
        "id": f"chatcmpl-{serial:04d}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{
            "index": 0, "logprobs": None, "finish_reason": reply.finish,
            "message": {"role": "assistant", "content": reply.text, "refusal": None},
        }],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def _responses_payload(reply: Reply, model: str, usage: tuple[int, int], serial: int) -> dict:
    cut = reply.finish == "length"
    return {
        "id": f"resp_{serial:04d}", "object": "response", "created_at": int(time.time()), "model": model,
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "output": [{
            "type": "message", "id": f"msg_{serial:04d}", "role": "assistant",
            "status": "incomplete" if cut else "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }],
        "usage": {
            "input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage),
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = server.handle("POST", self.path, headers, raw)
            data = answer.body.encode()
            try:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout); nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
            pass

    return Handler
