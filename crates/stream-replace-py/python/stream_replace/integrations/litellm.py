"""A guardrail for the LiteLLM proxy that redacts and blocks replies exactly.

Streamed replies go through :meth:`StreamReplaceGuardrail.async_post_call_streaming_iterator_hook`:
one exact stream per choice and field (``content``, ``reasoning_content``,
each tool call's arguments, any other text field), so a value cut across
SSE chunks is found whole before any of it is sent. Whole replies go
through :meth:`StreamReplaceGuardrail.async_post_call_success_hook`, with
the same rules and the same result (the copy of record).

In the proxy's ``config.yaml``::

    guardrails:
      - guardrail_name: stream-replace
        litellm_params:
          guardrail: stream_replace.integrations.litellm.StreamReplaceGuardrail
          mode: post_call
          default_on: true
          stream_replace:
            pack: pii
            pack_actions:
              email: {counter: EMAIL}
            rules:
              - {id: ticket, pattern: 'TKT-\\d{6}', mask: '[TICKET]'}
            allow: [help@example.com]
            on_block: finish        # or: error

``stream_replace`` takes the keys of :meth:`Guard.from_config
<stream_replace.guard.Guard.from_config>`, plus ``on_block``: ``finish``
ends the reply with the text before the blocked value and
``finish_reason: content_filter``; ``error`` ends it with an error (an
error event in a stream, HTTP 400 for a whole reply). Either way nothing
from the blocked value on is sent. ``release_at_words: true`` releases
streamed text at word boundaries only.

A chunk that is not a chat completion chunk (a dict, or a model object
with ``model_dump``, with a ``choices`` list) or an Anthropic SSE frame
(bytes or str, on ``/v1/messages``) is refused: the stream ends with an
error rather than pass it unscanned (Responses API events, for one). Logs
name the rule and its reason, never a value.
"""

from __future__ import annotations

import json
import logging
from typing import Any, AsyncGenerator, Dict, List, Optional, Tuple

from litellm.integrations.custom_guardrail import CustomGuardrail

from stream_replace.guard import (
    ChunkFilter,
    Guard,
    GuardError,
    StreamBlockedError,
    _leaves,
    _OPENAI_CHOICE,
    _OPENAI_FIELD_EXEMPT,
    _OPENAI_TOP,
)

__all__ = ["StreamReplaceGuardrail", "GuardrailBlocked"]

log = logging.getLogger("stream_replace.litellm")

_OPTIONS = ("on_block", "release_at_words", "max_event")


class GuardrailBlocked(Exception):
    """A block rule stopped a reply (with ``on_block: error``)."""

    def __init__(self, rule_id: str, reason: str) -> None:
        super().__init__(f"blocked by guardrail rule {rule_id}: {reason}")
        self.rule_id = rule_id
        self.reason = reason


