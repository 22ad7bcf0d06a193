"""The LiteLLM guardrail's hooks, called as the proxy calls them (needs litellm)."""

import asyncio
import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")

from litellm.types.utils import ModelResponse, ModelResponseStream  # noqa: E402

from stream_replace.integrations.litellm import GuardrailBlocked, StreamReplaceGuardrail  # noqa: E402

CONFIG = {"pack": "pii", "pack_actions": {"email": {"counter": "EMAIL"}},
          "rules": [{"id": "ticket", "pattern": r"TKT-\d{6}", "mask": "[TICKET]"}]}


def guardrail(**extra):
    return StreamReplaceGuardrail(stream_replace=dict(CONFIG, **extra), guardrail_name="sr",
                                  event_hook="post_call", default_on=True)


def chunk(text=None, index=0, finish=None, **delta):
    if text is not None:
        delta["content"] = text
    return ModelResponseStream(id="c1", model="m", choices=[
        {"index": index, "delta": delta, "finish_reason": finish}])


async def agen(items):
    for x in items:
        await asyncio.sleep(0)
        yield x


def run_stream(g, items):
    async def go():
        out = []
        async for c in g.async_post_call_streaming_iterator_hook(
                user_api_key_dict=None, response=agen(items), request_data={}):
            out.append(c)
        return out
    return asyncio.run(go())


def content(chunks, index=0):
    return "".join(ch.delta.content or "" for c in chunks for ch in c.choices
                   if ch.index == index)


def test_email_cut_across_chunks_is_masked():
    out = run_stream(guardrail(), [chunk("Mail ann@exa"), chunk("mple.org or TKT-12"),
                                   chunk("3456 now"), chunk(None, finish="stop")])
    assert content(out) == "Mail [EMAIL_1] or [TICKET] now"
    assert all(isinstance(c, ModelResponseStream) for c in out)
    assert out[-1].choices[0].finish_reason == "stop"


def test_two_choices_and_tool_arguments_are_separate_streams():
    tc = [{"index": 0, "id": "call_1", "type": "function",
           "function": {"name": "f", "arguments": '{"a": "bob@'}}]
    tc2 = [{"index": 0, "function": {"arguments": 'y.io"}'}}]
    out = run_stream(guardrail(), [chunk("ann@", index=0), chunk("x@", index=1),
                                   chunk("x.org", index=0), chunk(None, index=0, tool_calls=tc),
                                   chunk(None, index=0, tool_calls=tc2),
                                   chunk(None, index=0, finish="stop"), chunk(None, index=1, finish="stop")])
    assert content(out, 0) == "[EMAIL_1]"
    assert content(out, 1) == "x@"
    args = "".join(t.function.arguments or "" for c in out for ch in c.choices
                   for t in (ch.delta.tool_calls or []))
    assert args == '{"a": "[EMAIL_1]"}'


def test_ssn_blocks_with_content_filter():
    out = run_stream(guardrail(), [chunk("SSN on file is 123"), chunk("-45-67"),
                                   chunk("89. More"), chunk(None, finish="stop")])
    assert content(out) == "SSN on file is "
    # No piece of the number in any field the client gets. `created` is the
    # time the chunk was made: its digits change every second.
    sent = repr([c.model_dump(exclude={"created"}) for c in out])
    for piece in ("123", "45", "67", "89"):
        assert piece not in sent
    assert out[-1].choices[0].finish_reason == "content_filter"


def test_ssn_blocks_with_an_error():
    g = guardrail(on_block="error")
    with pytest.raises(GuardrailBlocked) as info:
        run_stream(g, [chunk("SSN 123-45-6789 "), chunk(None, finish="stop")])
    assert info.value.rule_id == "us_ssn"


def test_unknown_chunk_types_are_refused():
    from stream_replace.guard import GuardError
    with pytest.raises(GuardError):
        run_stream(guardrail(), [object()])
    # A Responses API event has no choices: refused, not scanned piecemeal.
    with pytest.raises(ValueError, match="not a chat completion chunk"):
        run_stream(guardrail(), [{"type": "response.output_text.delta", "delta": "ann@"},
                                 {"type": "response.output_text.delta", "delta": "x.org"}])


def test_anthropic_sse_frames():
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "mail ann@x"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ".org ok"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    raw = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    pieces = [raw[i:i + 7] for i in range(0, len(raw), 7)]  # frames cut anywhere
    out = run_stream(guardrail(), pieces)
    text = ""
    for frame in out:
        for line in frame.decode().split("\n"):
            if line.startswith("data: "):
                d = json.loads(line[6:])
                text += d.get("delta", {}).get("text", "") + d.get("content_block", {}).get("text", "")
    assert text == "mail [EMAIL_1] ok"
    assert b"ann@x" not in b"".join(out)


