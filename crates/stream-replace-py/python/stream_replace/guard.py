"""The guard layer: rules with ids, actions and validators, on streams.

A :class:`Guard` is a compiled rule set. Each :class:`Rule` has an id, an
action (:class:`Mask`, :class:`Counter`, :class:`KeepLast`,
:class:`KeyedHash`, or :class:`Block` with a reason) and optionally a
validator (``"luhn"``, ``"us_ssn"``, ``"iban"``, or a Python callable
``str -> bool``) that rejects a match. :func:`pii` gives the ready rules of
the ``pii`` pack. Values on the allowlist pass unchanged.

A :class:`Session` takes text as it arrives (:meth:`Session.push`) and
returns :class:`Chunk` objects with the text that is safe now; a value
split across pushes is found whole, before any of it is released. A block
rule stops the stream before its match: the session returns a chunk with
``blocked=True`` and every later ``push`` returns ``[]`` until
:meth:`Session.reset`.

For every split of the input, the joined text of the chunks, their
triggers and the verdict equal :meth:`Guard.evaluate` of the whole text.

>>> from stream_replace.guard import Guard, Rule, Block, Counter
>>> guard = Guard([
...     Rule(r"[\\w.]+@\\w+\\.\\w+", Counter("EMAIL"), id="email"),
...     Rule(r"(?a)\\b\\d{3}-\\d{2}-\\d{4}\\b", Block("SSN in output"), id="ssn", validator="us_ssn"),
... ])
>>> s = guard.session()
>>> [c.text for c in s.push("Mail ann@ex")] + [c.text for c in s.push("ample.org now.")]
['Mail ', '[EMAIL_1] ']
>>> chunks = s.push(" SSN 123-45-6789.")
>>> [(c.text, c.blocked, c.reason) for c in chunks]
[('now. SSN ', False, None), ('', True, 'SSN in output')]
>>> s.is_blocked, s.push("more")
(True, [])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import (
    NamedTuple,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from stream_replace import _engine
from stream_replace._translate import translate as _translate

__all__ = [
    "Block",
    "BlockInfo",
    "Chunk",
    "ChunkFilter",
    "Counter",
    "Evaluation",
    "Guard",
    "GuardError",
    "KeepLast",
    "KeyedHash",
    "Mask",
    "Rule",
    "Session",
    "StreamBlockedError",
    "Trigger",
    "pii",
    "pii_rules",
]

GuardError = _engine.GuardError


# ---------------------------------------------------------------- actions


@dataclass(frozen=True)
class Mask:
    """Replace the match by ``text``.

    >>> Guard([Rule("secret", Mask("***"), literal=True)]).evaluate("a secret").text
    'a ***'
    """

    text: str = "[REDACTED]"


@dataclass(frozen=True)
class Counter:
    """Replace the match by ``[ENTITY_n]``: the n-th distinct value of the
    stream (the same value, the same number).

    >>> g = Guard([Rule(r"\\w+@\\w+\\.\\w+", Counter("EMAIL"))])
    >>> g.evaluate("a@x.io, b@y.io, a@x.io").text
    '[EMAIL_1], [EMAIL_2], [EMAIL_1]'
    """

    entity: str


@dataclass(frozen=True)
class KeepLast:
    """Keep the last ``n`` characters, ``mask`` in place of each other one.

    >>> Guard([Rule(r"\\d{4}-\\d{4}", KeepLast(4))]).evaluate("card 1234-5678").text
    'card *****5678'
    """

    n: int = 4
    mask: str = "*"


@dataclass(frozen=True)
class KeyedHash:
    """Replace the match by ``[ENTITY_<12 hex digits>]``, the start of the
    HMAC-SHA256 of the value under the key: the same value and key give
    the same tag in every stream and replica, so logs can be joined on it
    with nothing stored. Whoever has the key can still find a short value
    again by trying candidates.

    >>> g = Guard([Rule(r"\\w+@\\w+\\.\\w+", KeyedHash("EMAIL", b"k1"))])
    >>> a, b = g.evaluate("a@x.io a@x.io").text.split()
    >>> a == b and a.startswith("[EMAIL_")
    True
    """

    entity: str
    key: bytes


@dataclass(frozen=True)
class Block:
    """Stop the stream before the match, with ``reason``.

    >>> Guard([Rule("DROP", Block("SQL"), literal=True)]).evaluate("ok; DROP x").verdict
    'block'
    """

    reason: str


class _PackDefault:
    """The action the pack gives the rule."""

    def __repr__(self) -> str:
        return "PACK_DEFAULT"


PACK_DEFAULT = _PackDefault()

Action = Union[Mask, Counter, KeepLast, KeyedHash, Block, _PackDefault]

VALIDATORS = ("luhn", "us_ssn", "iban")


def _action_spec(action: Action) -> Tuple[str, Optional[str], Optional[int], Optional[bytes]]:
    if isinstance(action, _PackDefault):
        return ("pack", None, None, None)
    if isinstance(action, Mask):
        return ("mask", action.text, None, None)
    if isinstance(action, Counter):
        return ("counter", action.entity, None, None)
    if isinstance(action, KeepLast):
        return ("keep_last", action.mask, int(action.n), None)
    if isinstance(action, KeyedHash):
        key = action.key.encode() if isinstance(action.key, str) else bytes(action.key)
        return ("keyed_hash", action.entity, None, key)
    if isinstance(action, Block):
        return ("block", action.reason, None, None)
    raise TypeError(f"not an action: {action!r}")


# ------------------------------------------------------------------ rules


@dataclass(frozen=True)
class Rule:
    """One guard rule: a pattern, an action, an id and a validator.

    ``pattern`` is a regex in Python's ``re`` syntax (a ``str`` with
    ``flags``, or a compiled ``re.Pattern``), translated exactly or refused
    with ``ValueError`` (``\\b`` needs ``re.ASCII`` or ``(?a)``), or
    literal text with ``literal=True``. ``id`` names the rule in triggers and blocks (by
    default, its index). ``validator`` is ``"luhn"``, ``"us_ssn"``,
    ``"iban"``, ``"none"``, or a callable given the matched text: a match
    it rejects is not a match. A callable that raises closes the stream
    (:class:`GuardError`), it does not let the value through.

    >>> even = Rule(r"(?a)\\b\\d+\\b", Mask("[EVEN]"), id="even", validator=lambda s: int(s) % 2 == 0)
    >>> Guard([even]).evaluate("1 2 3 4").text
    '1 [EVEN] 3 [EVEN]'
    """

    pattern: Union[str, "re.Pattern[str]", None]
    action: Action = Mask()
    id: Optional[str] = None
    validator: Union[str, Callable[[str], bool], None] = None
    literal: bool = False
    flags: int = 0
    pack: Optional[str] = None

    def _spec(self, index: int) -> tuple:
        validator = self.validator
        if isinstance(validator, str) and validator not in VALIDATORS + ("none",):
            raise ValueError(
                f"rule {index}: unknown validator {validator!r} "
                f"(one of {', '.join(VALIDATORS)}, 'none', or a callable)"
            )
        if validator is not None and not isinstance(validator, str) and not callable(validator):
            raise TypeError(f"rule {index}: a validator is a name or a callable")
        if self.pack is not None:
            return ("pack", self.pack, _action_spec(self.action), self.id, validator)
        if isinstance(self.action, _PackDefault):
            raise ValueError(f"rule {index}: only a pack rule has the pack's action")
        if self.literal:
            if not isinstance(self.pattern, str):
                raise TypeError(f"rule {index}: a literal pattern is a str")
            return ("literal", self.pattern, _action_spec(self.action), self.id, validator)
        return ("regex", _engine_regex(index, self.pattern, self.flags),
                _action_spec(self.action), self.id, validator)


def _engine_regex(index: int, pattern: Any, flags: int) -> str:
    """A Python pattern in the engine's syntax, or ``ValueError`` naming the
    rule's index (for a construct the engine cannot match exactly, or a
    pattern that is not valid Python syntax)."""
    if isinstance(pattern, re.Pattern):
        if flags:
            raise ValueError(f"rule {index}: flags go in the compiled pattern")
        if not isinstance(pattern.pattern, str):
            raise TypeError(f"rule {index}: a bytes pattern is not supported")
    elif not isinstance(pattern, str):
        raise TypeError(f"rule {index}: a pattern is a str or a re.Pattern")
    try:
        return _translate(pattern, flags)
    except (ValueError, re.error) as e:
        raise ValueError(f"rule {index}: {e}") from None


@dataclass(frozen=True)
class PackRule:
    """A rule of the ``pii`` pack, as :func:`pii_rules` lists it."""

    id: str
    pattern: str
    mask: str
    block_reason: Optional[str]
    has_validator: bool
    what: str
    misses: str


def pii_rules() -> List[PackRule]:
    """The ``pii`` pack's rules, in order, with what each catches and misses.

    >>> [r.id for r in pii_rules() if r.block_reason]
    ['private_key', 'us_ssn']
    """
    return [PackRule(*r) for r in _engine.pii_pack()]


def pii(
    *,
    exclude: Iterable[str] = (),
    actions: Optional[Dict[str, Action]] = None,
    blocks: bool = True,
) -> List[Rule]:
    """The ``pii`` pack as a list of :class:`Rule`: secrets, email, IBAN,
    SSN, payment card, phone, IP addresses, with their masks, blocks and
    validators. ``exclude`` drops rules by id; ``actions`` gives a rule
    another action; ``blocks=False`` turns the pack's blocks into masks.
    Add your own rules before the pack to win ties with it.

    >>> g = Guard(pii(actions={"email": Counter("EMAIL")}))
    >>> g.evaluate("ann@x.org, card 4111 1111 1111 1111").text
    '[EMAIL_1], card [CARD]'
    >>> g.evaluate("SSN 123-45-6789").verdict
    'block'
    >>> Guard(pii(blocks=False)).evaluate("SSN 123-45-6789").text
    'SSN [US_SSN]'
    """
    actions = dict(actions or {})
    exclude = set(exclude)
    known = {r.id: r for r in pii_rules()}
    for name in list(actions) + list(exclude):
        if name not in known:
            raise ValueError(f"no rule {name!r} in the pii pack (one of {', '.join(known)})")
    out = []
    for r in known.values():
        if r.id in exclude:
            continue
        action = actions.get(r.id, PACK_DEFAULT)
        if not blocks and isinstance(action, _PackDefault) and r.block_reason:
            action = Mask(r.mask)
        out.append(Rule(None, action, id=r.id, pack=r.id))
    return out


# ---------------------------------------------------------------- results


class Trigger(NamedTuple):
    """A rule's match: its id, its index, its action (``"mask"`` or
    ``"block"``), the block's reason, and its span in code points of the
    stream's input."""

    rule_id: str
    rule_index: int
    action: str
    reason: Optional[str]
    span: Tuple[int, int]


