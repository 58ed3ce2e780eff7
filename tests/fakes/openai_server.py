"""FakeOpenAI: a strict OpenAI-compatible HTTP server on 127.0.0.1, in a thread, for tests.

It serves ``POST /v1/embeddings`` and ``POST /v1/chat/completions`` and takes more routes
through ``route(path, handler)``. Like the real service it insists on a bearer key, rejects
unknown model names, unknown request fields and malformed input with OpenAI-shaped 4xx errors,
and can be scripted to fail::

    with FakeOpenAI() as fake:
        fake.fail_next(500)                     # the next request gets HTTP 500
        fake.fail_next(429, retry_after="1")    # then a 429 with Retry-After
        fake.delay_next(2.0)                    # then a 2 s pause before the normal answer
        fake.chat_reply('{"facts": []}')        # what the next chat completion says
        fake.require_system_prompt(PROMPT)      # chat requests must start with exactly this
        ...
        fake.requests                           # every request received, in order

Scripted answers are only given to requests that pass authentication and validation, so a
script can never hide a malformed request. Chat completions answer only from the queue filled
by ``chat_reply``: an empty queue is an error, nothing is invented. A scripted failure does not
use up a queued reply.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import secrets
import ssl
import struct
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: name -> (native dimensions, accepts the ``dimensions`` request field)
EMBEDDING_MODELS: dict[str, tuple[int, bool]] = {
    "text-embedding-3-small": (1536, True),
    "text-embedding-3-large": (3072, True),
    "text-embedding-ada-002": (1536, False),
    "nomic-embed-text": (768, False),
}
EMBEDDING_FIELDS = {"model", "input", "encoding_format", "dimensions", "user"}
MAX_EMBEDDING_INPUTS = 2048
#: chat models the fake knows
CHAT_MODELS = {"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "llama3.1:8b"}
#: request fields the fake accepts (a subset of OpenAI's), with their JSON types
CHAT_FIELDS: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "messages": (list,),
    "temperature": (int, float),
    "top_p": (int, float),
    "max_tokens": (int,),
    "max_completion_tokens": (int,),
    "response_format": (dict,),
    "n": (int,),
    "stop": (str, list, type(None)),
    "seed": (int,),
    "user": (str,),
    "stream": (bool,),
    "presence_penalty": (int, float),
    "frequency_penalty": (int, float),
}
CHAT_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
MESSAGE_FIELDS = {"role", "content", "name", "tool_calls", "tool_call_id", "refusal"}
INPUT_INVALID = (
    "'$.input' is invalid. Please check the API reference: "
    "https://platform.openai.com/docs/api-reference."
)


class ApiError(Exception):
    """An OpenAI-shaped error answer: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type, "param": param, "code": code}}


@dataclass
class RecordedRequest:
    """One request as received: headers with lower-case names, the raw body, and the client's
    (host, port): requests over one kept-alive connection share it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    peer: tuple[str, int] = ("", 0)

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Scripted:
    """A scripted answer: ``body`` None means the route's normal answer (after ``delay``)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class ChatReply:
    """A scripted chat completion: ``content`` and optional ``usage`` / ``finish_reason``."""

    content: str | None
    usage: dict[str, int] | None = None
    finish_reason: str = "stop"


#: ``handler(fake, request, json_body)`` validates and returns the JSON answer, or a callable
#: making it, called only when the answer is really sent (not replaced by a scripted failure).
Handler = Callable[["FakeOpenAI", RecordedRequest, Any], Any]