def test_anthropic_sse_block():
    e = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x 123-45-6789 y"}}
    out = run_stream(guardrail(), [f"data: {json.dumps(e)}\n\n".encode()])
    joined = b"".join(out)
    assert b"6789" not in joined and b"message_stop" in joined


def test_non_streaming_reply():
    g = guardrail()
    resp = ModelResponse(id="r", model="m", choices=[{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "mail ann@x.org, TKT-123456"}}])
    out = asyncio.run(g.async_post_call_success_hook(data={}, user_api_key_dict=None, response=resp))
    assert out.choices[0].message.content == "mail [EMAIL_1], [TICKET]"
    resp = ModelResponse(id="r", model="m", choices=[{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok 123-45-6789 no"}}])
    out = asyncio.run(g.async_post_call_success_hook(data={}, user_api_key_dict=None, response=resp))
    assert (out.choices[0].message.content, out.choices[0].finish_reason) == ("ok ", "content_filter")
    g = guardrail(on_block="error")
    resp = ModelResponse(id="r", model="m", choices=[{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok 123-45-6789 no"}}])
    with pytest.raises(Exception) as info:
        asyncio.run(g.async_post_call_success_hook(data={}, user_api_key_dict=None, response=resp))
    assert getattr(info.value, "status_code", None) == 400
    assert resp.choices[0].message.content == "ok 123-45-6789 no"  # not sent: the call raised


def test_config_is_checked():
    with pytest.raises(ValueError, match="unknown guard config keys: rulez"):
        StreamReplaceGuardrail(stream_replace={"rulez": []}, guardrail_name="x")
    with pytest.raises(ValueError, match="on_block"):
        StreamReplaceGuardrail(stream_replace={"pack": "pii", "on_block": "warn"}, guardrail_name="x")
    with pytest.raises(ValueError):
        StreamReplaceGuardrail(guardrail_name="x")


# ------------------------------------------- every split, through the hook

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PLANTED = st.lists(st.sampled_from(["ann@x.org", "123-45-6789", "TKT-123456", "ok", " ", ". "]),
                   max_size=6)
GUARDRAIL = guardrail()


@settings(max_examples=60, deadline=None)
@given(PLANTED, st.lists(st.integers(0, 200), max_size=6))
def test_hook_stream_equals_evaluate_and_leaks_nothing(parts, cuts):
    text = " ".join(parts) + " end"
    cuts = sorted({c % (len(text) + 1) for c in cuts})
    pieces = [text[i:j] for i, j in zip([0] + cuts, cuts + [len(text)])]
    out = run_stream(GUARDRAIL, [chunk(p) for p in pieces] + [chunk(None, finish="stop")])
    got = content(out)
    record = GUARDRAIL.guard.evaluate(text)
    assert got == record.text
    assert out[-1].choices[0].finish_reason == ("content_filter" if record.is_blocked else "stop")
    for planted in ("ann@x.org", "123-45-6789", "TKT-123456", "6789"):
        assert planted not in got


@settings(max_examples=60, deadline=None)
@given(PLANTED, st.lists(st.integers(0, 2000), max_size=8))
def test_hook_sse_frames_cut_anywhere(parts, cuts):
    text = " ".join(parts) + " end"
    events = [{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[i:i + 4]}}
               for i in range(0, len(text), 4)]
    events += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    raw = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    cuts = sorted({c % (len(raw) + 1) for c in cuts})
    frames = run_stream(GUARDRAIL, [raw[i:j] for i, j in zip([0] + cuts, cuts + [len(raw)])])
    got = ""
    for frame in frames:
        for line in frame.decode().split("\n"):
            if line.startswith("data: "):
                d = json.loads(line[6:])
                got += d.get("delta", {}).get("text", "") + d.get("content_block", {}).get("text", "")
    record = GUARDRAIL.guard.evaluate(text)
    assert got == record.text
    assert frames[-1].startswith(b"event: message_stop")
    for planted in ("ann@x.org", "123-45-6789", "TKT-123456", "6789"):
        assert planted not in got


def test_release_at_words():
    g = guardrail(release_at_words=True)
    out = run_stream(g, [chunk("Thanks for wai"), chunk("ting. Mail ann@"), chunk("x.org or"),
                         chunk(" call"), chunk(None, finish="stop")])
    texts = [ch.delta.content for c in out for ch in c.choices if ch.delta.content]
    assert "".join(texts) == "Thanks for waiting. Mail [EMAIL_1] or call"
    assert all(t[-1] in " .,;:!?\n" for t in texts[:-1]), texts


def test_logs_name_the_rule_never_the_value(caplog):
    import logging
    caplog.set_level(logging.DEBUG)
    run_stream(guardrail(), [chunk("mail ann@x.org, SSN 123-45-"), chunk("6789 end"),
                             chunk(None, finish="stop")])
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "us_ssn" in logged
    for value in ("123-45", "6789", "ann@x.org"):
        assert value not in logged