class BlockInfo(NamedTuple):
    """What stopped a stream: the rule, its reason, the blocked span."""

    rule_id: str
    rule_index: int
    reason: str
    span: Tuple[int, int]


class Chunk(NamedTuple):
    """Text a session released, and what happened to it.

    ``redacted`` is true when a rule changed this chunk's text; a chunk
    with ``blocked`` true has empty text, ``action == "block"``, the
    reason, and the block's trigger; ``is_final`` marks the stream's last
    chunk (a flush's, or a block's). ``action`` is ``"pass"``, ``"mask"``
    or ``"block"``.
    """

    chunk_index: int
    text: str
    redacted: bool
    blocked: bool
    action: str
    reason: Optional[str]
    triggers: Tuple[Trigger, ...]
    is_final: bool
    block: Optional[BlockInfo] = None


@dataclass(frozen=True)
class Evaluation:
    """The copy of record of a whole text: the remedied text (up to the
    block, on a block), every trigger, and the verdict (``"pass"``,
    ``"mask"`` or ``"block"``)."""

    text: str
    triggers: Tuple[Trigger, ...]
    verdict: str
    block: Optional[BlockInfo]

    @property
    def is_blocked(self) -> bool:
        """Whether a block rule matched."""
        return self.block is not None

    @property
    def reason(self) -> Optional[str]:
        """The block's reason, or ``None``."""
        return self.block.reason if self.block else None


