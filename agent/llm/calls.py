"""Plumbing shared by the HTTP backends: our own retry loop, prices, secret scrubbing.

The SDKs' own retries are switched off (max_retries=0) so that the number of attempts,
the backoff and the honouring of Retry-After are ours, and testable. A server that cannot be
reached at all (connection refused, unknown host, TLS handshake, connect timeout) gets one
quick retry, not the backoff meant for a busy server: waiting does not make it appear.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, TypeVar

import httpx

from agent.configuration import Price
from agent.llm.base import LLMError

T = TypeVar("T")

RETRYABLE_STATUS = {408, 409, 429}  # plus every 5xx
CONNECT_TIMEOUT_S = 10.0  # to open a connection; an answer may take llm_timeout_s


class MalformedBody(Exception):
    """The server answered 2xx with a body that holds no answer (not JSON, wrong shape, failed)."""

    def __init__(self, cause: str, body: str) -> None:
        self.body = body
        super().__init__(cause)


@dataclass
class Failure:
    status: int | None
    cause: str
    transient: bool
    retry_after_s: float | None = None
    body: Any = None
    unreachable: bool = False  # no connection to the server could be opened


@dataclass
class RetryPolicy:
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = 300.0  # a server asking for a longer wait makes us give up
    max_connect_retries: int = 1  # for a server that cannot be reached
    connect_retry_s: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry_number: int, retry_after_s: float | None) -> float:
        """Exponential backoff with jitter (half to full step), never shorter than Retry-After."""
        step = min(self.backoff_max_s, self.backoff_base_s * (2**retry_number))
        jittered = step * (0.5 + 0.5 * self.rng.random())
        return max(jittered, retry_after_s or 0.0)


def client_timeout(settings: Any) -> httpx.Timeout:
    """The client's timeouts: llm_timeout_s for an answer, at most CONNECT_TIMEOUT_S to connect."""
    total = settings.llm_timeout_s
    return httpx.Timeout(total, connect=min(CONNECT_TIMEOUT_S, total))


def retry_policy(settings: Any, backoff_base_s: float | None, sleep: Callable[[float], None]) -> RetryPolicy:
    """The policy from the configuration; an explicit backoff base (tests) wins over it."""
    if backoff_base_s is None:
        # `llm_retry_backoff_s` is a requested Settings field; until it exists the default applies.
        backoff_base_s = float(getattr(settings, "llm_retry_backoff_s", 1.0))
    return RetryPolicy(max_retries=settings.llm_max_retries, backoff_base_s=backoff_base_s, sleep=sleep)


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from retry-after-ms or Retry-After (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: Exception, sdk: ModuleType) -> Failure | None:
    """Map an SDK exception (openai or anthropic: same shapes) to a Failure; None = not ours."""
    if isinstance(exc, MalformedBody):
        return Failure(200, str(exc), transient=True, body=exc.body[:2000])
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        transient = status in RETRYABLE_STATUS or status >= 500
        body = _json_or_text(exc.response)
        return Failure(status, _status_cause(exc, body), transient, retry_after_seconds(exc.response.headers), body)
    if isinstance(exc, sdk.APIConnectionError) and isinstance(exc.__cause__, (httpx.ConnectError, httpx.ConnectTimeout)):
        what = "timed out" if isinstance(exc.__cause__, httpx.ConnectTimeout) else "failed"
        return Failure(None, f"cannot reach {exc.request.url}: connection {what}: {exc.__cause__ or 'no detail'}",
                       transient=False, unreachable=True)
    if isinstance(exc, sdk.APITimeoutError):
        return Failure(None, "request timed out", transient=True)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure(None, f"connection failed: {cause}", transient=True)
    if isinstance(exc, sdk.APIError):
        return Failure(None, str(exc), transient=False)
    return None


def _json_or_text(response: Any) -> Any:
    try:
        return response.json()
    except Exception:  # noqa: BLE001 - any unreadable error body is kept as text
        return response.text[:2000]


def _status_cause(exc: Exception, body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return getattr(exc, "message", None) or str(exc)


def with_retries(
    send: Callable[[], T],
    *,
    provider: str,
    sdk: ModuleType,
    policy: RetryPolicy,
    request: dict[str, Any],
    on_retry: Callable[[Failure, float], None] | None = None,
) -> T:
    """Call `send` until it succeeds, retrying transient failures up to policy.max_retries times."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return send()
        except Exception as exc:  # noqa: BLE001 - classified below, foreign exceptions re-raised
            failure = classify(exc, sdk)
            if failure is None:
                raise
        retries_done = attempt - 1
        too_long = failure.retry_after_s is not None and failure.retry_after_s > policy.max_retry_after_s
        if failure.unreachable:
            give_up = retries_done >= min(policy.max_retries, policy.max_connect_retries)
        else:
            give_up = not failure.transient or retries_done >= policy.max_retries or too_long
        if give_up:
            cause = failure.cause
            if too_long:
                cause += f" (server asks to wait {failure.retry_after_s:.0f} s; more than {policy.max_retry_after_s:.0f} s)"
            raise LLMError(
                provider, cause, status=failure.status, transient=failure.transient, attempts=attempt,
                unreachable=failure.unreachable, request=request, response={"status": failure.status, "body": failure.body},
            ) from None
        wait = policy.connect_retry_s if failure.unreachable else policy.delay(retries_done, failure.retry_after_s)
        if on_retry:
            on_retry(failure, wait)
        policy.sleep(wait)


def price_for(models: list[str], prices: dict[str, Price]) -> tuple[str, Price] | None:
    """Exact name first, else the longest price-table key that prefixes a name (dated versions)."""
    for name in models:
        if name in prices:
            return name, prices[name]
    for name in models:
        keys = [k for k in prices if name.startswith(k + "-") or name.startswith(k + "@")]
        if keys:
            key = max(keys, key=len)
            return key, prices[key]
    return None


def cost_of(models: list[str], input_tokens: int, output_tokens: int, prices: dict[str, Price]) -> tuple[float, str | None]:
    """Cost in USD and, where the model has no price, a note saying it counted as 0."""
    found = price_for([m for m in models if m], prices)
    if found is None:
        return 0.0, f"no price for model {models[0]!r} in the price table; its cost counts as 0"
    _, price = found
    cost = (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6
    return cost, None


def scrub(data: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    """The same JSON data with every secret value replaced (defence in depth for traces)."""
    secrets = [s for s in secrets if s and len(s) >= 4]
    if not secrets:
        return data
    text = json.dumps(data)
    if not any(s in text for s in secrets):
        return data
    for secret in secrets:
        text = text.replace(json.dumps(secret)[1:-1], "***")
    return json.loads(text)


def parse_json_body(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedBody(f"unreadable response body: not JSON ({exc.msg} at position {exc.pos})", text) from None
    if not isinstance(data, dict):
        raise MalformedBody(f"unreadable response body: a JSON {type(data).__name__}, not an object", text)
    return data