class StreamReplaceGuardrail(CustomGuardrail):
    """The LiteLLM guardrail; configured from ``litellm_params.stream_replace``."""

    def __init__(self, stream_replace: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
        if stream_replace is None:
            raise ValueError("the stream-replace guardrail needs a stream_replace: mapping")
        if not isinstance(stream_replace, dict):
            raise ValueError("stream_replace: is a mapping")
        config = dict(stream_replace)
        options = {k: config.pop(k) for k in _OPTIONS if k in config}
        on_block = options.get("on_block", "finish")
        if on_block not in ("finish", "error"):
            raise ValueError(f"on_block is finish or error, not {on_block!r}")
        self.on_block: str = on_block
        words = options.get("release_at_words", False)
        if not isinstance(words, (bool, int)) or (not isinstance(words, bool) and words < 0):
            raise ValueError("release_at_words is true, false, or a number of bytes")
        self.release_at_words = words
        self.max_event: int = int(options.get("max_event", 16 << 20))
        self.guard = Guard.from_config(config)
        super().__init__(**kwargs)

    # ------------------------------------------------------------ streams

    async def async_post_call_streaming_iterator_hook(  # type: ignore[override]
        self,
        user_api_key_dict: Any,
        response: Any,
        request_data: dict,
    ) -> AsyncGenerator[Any, None]:
        """Filters a streamed reply: one exact stream per choice and field."""
        openai: Optional[ChunkFilter] = None
        sse: Optional[_AnthropicSse] = None
        last: Any = None
        choices: List[int] = []
        try:
            async for chunk in response:
                if isinstance(chunk, (bytes, str)):
                    if sse is None:
                        sse = _AnthropicSse(self.guard, self.max_event, self.release_at_words)
                    try:
                        out = sse.feed(chunk)
                    except StreamBlockedError as e:
                        for frame in e.chunks:
                            yield frame
                        self._log_block(e)
                        for frame in sse.blocked_frames(e, self.on_block):
                            yield frame
                        return
                    for frame in out:
                        yield frame
                    continue
                as_dict, rebuild = _to_dict(chunk)
                last = chunk
                for ch in as_dict.get("choices") or []:
                    if isinstance(ch, dict) and isinstance(ch.get("index"), int):
                        if ch["index"] not in choices:
                            choices.append(ch["index"])
                if openai is None:
                    openai = self.guard.chunk_filter("openai", release_at_words=self.release_at_words)
                try:
                    out = openai.filter(as_dict)
                except StreamBlockedError as e:
                    for d in e.chunks:
                        yield rebuild(d)
                    self._log_block(e)
                    if self.on_block == "error":
                        raise GuardrailBlocked(e.rule_id, e.reason) from None
                    yield rebuild(_finish_chunk(as_dict, choices))
                    return
                for d in out:
                    yield rebuild(d)
            if sse is not None:
                try:
                    for frame in sse.finish():
                        yield frame
                except StreamBlockedError as e:
                    for frame in e.chunks:
                        yield frame
                    self._log_block(e)
                    for frame in sse.blocked_frames(e, self.on_block):
                        yield frame
                    return
            if openai is not None:
                try:
                    rests = openai.finish()
                except StreamBlockedError as e:
                    _, rebuild = _to_dict(last)
                    for d in e.chunks:
                        yield rebuild(d)
                    self._log_block(e)
                    if self.on_block == "error":
                        raise GuardrailBlocked(e.rule_id, e.reason) from None
                    yield rebuild(_finish_chunk(_to_dict(last)[0], choices))
                    return
                _, rebuild = _to_dict(last)
                for d in rests:
                    yield rebuild(d)
        finally:
            close = getattr(response, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:  # the upstream is done with either way
                    pass

    # ------------------------------------------------------- whole replies

    async def async_post_call_success_hook(  # type: ignore[override]
        self,
        data: dict,
        user_api_key_dict: Any,
        response: Any,
    ) -> Any:
        """Redacts or blocks a whole (non-streamed) chat completion."""
        if not hasattr(response, "choices"):
            return response
        as_dict, _ = _to_dict(response)
        updates: List[Tuple[Tuple[Any, ...], str]] = []
        block = None
        for pos, choice in enumerate(as_dict.get("choices") or []):
            if not isinstance(choice, dict):
                raise ValueError("a choice is not an object")
            if choice.get("logprobs") is not None:
                updates.append((("choices", pos, "logprobs"), None))  # type: ignore[arg-type]
            for key in list(choice):
                if key in _OPENAI_CHOICE:
                    continue
                value = choice[key]
                leaves = ([((key,), choice, key)] if isinstance(value, str)
                          else list(_leaves(value, (key,), _OPENAI_FIELD_EXEMPT)))
                for path, holder, k in leaves:
                    ev = self.guard.evaluate(holder[k])
                    real = _real_path(choice, path)
                    if ev.is_blocked:
                        block = block or ev.block
                        updates.append((("choices", pos) + real, ev.text))
                        updates.append((("choices", pos, "finish_reason"), "content_filter"))
                    elif ev.text != holder[k]:
                        updates.append((("choices", pos) + real, ev.text))
        for path, holder, k in _leaves(as_dict, (), _OPENAI_TOP):
            ev = self.guard.evaluate(holder[k])
            if ev.is_blocked:
                block = block or ev.block
            if ev.text != holder[k]:
                updates.append((_real_path(as_dict, path), ev.text))
        if block is not None:
            log.warning("reply blocked by rule %s: %s", block.rule_id, block.reason)
            if self.on_block == "error":
                raise _http_error(block.rule_id, block.reason)
        for path, value in updates:
            _set_path(response, path, value)
        return response

    # -------------------------------------------------------------- misc

    def _log_block(self, e: StreamBlockedError) -> None:
        log.warning("stream blocked by rule %s: %s", e.rule_id, e.reason)


def _http_error(rule_id: str, reason: str) -> Exception:
    try:
        from fastapi import HTTPException
    except ImportError:  # pragma: no cover - the proxy always has fastapi
        return GuardrailBlocked(rule_id, reason)
    return HTTPException(
        status_code=400,
        detail={"error": f"blocked by guardrail rule {rule_id}: {reason}", "rule": rule_id},
    )


def _to_dict(chunk: Any):
    """A chunk as a dict, and a function that makes a chunk of the same
    type from a dict."""
    if isinstance(chunk, dict):
        return chunk, lambda d: d
    dump = getattr(chunk, "model_dump", None)
    if dump is None:
        raise GuardError("refused", f"cannot scan a chunk of type {type(chunk).__name__}")
    as_dict = dump()
    if not isinstance(as_dict, dict):
        raise GuardError("refused", f"cannot scan a chunk of type {type(chunk).__name__}")
    cls = type(chunk)
    hidden = getattr(chunk, "_hidden_params", None)

    def rebuild(d: Dict[str, Any]) -> Any:
        obj = cls(**d)
        if hidden is not None:
            try:
                obj._hidden_params = hidden
            except (AttributeError, ValueError):
                pass
        return obj

    return as_dict, rebuild


def _finish_chunk(template: Dict[str, Any], choices: List[int]) -> Dict[str, Any]:
    """The chunk that ends a blocked stream: ``finish_reason: content_filter``
    on every choice seen, and no text."""
    keep = {k: template[k] for k in ("id", "object", "created", "model") if k in template}
    return dict(keep, choices=[{"index": c, "delta": {}, "finish_reason": "content_filter"}
                               for c in (choices or [0])])


def _real_path(root: Any, path: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """A :func:`_leaves` path with list steps as positions."""
    out: List[Any] = []
    node = root
    for step in path:
        if isinstance(step, tuple):
            _, ident = step
            pos = next((i for i, v in enumerate(node)
                        if isinstance(v, dict) and v.get("index") == ident), ident)
            out.append(pos)
            node = node[pos]
        else:
            out.append(step)
            node = node[step]
    return tuple(out)


def _set_path(obj: Any, path: Tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        obj = obj[step] if isinstance(obj, (dict, list)) or isinstance(step, int) else getattr(obj, step)
    last = path[-1]
    if isinstance(obj, (dict, list)):
        obj[last] = value
    else:
        setattr(obj, last, value)


class _AnthropicSse:
    """Anthropic message events as raw SSE frames (``/v1/messages``)."""

    def __init__(self, guard: Guard, max_event: int, release_at_words: Any = False) -> None:
        self._filter = guard.chunk_filter("anthropic", release_at_words=release_at_words)
        self._buf = b""
        self._max = max_event

    def feed(self, data: Any) -> List[bytes]:
        self._buf += data.encode() if isinstance(data, str) else bytes(data)
        self._buf = self._buf.replace(b"\r\n", b"\n")
        frames: List[bytes] = []
        while True:
            end = self._buf.find(b"\n\n")
            if end < 0:
                break
            raw, self._buf = self._buf[:end], self._buf[end + 2:]
            try:
                frames += self._event(raw)
            except StreamBlockedError as e:
                e.chunks = frames + e.chunks
                raise
        if len(self._buf) > self._max:
            raise GuardError("refused", "an SSE event larger than max_event")
        return frames

    def finish(self) -> List[bytes]:
        frames: List[bytes] = []
        rest, self._buf = self._buf, b""
        if rest.strip():
            frames += self._event(rest)
        try:
            rests = self._filter.finish()
        except StreamBlockedError as e:
            e.chunks = frames + [self._frame(x) for x in e.chunks]
            raise
        return frames + [self._frame(x) for x in rests]

    def _event(self, raw: bytes) -> List[bytes]:
        data_lines = []
        for line in raw.split(b"\n"):
            if line.startswith(b"data:"):
                data_lines.append(line[5:].lstrip(b" ") if line[5:6] == b" " else line[5:])
            elif line.startswith(b"event:") or line.startswith(b":") or not line.strip():
                continue
            else:
                raise GuardError("refused", "an SSE line that is not event, data or a comment")
        if not data_lines:
            return []
        try:
            event = json.loads(b"\n".join(data_lines))
        except ValueError:
            raise GuardError("refused", "an SSE event whose data is not JSON") from None
        if not isinstance(event, dict):
            raise GuardError("refused", "an SSE event whose data is not an object")
        try:
            out = self._filter.filter(event)
        except StreamBlockedError as e:
            e.chunks = [self._frame(x) for x in e.chunks]
            raise
        return [self._frame(x) for x in out]

    @staticmethod
    def _frame(event: Dict[str, Any]) -> bytes:
        kind = event.get("type", "message")
        return f"event: {kind}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()

    def blocked_frames(self, e: StreamBlockedError, on_block: str) -> List[bytes]:
        if on_block == "error":
            return [self._frame({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": f"blocked by guardrail rule {e.rule_id}: {e.reason}"}})]
        return [
            self._frame({"type": "message_delta", "delta": {"stop_reason": "refusal",
                                                            "stop_sequence": None}}),
            self._frame({"type": "message_stop"}),
        ]