def _trigger(t: tuple) -> Trigger:
    rule, rid, action, reason, span = t
    return Trigger(rid, rule, action, reason, tuple(span))


def _block(b: Optional[tuple]) -> Optional[BlockInfo]:
    if b is None:
        return None
    rule, rid, reason, span = b
    return BlockInfo(rid, rule, reason, tuple(span))


def _chunk(raw: tuple) -> Chunk:
    index, text, redacted, blocked, triggers, is_final, block = raw
    b = _block(block) if block is not None else None
    action = "block" if blocked else ("mask" if redacted else "pass")
    return Chunk(
        index,
        text,
        redacted,
        blocked,
        action,
        b.reason if b else None,
        tuple([_trigger(t) for t in triggers]) if triggers else (),
        is_final,
        b,
    )


class StreamBlockedError(GuardError):
    """A block rule stopped a filtered stream.

    ``rule_id``, ``reason`` and ``span`` say which rule, why and where;
    ``released`` is the text yielded before the block (already shown);
    ``action`` is ``"block"``. A ``RuntimeError``, so existing handlers
    catch it.
    """

    def __init__(self, block: BlockInfo, released: str, chunks: Optional[list] = None):
        super().__init__("blocked", f"blocked by rule {block.rule_id}: {block.reason}")
        self.block = block
        self.rule_id = block.rule_id
        self.reason = block.reason
        self.span = block.span
        self.action = "block"
        self.released = released
        self.chunks = list(chunks or [])

    def __str__(self) -> str:
        return f"blocked by rule {self.rule_id}: {self.reason}"


# --------------------------------------------------------------- sessions