class FakeOpenAI:
    """The fake server. ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        embedding_models: dict[str, tuple[int, bool]] | None = None,
        chat_models: set[str] | None = None,
        keep_alive: bool = False,
        tls: bool = False,
    ) -> None:
        """``keep_alive``: answer in HTTP/1.1 and keep connections open, as real servers do
        (the default, HTTP/1.0, closes each connection after one answer). ``tls``: serve
        https with a self-signed certificate for 127.0.0.1 made on start (``ca_file``: trust
        it, e.g. through ``SSL_CERT_FILE``)."""
        self.keep_alive = keep_alive
        self.tls = tls
        self.ca_file = ""
        self._tls_dir: Any = None
        self.api_key = api_key or f"sk-fake-{secrets.token_hex(12)}"
        self.embedding_models = dict(embedding_models or EMBEDDING_MODELS)
        self.chat_models = set(chat_models or CHAT_MODELS)
        self.requests: list[RecordedRequest] = []
        self.responses: deque[Scripted] = deque()
        self.chat_replies: deque[ChatReply] = deque()
        self.system_prompts: tuple[str, ...] = ()
        self.routes: dict[str, Handler] = {
            "/v1/embeddings": embeddings_handler,
            "/v1/chat/completions": chat_handler,
        }
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        fake = self

        class RequestHandler(_RequestHandler):
            server_fake = fake
            protocol_version = "HTTP/1.1" if fake.keep_alive else "HTTP/1.0"
            # A kept-alive connection with Nagle on waits for the client's delayed ACK (40 ms)
            # before the body follows the headers; real servers (uvicorn, nginx) set
            # TCP_NODELAY.
            disable_nagle_algorithm = fake.keep_alive

        server = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
        if self.tls:
            server.socket = self._tls_context().wrap_socket(server.socket, server_side=True)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def _tls_context(self) -> ssl.SSLContext:
        """A server context with a fresh self-signed P-256 certificate for 127.0.0.1."""
        import datetime as dt
        import ipaddress
        import tempfile

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False,
            )
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        self._tls_dir = tempfile.TemporaryDirectory(prefix="fake-openai-tls-")
        cert_file = f"{self._tls_dir.name}/cert.pem"
        key_file = f"{self._tls_dir.name}/key.pem"
        with open(cert_file, "wb") as handle:
            handle.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(key_file, "wb") as handle:
            handle.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.ca_file = cert_file
        return context

    def stop(self) -> None:
        self._stopping.set()  # wakes scripted delays
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._tls_dir is not None:
            self._tls_dir.cleanup()
            self._tls_dir = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scripting -------------------------------------------------------------------------

    def route(self, path: str, handler: Handler) -> None:
        """Serve ``POST path`` with ``handler(fake, request, json_body)`` -> JSON answer."""
        self.routes[path] = handler

    def fail_next(
        self,
        status: int,
        count: int = 1,
        *,
        retry_after: str | None = None,
        message: str | None = None,
    ) -> None:
        """The next ``count`` valid requests get ``status`` with an OpenAI-shaped error."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        body = ApiError(status, message or f"Scripted failure ({status})", type=kind).body
        for _ in range(count):
            self.responses.append(Scripted(status=status, body=body, headers=headers))

    def delay_next(self, seconds: float, count: int = 1) -> None:
        """The next ``count`` valid requests are answered normally after ``seconds``."""
        for _ in range(count):
            self.responses.append(Scripted(delay=seconds))

    def respond_next(
        self, body: Any, *, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        """The next valid request gets ``body`` (JSON-encoded unless bytes) as it is."""
        self.responses.append(Scripted(status=status, body=body, headers=headers or {}))

    def chat_reply(
        self,
        content: str | None,
        *,
        usage: dict[str, int] | None = None,
        finish_reason: str = "stop",
    ) -> None:
        """Queue what the next valid chat completion answers. ``usage`` (``prompt_tokens``,
        ``completion_tokens``) defaults to word counts of the request and of ``content``."""
        with self._lock:
            self.chat_replies.append(ChatReply(content, usage, finish_reason))

    def require_system_prompt(self, *texts: str) -> None:
        """Chat requests must start with a system message whose content is one of ``texts``
        (400 otherwise); no argument lifts the requirement."""
        self.system_prompts = texts

    def post(self, path: str, body: Any, *, key: str | None = None) -> tuple[int, Any]:
        """(status, decoded JSON) of a raw ``POST base_url/path``, for tests of the fake itself."""
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            f"{self.base_url}/{path}", data=json.dumps(body).encode(), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, json.loads(exc.read())

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- answers ---------------------------------------------------------------------------

    def embedding_for(self, model: str, text: str, dimensions: int) -> list[float]:
        """The deterministic vector served for ``text``: a sum of one seeded Gaussian vector
        per word, so texts sharing words are similar. Not unit length, like some servers'."""
        words = re.findall(r"\w+", text.lower()) or [text]
        vector = [0.0] * dimensions
        for word in words:
            seed = hashlib.sha256(f"{model}\0{word}".encode()).digest()
            rng = random.Random(seed)
            for i in range(dimensions):
                vector[i] += rng.gauss(0.0, 1.0)
        return [round(v, 6) for v in vector]

    def _handle(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
        peer: tuple[str, int] = ("", 0),
    ) -> Any:
        """(status, headers, body bytes, delay) for one request."""
        request = RecordedRequest(method=method, path=path, headers=headers, body=body, peer=peer)
        with self._lock:
            self.requests.append(request)
        try:
            handler = self.routes.get(path)
            if handler is None:
                raise ApiError(404, f"Invalid URL ({method} {path})")
            if method != "POST":
                raise ApiError(405, f"Method {method} not allowed for {path}")
            self._authenticate(headers)
            payload = self._parse(headers, body)
            answer = handler(self, request, payload)
            with self._lock:
                scripted = self.responses.popleft() if self.responses else None
            if scripted is not None and scripted.body is not None:
                return scripted.status, scripted.headers, _encode(scripted.body), scripted.delay
            if callable(answer):
                answer = answer()
        except ApiError as exc:
            return exc.status, {}, _encode(exc.body), 0.0
        if scripted is None:
            return 200, {}, _encode(answer), 0.0
        return scripted.status, scripted.headers, _encode(answer), scripted.delay

    def _authenticate(self, headers: dict[str, str]) -> None:
        value = headers.get("authorization", "")
        if not value:
            raise ApiError(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        scheme, _, key = value.partition(" ")
        if scheme != "Bearer" or key != self.api_key:
            # Echoes the key in full, as a careless proxy might: the client must redact it.
            raise ApiError(401, f"Incorrect API key provided: {key}", code="invalid_api_key")

    @staticmethod
    def _parse(headers: dict[str, str], body: bytes) -> Any:
        if headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise ApiError(400, "Content-Type must be application/json")
        try:
            return json.loads(body)
        except ValueError:
            raise ApiError(
                400,
                "We could not parse the JSON body of your request. (HINT: This likely means "
                "you aren't using your HTTP library correctly.)",
            ) from None


def embeddings_handler(fake: FakeOpenAI, request: RecordedRequest, payload: Any) -> Any:
    """``POST /v1/embeddings``, validated like OpenAI's."""
    if not isinstance(payload, dict):
        raise ApiError(400, "The request body must be a JSON object")
    for key in payload:
        if key not in EMBEDDING_FIELDS:
            raise ApiError(400, f"Unrecognized request argument supplied: {key}")
    model = payload.get("model")
    if model is None:
        raise ApiError(400, "you must provide a model parameter", param="model")
    if not isinstance(model, str):
        raise ApiError(400, "'model' must be a string", param="model")
    if model not in fake.embedding_models:
        raise ApiError(
            400, f"The model `{model}` does not exist", param="model", code="model_not_found"
        )
    texts = payload.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if (
        not isinstance(texts, list)
        or not 1 <= len(texts) <= MAX_EMBEDDING_INPUTS
        or not all(isinstance(t, str) and t for t in texts)
    ):
        raise ApiError(400, INPUT_INVALID, param="input")
    encoding = payload.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise ApiError(
            400, "'encoding_format' must be 'float' or 'base64'", param="encoding_format"
        )
    if "user" in payload and not isinstance(payload["user"], str):
        raise ApiError(400, "'user' must be a string", param="user")
    native, shortenable = fake.embedding_models[model]
    dimensions = native
    if "dimensions" in payload:
        asked = payload["dimensions"]
        if not shortenable:
            raise ApiError(
                400, "This model does not support specifying dimensions.", param="dimensions"
            )
        if isinstance(asked, bool) or not isinstance(asked, int) or not 1 <= asked <= native:
            raise ApiError(
                400, f"'dimensions' must be an integer from 1 to {native}", param="dimensions"
            )
        dimensions = asked
    data = []
    tokens = 0
    for index, text in enumerate(texts):
        vector = fake.embedding_for(model, text, dimensions)
        tokens += len(re.findall(r"\w+|[^\w\s]", text)) or 1
        embedding: Any = vector
        if encoding == "base64":
            embedding = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def chat_handler(fake: FakeOpenAI, request: RecordedRequest, payload: Any) -> Any:
    """``POST /v1/chat/completions``, validated like OpenAI's; answers from ``chat_replies``."""
    if not isinstance(payload, dict):
        raise ApiError(400, "The request body must be a JSON object")
    for key, value in payload.items():
        if key not in CHAT_FIELDS:
            raise ApiError(400, f"Unrecognized request argument supplied: {key}")
        expected = CHAT_FIELDS[key]
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            raise ApiError(
                400,
                f"Invalid type for '{key}': expected {_json_type(*expected)}, but got "
                f"{_json_type(type(value))} instead.",
                param=key,
                code="invalid_type",
            )
    model = payload.get("model")
    if model is None:
        raise ApiError(400, "you must provide a model parameter", param="model")
    if model not in fake.chat_models:
        raise ApiError(
            400,
            f"The model `{model}` does not exist or you do not have access to it.",
            param="model",
            code="model_not_found",
        )
    if "messages" not in payload:
        raise ApiError(400, "Missing required parameter: 'messages'.", param="messages")
    messages = payload["messages"]
    if not messages:
        raise ApiError(
            400, "Invalid 'messages': empty array. Expected an array with minimum length 1.",
            param="messages", code="empty_array",
        )  # fmt: skip
    for index, message in enumerate(messages):
        _check_message(index, message)
    _check_range(payload, "temperature", 0, 2)
    _check_range(payload, "top_p", 0, 1)
    _check_range(payload, "presence_penalty", -2, 2)
    _check_range(payload, "frequency_penalty", -2, 2)
    _check_range(payload, "max_tokens", 1, 1_000_000)
    _check_range(payload, "max_completion_tokens", 1, 1_000_000)
    if payload.get("n", 1) != 1:
        raise ApiError(400, "FakeOpenAI answers n=1 only", param="n")
    if payload.get("stream"):
        raise ApiError(400, "FakeOpenAI does not stream", param="stream")
    if "response_format" in payload:
        _check_response_format(payload["response_format"], messages)
    if fake.system_prompts:
        first = messages[0]
        if first.get("role") != "system" or first.get("content") not in fake.system_prompts:
            raise ApiError(
                400,
                "FakeOpenAI: the first message is not the required system prompt",
                param="messages[0]",
                code="system_prompt_mismatch",
            )

    def answer() -> dict[str, Any]:
        with fake._lock:
            reply = fake.chat_replies.popleft() if fake.chat_replies else None
        if reply is None:
            raise ApiError(
                400,
                "FakeOpenAI: no scripted chat reply left (call fake.chat_reply(...) first)",
                type="fake_script_error",
                code="no_scripted_reply",
            )
        usage = reply.usage or {
            "prompt_tokens": sum(_words(m.get("content")) for m in messages),
            "completion_tokens": _words(reply.content),
        }
        usage = {**usage, "total_tokens": sum(usage.values())}
        return {
            "id": f"chatcmpl-fake{secrets.token_hex(8)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
            "system_fingerprint": "fp_fake",
        }

    return answer


def _check_message(index: int, message: Any) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise ApiError(
            400,
            f"Invalid type for '{where}': expected an object, but got "
            f"{_json_type(type(message))} instead.",
            param=where,
            code="invalid_type",
        )
    for key in message:
        if key not in MESSAGE_FIELDS:
            raise ApiError(
                400,
                f"Additional properties are not allowed ('{key}' was unexpected) - '{where}'",
                param=where,
            )
    role = message.get("role")
    if role is None:
        raise ApiError(400, f"Missing required parameter: '{where}.role'.", param=f"{where}.role")
    if role not in CHAT_ROLES:
        supported = ", ".join(f"'{r}'" for r in CHAT_ROLES[:-1])
        raise ApiError(
            400,
            f"Invalid value: {role!r}. Supported values are: {supported}, and '{CHAT_ROLES[-1]}'.",
            param=f"{where}.role",
            code="invalid_value",
        )
    content = message.get("content")
    if content is None and not (role == "assistant" and message.get("tool_calls")):
        raise ApiError(
            400, f"Missing required parameter: '{where}.content'.", param=f"{where}.content"
        )
    parts_ok = isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
    )
    if content is not None and not isinstance(content, str) and not parts_ok:
        raise ApiError(
            400,
            f"Invalid type for '{where}.content': expected one of a string or array of "
            f"objects, but got {_json_type(type(content))} instead.",
            param=f"{where}.content",
            code="invalid_type",
        )
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise ApiError(
            400,
            f"Missing required parameter: '{where}.tool_call_id'.",
            param=f"{where}.tool_call_id",
        )


def _check_range(payload: dict[str, Any], key: str, low: float, high: float) -> None:
    value = payload.get(key)
    if value is None:
        return
    if value < low or value > high:
        raise ApiError(
            400,
            f"Invalid '{key}': expected a value from {low} to {high}, but got {value} instead.",
            param=key,
            code="invalid_value",
        )


def _check_response_format(response_format: dict[str, Any], messages: list[Any]) -> None:
    kind = response_format.get("type")
    if kind not in ("text", "json_object", "json_schema") or set(response_format) - {
        "type",
        "json_schema",
    }:
        raise ApiError(
            400,
            f"Invalid value: {kind!r}. Supported values are: 'text', 'json_object', and "
            "'json_schema'.",
            param="response_format.type",
            code="invalid_value",
        )
    if kind == "json_object" and not any(
        "json" in str(m.get("content", "")).lower() for m in messages
    ):
        # OpenAI's own rule: JSON mode needs the word in the prompt.
        raise ApiError(
            400,
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'.",
            param="messages",
        )


def _json_type(*kinds: type) -> str:
    """OpenAI's wording for a JSON type: "an integer", "one of a string or an array", ..."""
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
             list: "an array", dict: "an object", type(None): "null"}  # fmt: skip
    if float in kinds:
        kinds = tuple(k for k in kinds if k is not int)
    words = [names.get(kind, kind.__name__) for kind in kinds]
    return words[0] if len(words) == 1 else "one of " + " or ".join(words)


def _words(content: Any) -> int:
    return len(re.findall(r"\w+|[^\w\s]", content)) if isinstance(content, str) else 0


def _encode(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    return json.dumps(body).encode("utf-8")


class _RequestHandler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAI

    def do_POST(self) -> None:
        self._serve("POST")

    def do_GET(self) -> None:
        self._serve("GET")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake = self.server_fake
        peer = (str(self.client_address[0]), int(self.client_address[1]))
        status, extra, payload, delay = fake._handle(method, self.path, headers, body, peer)
        if delay and fake._stopping.wait(delay):
            return
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet test output
