"""End to end: the `openai` client, a real LiteLLM proxy with the guardrail,
and a fake OpenAI-compatible upstream on loopback.

Run by ``scripts/litellm_e2e.sh``, which starts the upstream (this file,
run as a program) and the proxy, and sets ``E2E_PROXY_URL``. The proxy
serves two model names on the same upstream: ``guarded`` (the guardrail
attached) and ``plain`` (none, the control: it must show the leak, or the
test proves nothing).
"""

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

# What the upstream streams, one SSE event per piece: the email and the SSN
# are each cut across several events.
REPLIES = {
    "email": ["Write to ann.lee@exa", "mple.org", " or to the desk", " today."],
    "ssn": ["Intake summary: ", "SSN on file is 123", "-45-", "6789", ". Next step: review."],
}
EMAIL = "ann.lee@example.org"
SSN = "123-45-6789"


# ------------------------------------------------------------ the upstream

class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        body = b'{"object":"list","data":[{"id":"fake-model","object":"model"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        if n > 1 << 20:
            self.send_error(413)
            return
        req = json.loads(self.rfile.read(n) or b"{}")
        prompt = str(req.get("messages", [{}])[-1].get("content", ""))
        pieces = REPLIES.get(prompt.strip(), ["I do not know that prompt."])
        base = {"id": "chatcmpl-e2e", "created": int(time.time()), "model": "fake-model"}
        if not req.get("stream"):
            body = json.dumps(dict(base, object="chat.completion", choices=[{
                "index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "".join(pieces)}}],
                usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        events = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
        events += [{"index": 0, "delta": {"content": p}, "finish_reason": None} for p in pieces]
        events += [{"index": 0, "delta": {}, "finish_reason": "stop"}]
        self.close_connection = True
        try:
            for choice in events:
                chunk = dict(base, object="chat.completion.chunk", choices=[choice])
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.02)  # separate reads at the proxy
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a blocked stream: the proxy stopped reading


def serve(port_file: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


# -------------------------------------------------------------- the tests

PROXY = os.environ.get("E2E_PROXY_URL")
pytestmark = pytest.mark.skipif(not PROXY, reason="run by scripts/litellm_e2e.sh")


@pytest.fixture(scope="module")
def client():
    import openai
    return openai.OpenAI(base_url=PROXY, api_key=os.environ["E2E_API_KEY"], timeout=60, max_retries=0)


def stream(client, model, prompt):
    """The text pieces the client received, the finish reason, and an error."""
    pieces, finish, error = [], None, None
    try:
        for chunk in client.chat.completions.create(
                model=model, stream=True, messages=[{"role": "user", "content": prompt}]):
            for choice in chunk.choices:
                if choice.delta and choice.delta.content:
                    pieces.append(choice.delta.content)
                if choice.finish_reason:
                    finish = choice.finish_reason
    except Exception as e:  # an error event after the safe text
        error = e
    return pieces, finish, error


def forbidden(value, allowed):
    """Characters of a planted value that no released text may contain."""
    return set(value) - set(allowed)


def test_control_shows_the_leak(client):
    pieces, finish, error = stream(client, "plain", "email")
    text = "".join(pieces)
    assert error is None and EMAIL in text, text
    assert not any(EMAIL in p for p in pieces), "the upstream must cut the email across chunks"
    pieces, _, _ = stream(client, "plain", "ssn")
    assert SSN in "".join(pieces)


def test_email_cut_across_sse_chunks_arrives_masked(client):
    pieces, finish, error = stream(client, "guarded", "email")
    text = "".join(pieces)
    assert error is None, error
    assert text == "Write to [EMAIL_1] or to the desk today.", text
    assert finish == "stop"
    # No byte of the value: none of its characters that the rest lacks.
    rest = "Write to [EMAIL_1] or to the desk today."
    leaked = forbidden("ann.lee@exa" + "mple", rest) & set(text)
    assert not leaked and "@" not in text


def test_ssn_blocks_the_reply_with_nothing_of_it_shown(client):
    pieces, finish, error = stream(client, "guarded", "ssn")
    text = "".join(pieces)
    assert text == "Intake summary: SSN on file is ", text
    assert not set("0123456789-") & set(text)
    assert finish == "content_filter" and error is None


def test_whole_replies_too(client):
    r = client.chat.completions.create(model="guarded", messages=[{"role": "user", "content": "email"}])
    assert r.choices[0].message.content == "Write to [EMAIL_1] or to the desk today."
    r = client.chat.completions.create(model="guarded", messages=[{"role": "user", "content": "ssn"}])
    assert r.choices[0].message.content == "Intake summary: SSN on file is "
    assert r.choices[0].finish_reason == "content_filter"
    r = client.chat.completions.create(model="plain", messages=[{"role": "user", "content": "ssn"}])
    assert SSN in r.choices[0].message.content


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "upstream":
        sys.exit("usage: test_litellm_e2e.py upstream PORT_FILE")
    serve(sys.argv[2])