class Session:
    """One guarded stream. Make it with :meth:`Guard.session`.

    >>> s = Guard([Rule("secret", Mask("***"), literal=True)]).session()
    >>> [c.text for c in s.push("a sec")], [c.text for c in s.push("ret!")]
    (['a '], ['***!'])
    >>> [(c.text, c.is_final) for c in s.flush()]
    [('', True)]
    """

    __slots__ = ("_s",)

    def __init__(self, raw: Any) -> None:
        self._s = raw

    def push(self, text: str) -> List[Chunk]:
        """Feeds ``text``; returns the chunks now safe to emit (``[]`` once
        blocked). Raises :class:`GuardError` after :meth:`flush`, over the
        held-text cap, or when a validator raises (the stream then stays
        closed until :meth:`reset`)."""
        if not isinstance(text, str):
            raise TypeError(f"push takes a str, not {type(text).__name__}")
        return [_chunk(c) for c in self._s.push(text)]

    def flush(self) -> List[Chunk]:
        """Ends the stream: the rest of the text, in a chunk with
        ``is_final`` true (or a block). ``[]`` once ended or blocked."""
        return [_chunk(c) for c in self._s.flush()]

    @property
    def is_blocked(self) -> bool:
        """Whether a block rule stopped the stream (until :meth:`reset`)."""
        return self._s.is_blocked

    @property
    def is_ended(self) -> bool:
        """Whether the stream was flushed or blocked."""
        return self._s.is_ended

    @property
    def block(self) -> Optional[BlockInfo]:
        """The block that stopped the stream, or ``None``."""
        return _block(self._s.block)

    @property
    def held(self) -> int:
        """Bytes received and not yet released."""
        return self._s.held

    def reset(self) -> None:
        """Starts a new stream: clears the block, held text and counters'
        numbering."""
        self._s.reset()

    def allow(self, value: str) -> None:
        """Lets ``value`` pass unchanged in this session."""
        self._s.allow(value)

    def counters(self) -> Dict[str, Any]:
        """Matches and rejections per rule id, allowed values, blocks."""
        return self._s.counters()


# ------------------------------------------------------------------ guard


class Guard:
    """A compiled guard rule set, immutable and safe to share between
    threads; sessions hold the per-stream state.

    ``rules`` are :class:`Rule` objects (see :func:`pii` for the pack);
    ``allow`` lists values that pass unchanged; ``max_held`` caps the
    bytes a stream may hold back (1 MiB by default), past which the stream
    fails closed with :class:`GuardError`.
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        allow: Iterable[str] = (),
        max_held: Optional[int] = None,
    ) -> None:
        rules = list(rules)
        for i, r in enumerate(rules):
            if not isinstance(r, Rule):
                raise TypeError(f"rule {i}: not a Rule: {r!r}")
        specs = [r._spec(i) for i, r in enumerate(rules)]
        self._rules = _engine.GuardRules(specs, [str(v) for v in allow], max_held)

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "Guard":
        """A guard from plain data (a YAML or JSON mapping), checked
        strictly: an unknown key or action is an error, not ignored.

        Keys: ``rules`` (a list of ``{id, pattern | literal, <action>,
        validator}``, where ``<action>`` is one of ``mask: TEXT``,
        ``counter: ENTITY``, ``keep_last: N`` (with ``mask_char``),
        ``keyed_hash: ENTITY`` (with ``key_env``: the name of an
        environment variable holding the key), ``block: REASON``);
        ``pack`` (``pii``) with ``pack_actions`` (id to action mapping, as
        above), ``exclude`` (ids) and ``pack_blocks`` (false turns the
        pack's blocks into masks); ``rules_first`` (true by default: your
        rules win ties with the pack's); ``allow`` (values passed
        unchanged); ``max_held`` (bytes).

        >>> g = Guard.from_config({"pack": "pii", "pack_actions": {"email": {"counter": "EMAIL"}},
        ...                        "rules": [{"id": "code", "pattern": r"PRJ-\\d{4}", "block": "project code"}]})
        >>> g.evaluate("ann@x.org PRJ-1234").text
        '[EMAIL_1] '
        """
        known = {"rules", "pack", "pack_actions", "exclude", "pack_blocks", "rules_first",
                 "allow", "max_held"}
        if not isinstance(config, dict):
            raise TypeError("a guard config is a mapping")
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"unknown guard config keys: {', '.join(unknown)}")
        own = [_rule_from_config(i, r) for i, r in enumerate(config.get("rules") or [])]
        pack_name = config.get("pack")
        packed: List[Rule] = []
        if pack_name is not None:
            if pack_name != "pii":
                raise ValueError(f"unknown pack {pack_name!r} (pii)")
            actions = {k: _action_from_config(f"pack_actions.{k}", v)
                       for k, v in (config.get("pack_actions") or {}).items()}
            packed = pii(exclude=config.get("exclude") or (), actions=actions,
                         blocks=bool(config.get("pack_blocks", True)))
        elif config.get("pack_actions") or config.get("exclude"):
            raise ValueError("pack_actions and exclude need a pack")
        rules = own + packed if config.get("rules_first", True) else packed + own
        if not rules:
            raise ValueError("a guard config needs rules or a pack")
        allow = config.get("allow") or []
        if not isinstance(allow, list) or not all(isinstance(v, str) for v in allow):
            raise ValueError("allow is a list of strings")
        return cls(rules, allow=allow, max_held=config.get("max_held"))

    @property
    def rule_ids(self) -> List[str]:
        """The rules' ids, in order."""
        return self._rules.ids()

    def __len__(self) -> int:
        return len(self._rules)

    def session(self, *, release_at_words: Union[bool, int] = False) -> Session:
        """A new stream. ``release_at_words`` releases text only at word
        boundaries (``True``: at most 256 bytes of a word held; an int:
        that many)."""
        return Session(self._rules.session(_words(release_at_words)))

    def evaluate(self, text: str) -> Evaluation:
        """The copy of record of ``text``: what a stream of it releases,
        with its triggers and verdict, for every split of it.

        >>> g = Guard(pii())
        >>> e = g.evaluate("mail ann@x.org, SSN 123-45-6789 end")
        >>> e.text, e.verdict, [t.rule_id for t in e.triggers], e.block.span
        ('mail [EMAIL], SSN ', 'block', ['email', 'us_ssn'], (20, 31))
        """
        if not isinstance(text, str):
            raise TypeError(f"evaluate takes a str, not {type(text).__name__}")
        out, triggers, block = self._rules.evaluate(text)
        b = _block(block)
        ts = tuple(_trigger(t) for t in triggers)
        verdict = "block" if b else ("mask" if ts else "pass")
        return Evaluation(out, ts, verdict, b)

    def stream_filter(
        self, chunks: Iterable[str], *, release_at_words: Union[bool, int] = False
    ) -> Iterator[str]:
        """Yields the safe text of ``chunks``; raises
        :class:`StreamBlockedError` on a block, after yielding the text
        before it.

        >>> g = Guard([Rule(r"\\d{3}-\\d{2}-\\d{4}", Block("SSN"), id="ssn")])
        >>> shown = []
        >>> try:
        ...     for t in g.stream_filter(["my SSN ", "123-4", "5-6789 ok"]):
        ...         shown.append(t)
        ... except StreamBlockedError as e:
        ...     print(repr("".join(shown)), e.rule_id, e.reason, repr(e.released))
        'my SSN ' ssn SSN 'my SSN '
        """
        session = self.session(release_at_words=release_at_words)
        released: List[str] = []
        for piece in chunks:
            for c in session.push(piece):
                if c.blocked:
                    raise StreamBlockedError(c.block, "".join(released))
                if c.text:
                    released.append(c.text)
                    yield c.text
        for c in session.flush():
            if c.blocked:
                raise StreamBlockedError(c.block, "".join(released))
            if c.text:
                released.append(c.text)
                yield c.text

    async def astream_filter(
        self, chunks: AsyncIterable[str], *, release_at_words: Union[bool, int] = False
    ) -> AsyncIterator[str]:
        """:meth:`stream_filter` over an async iterable."""
        session = self.session(release_at_words=release_at_words)
        released: List[str] = []
        async for piece in chunks:
            for c in session.push(piece):
                if c.blocked:
                    raise StreamBlockedError(c.block, "".join(released))
                if c.text:
                    released.append(c.text)
                    yield c.text
        for c in session.flush():
            if c.blocked:
                raise StreamBlockedError(c.block, "".join(released))
            if c.text:
                released.append(c.text)
                yield c.text

    def chunk_filter(
        self, format: str = "openai", *, release_at_words: Union[bool, int] = False
    ) -> "ChunkFilter":
        """A filter of parsed streaming chunks (``"openai"`` chat
        completion chunks or ``"anthropic"`` message events, as dicts):
        one exact stream per choice (or content block) and field."""
        return ChunkFilter(self, format, release_at_words=release_at_words)


_ACTION_KEYS = ("mask", "counter", "keep_last", "keyed_hash", "block")


def _action_from_config(where: str, spec: Any) -> Action:
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: an action is a mapping such as {{mask: '[X]'}}")
    given = [k for k in _ACTION_KEYS if k in spec]
    if len(given) != 1:
        raise ValueError(f"{where}: exactly one of {', '.join(_ACTION_KEYS)}")
    kind = given[0]
    value = spec[kind]
    if kind == "mask":
        return Mask(str(value))
    if kind == "counter":
        return Counter(str(value))
    if kind == "keep_last":
        return KeepLast(int(value), str(spec.get("mask_char", "*")))
    if kind == "keyed_hash":
        import os

        env = spec.get("key_env")
        if not env or not os.environ.get(env):
            raise ValueError(f"{where}: keyed_hash needs key_env, a set environment variable")
        return KeyedHash(str(value), os.environ[env].encode())
    return Block(str(value))


def _rule_from_config(index: int, spec: Any) -> Rule:
    where = f"rules[{index}]"
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: a rule is a mapping")
    known = {"id", "pattern", "literal", "validator", "mask_char", "key_env"} | set(_ACTION_KEYS)
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ValueError(f"{where}: unknown keys {', '.join(unknown)}")
    if ("pattern" in spec) == ("literal" in spec):
        raise ValueError(f"{where}: exactly one of pattern, literal")
    action_spec = {k: v for k, v in spec.items() if k in _ACTION_KEYS + ("mask_char", "key_env")}
    action = _action_from_config(where, action_spec) if action_spec else Mask()
    validator = spec.get("validator")
    if validator is not None and not isinstance(validator, str):
        raise ValueError(f"{where}: validator is a name ({', '.join(VALIDATORS)})")
    if "literal" in spec:
        return Rule(str(spec["literal"]), action, id=spec.get("id"), validator=validator,
                    literal=True)
    return Rule(str(spec["pattern"]), action, id=spec.get("id"), validator=validator)


def _words(release_at_words: Union[bool, int]) -> Optional[int]:
    if release_at_words is True:
        return 256
    if release_at_words is False or release_at_words is None:
        return None
    n = int(release_at_words)
    if n < 0:
        raise ValueError("release_at_words must be >= 0")
    return n


# ---------------------------------------------------------- chunk filters

# Keys that carry no model text, exempt from scanning by name. Every other
# string anywhere in a choice, a content block or an event is scanned.
_OPENAI_TOP = frozenset(
    {"id", "object", "created", "model", "system_fingerprint", "service_tier", "usage", "choices"}
)
_OPENAI_CHOICE = frozenset({"index", "finish_reason", "logprobs"})
_ANTHROPIC_EXEMPT = frozenset(
    {"type", "id", "model", "role", "stop_reason", "signature", "usage", "index"}
)
_OPENAI_FIELD_EXEMPT = frozenset({"role", "type", "id", "index"})
# The Anthropic events whose strings are scanned whole (the content block
# events are streams); any other event type is refused.
_ANTHROPIC_EVENTS = frozenset({"message_start", "message_delta", "message_stop", "ping", "error",
                               "content_block_stop"})

_Path = Tuple[Any, ...]


def _leaves(value: Any, path: _Path, exempt: frozenset) -> Iterator[Tuple[_Path, Any, Any]]:
    """Every string under ``value`` but exempt keys: ``(path, holder, key)``.
    A list element's path step is ``("#", its "index" field or position)``.
    """
    if isinstance(value, dict):
        for k in list(value):
            v = value[k]
            if k in exempt:
                continue
            if isinstance(v, str):
                yield path + (k,), value, k
            else:
                yield from _leaves(v, path + (k,), exempt)
    elif isinstance(value, list):
        for pos, v in enumerate(value):
            step = ("#", v["index"] if isinstance(v, dict) and isinstance(v.get("index"), int) else pos)
            if isinstance(v, str):
                yield path + (step,), value, pos
            else:
                yield from _leaves(v, path + (step,), exempt)


def _copy(value: Any) -> Any:
    """A copy of parsed JSON (dicts, lists and scalars), deep."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _nest(path: _Path, text: str) -> Any:
    """A value holding ``text`` at ``path`` (the inverse of :func:`_leaves`)."""
    value: Any = text
    for step in reversed(path):
        if isinstance(step, tuple):
            value = [dict(value, index=step[1])] if isinstance(value, dict) else [value]
        else:
            value = {step: value}
    return value


class ChunkFilter:
    """Filters parsed streaming chunks, field by field, exactly.

    ``format="openai"``: chat completion chunks. Each choice's every string
    field (``delta.content``, ``delta.reasoning_content``, each tool call's
    ``function.arguments``, any field not known) is its own stream, keyed
    by choice index and path; only ``role``, ``type``, ``id`` and
    ``index`` are exempt. ``logprobs`` carry the raw tokens and are
    removed. A choice's streams end at its ``finish_reason``; all end at
    :meth:`finish`. Other top-level strings are streams too, by path. A
    chunk without a ``choices`` list is refused.

    ``format="anthropic"``: message stream events. Each content block's
    text (``text``, ``thinking``, ``partial_json`` and any other string of
    its ``content_block`` or ``delta`` but ``type``, ``id`` and
    ``signature``) is a stream, ended at ``content_block_stop``; all end at
    ``message_delta``/``message_stop``. Strings of ``message_start``,
    ``message_delta`` and ``error`` events are scanned whole; an event of
    an unknown type is refused.

    :meth:`filter` takes one chunk and returns the chunks to send (a copy;
    an extra chunk goes before a finishing one when a stream's rest has no
    field to ride in). On a block it raises :class:`StreamBlockedError`
    whose ``chunks`` are to be sent before closing (they hold the text
    released before the block; its ``released`` is the blocked field's part
    of them); every later call raises it again.

    >>> f = Guard(pii()).chunk_filter("openai")
    >>> out = f.filter({"choices": [{"index": 0, "delta": {"content": "mail ann@exa"}}]})
    >>> out += f.filter({"choices": [{"index": 0, "delta": {"content": "mple.org ok"}}]})
    >>> out += f.finish()
    >>> "".join(c["choices"][0]["delta"].get("content", "") for c in out)
    'mail [EMAIL] ok'
    """

    def __init__(
        self, guard: Guard, format: str = "openai", *, release_at_words: Union[bool, int] = False
    ) -> None:
        if format not in ("openai", "anthropic"):
            raise ValueError(f"unknown format {format!r} (openai or anthropic)")
        self._guard = guard
        self._format = format
        self._words = release_at_words
        self._streams: Dict[Tuple[Any, _Path], Session] = {}
        # Per stream, the delta type last seen (Anthropic), for rest events.
        self._types: Dict[Tuple[Any, _Path], str] = {}
        self._meta: Dict[str, Any] = {}
        self._failed: Optional[BaseException] = None

    # -- public

    def filter(self, chunk: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Filters one chunk; returns the chunks to send now."""
        self._check()
        if not isinstance(chunk, dict):
            self._failed = TypeError(f"a chunk is a dict, not {type(chunk).__name__}")
            raise self._failed
        chunk = _copy(chunk)
        try:
            if self._format == "openai":
                return self._openai(chunk)
            return self._anthropic(chunk)
        except StreamBlockedError as e:
            self._close(StreamBlockedError(e.block, e.released))
            raise
        except BaseException as e:
            self._close(e)
            raise

    def finish(self) -> List[Dict[str, Any]]:
        """Ends every stream; returns chunks carrying their rests."""
        self._check()
        out: List[Dict[str, Any]] = []
        try:
            for key in list(self._streams):
                rest = self._end(key)
                if rest:
                    out.append(self._rest_chunk(key, rest))
        except StreamBlockedError as e:
            e.chunks = out + e.chunks
            self._close(StreamBlockedError(e.block, e.released))
            raise
        return out

    @property
    def is_blocked(self) -> bool:
        """Whether a block rule stopped the stream."""
        return isinstance(self._failed, StreamBlockedError)

    def reset(self) -> None:
        """Forgets every stream and a block or failure."""
        self.__init__(self._guard, self._format, release_at_words=self._words)  # type: ignore[misc]

    # -- streams

    def _check(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _close(self, e: BaseException) -> None:
        self._failed = e
        self._streams.clear()

    def _session(self, key: Tuple[Any, _Path]) -> Session:
        s = self._streams.get(key)
        if s is None:
            s = self._streams[key] = self._guard.session(release_at_words=self._words)
        return s

    def _blocked(self, c: Chunk, released: str, chunks: List[Dict[str, Any]]) -> StreamBlockedError:
        return StreamBlockedError(c.block, released, chunks)

    def _feed(self, key: Tuple[Any, _Path], text: str) -> str:
        """The safe text of ``text`` on ``key``'s stream."""
        if not isinstance(text, str):
            raise TypeError("a field's text is a str")
        raw = self._session(key)._s.push(text)
        if len(raw) == 1 and not raw[0][3]:
            return raw[0][1]
        parts = []
        for r in raw:
            if r[3]:  # blocked
                raise _Blocked(_chunk(r), "".join(parts))
            parts.append(r[1])
        return "".join(parts)

    def _end(self, key: Tuple[Any, _Path]) -> str:
        s = self._streams.pop(key)
        parts = []
        for c in s.flush():
            if c.blocked:
                raise self._blocked(c, "".join(parts), [])
            parts.append(c.text)
        return "".join(parts)

    def _whole(self, text: str) -> str:
        """Scans a string that is not part of a stream, whole."""
        s = self._guard.session()
        parts = []
        for c in s.push(text) + s.flush():
            if c.blocked:
                raise _Blocked(c, "".join(parts))
            parts.append(c.text)
        return "".join(parts)

    def _scan(self, pairs: List[Tuple[Tuple[Any, _Path], Any, Any]], chunk: Dict[str, Any]) -> None:
        """Feeds each field's text and writes back its safe text; on a
        block, empties the fields not yet fed and raises with ``chunk``."""
        for i, (key, holder, k) in enumerate(pairs):
            try:
                if key is None:
                    holder[k] = self._whole(holder[k])
                else:
                    holder[k] = self._feed(key, holder[k])
            except _Blocked as b:
                holder[k] = b.released
                for _, h, kk in pairs[i + 1:]:
                    h[kk] = ""
                raise self._blocked(b.chunk, b.released, [chunk]) from None

    # -- OpenAI

    def _openai(self, chunk: Dict[str, Any]) -> List[Dict[str, Any]]:
        for k in ("id", "object", "created", "model", "system_fingerprint"):
            if k in chunk:
                self._meta[k] = chunk[k]
        pairs: List[Tuple[Any, Any, Any]] = []
        # Other top-level strings: a stream each, ended at finish().
        for path, holder, k in _leaves(chunk, (), _OPENAI_TOP):
            pairs.append((("top", path), holder, k))
        finished = []
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise ValueError("not a chat completion chunk: choices is missing or not a list")
        for pos, choice in enumerate(choices or []):
            if not isinstance(choice, dict):
                raise ValueError("a choice is not an object")
            c = choice.get("index", pos)
            if choice.get("logprobs") is not None:
                choice["logprobs"] = None
            for key in list(choice):
                if key in _OPENAI_CHOICE:
                    continue
                value = choice[key]
                if isinstance(value, str):
                    pairs.append(((c, (key,)), choice, key))
                    continue
                for path, holder, k in _leaves(value, (key,), _OPENAI_FIELD_EXEMPT):
                    pairs.append(((c, path), holder, k))
            if choice.get("finish_reason") is not None:
                finished.append((c, choice))
        self._scan(pairs, chunk)
        out = [chunk]
        for c, choice in finished:
            here = {key: (holder, k) for key, holder, k in pairs if key is not None}
            for key in [key for key in self._streams if key[0] == c]:
                try:
                    rest = self._end(key)
                except StreamBlockedError as e:
                    e.chunks = out
                    raise
                if not rest:
                    continue
                if key in here:
                    holder, k = here[key]
                    holder[k] += rest
                else:
                    out.insert(len(out) - 1, self._rest_chunk(key, rest))
        return out

    # -- Anthropic

    def _anthropic(self, event: Dict[str, Any]) -> List[Dict[str, Any]]:
        kind = event.get("type")
        pairs: List[Tuple[Any, Any, Any]] = []
        index = event.get("index")
        if kind in ("content_block_start", "content_block_delta"):
            if not isinstance(index, int):
                raise ValueError(f"{kind} without an integer index")
            holder_key = "content_block" if kind == "content_block_start" else "delta"
            holder = event.get(holder_key)
            if not isinstance(holder, dict):
                raise ValueError(f"{kind} without {holder_key}")
            for path, h, k in _leaves(holder, (), _ANTHROPIC_EXEMPT):
                key = (index, path)
                if kind == "content_block_delta" and isinstance(holder.get("type"), str):
                    self._types[key] = holder["type"]
                pairs.append((key, h, k))
            for name in list(event):
                if name == holder_key or name in _ANTHROPIC_EXEMPT:
                    continue
                if isinstance(event[name], str):
                    pairs.append((None, event, name))
                else:
                    for _, h, k in _leaves(event[name], (name,), _ANTHROPIC_EXEMPT):
                        pairs.append((None, h, k))
            self._scan(pairs, event)
            return [event]
        if kind not in _ANTHROPIC_EVENTS:
            raise ValueError(f"unknown event type {kind!r}")
        for path, h, k in _leaves(event, (), _ANTHROPIC_EXEMPT):
            pairs.append((None, h, k))
        self._scan(pairs, event)
        out = [event]
        if kind == "content_block_stop":
            ending = [key for key in self._streams if key[0] == index]
        elif kind in ("message_delta", "message_stop"):
            ending = list(self._streams)
        else:
            ending = []
        for key in ending:
            try:
                rest = self._end(key)
            except StreamBlockedError as e:
                e.chunks = out[:-1]
                raise
            if rest:
                out.insert(len(out) - 1, self._rest_chunk(key, rest))
        return out

    # -- rests

    def _rest_chunk(self, key: Tuple[Any, _Path], rest: str) -> Dict[str, Any]:
        owner, path = key
        if self._format == "openai" and owner == "top":
            return dict(self._meta, **_nest(path, rest), choices=[])
        if self._format == "openai":
            choice = _nest(path, rest)
            choice = dict(index=owner, **choice)
            choice.setdefault("finish_reason", None)
            return dict(self._meta, choices=[choice])
        delta = _nest(path, rest)
        delta_type = self._types.get(key) or {
            "text": "text_delta",
            "thinking": "thinking_delta",
            "partial_json": "input_json_delta",
        }.get(path[0] if path else "", "text_delta")
        return {"type": "content_block_delta", "index": owner, "delta": dict(type=delta_type, **delta)}


class _Blocked(Exception):
    """A field's stream blocked: its chunk, and the field's text before."""

    def __init__(self, chunk: Chunk, released: str) -> None:
        super().__init__("blocked")
        self.chunk = chunk
        self.released = released
