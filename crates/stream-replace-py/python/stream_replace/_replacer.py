"""The `Replacer` and its match objects, over the engine's streams."""

from __future__ import annotations

import re
import threading
from typing import (
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
from stream_replace._translate import compile_pattern, translate, translate_template

__all__ = ["Replacer", "Match", "stream_replace", "astream_replace"]

# How a replacement reaches the engine (see `_engine.Rules`).
_LITERAL, _TEMPLATE, _CALL_STR, _CALL_MATCH = 0, 1, 2, 3

Span = Tuple[int, int]


class Match:
    """A decided match of a regex rule, given to its replacement function.

    It answers as ``re.Match`` does: ``group()``, ``groups()``,
    ``groupdict()``, ``start()``, ``end()``, ``span()`` and ``m[g]``. Offsets
    count characters from the start of the stream (the first ``feed`` after
    the replacer was made, reset or flushed), not from the start of a chunk.
    The stream is not kept, so ``string`` is the matched text itself (the
    text of group 0), not the whole input; ``re`` is the rule's compiled
    Python pattern.

    >>> from stream_replace import Replacer
    >>> seen = []
    >>> r = Replacer([(re.compile(r"(?P<n>\\d+)(x)?"), lambda m: seen.append(m) or "#")])
    >>> r.feed("ab 12") + r.feed("3 cd") + r.flush()
    'ab # cd'
    >>> m = seen[0]
    >>> m.group(), m["n"], m.groups(), m.groupdict(), m.span(), m.start(2)
    ('123', '123', ('123', None), {'n': '123'}, (3, 6), -1)
    """

    __slots__ = ("re", "string", "_texts", "_spans")

    def __init__(
        self,
        pattern: "re.Pattern[str]",
        texts: Tuple[Optional[str], ...],
        spans: Tuple[Optional[Span], ...],
    ) -> None:
        self.re = pattern
        self._texts = texts
        self._spans = spans
        self.string: str = texts[0] or ""

    def _index(self, group: Union[int, str]) -> int:
        if isinstance(group, str):
            try:
                return self.re.groupindex[group]
            except KeyError:
                raise IndexError("no such group") from None
        try:
            i = group.__index__()
        except AttributeError:
            raise IndexError("no such group") from None
        if not 0 <= i < len(self._texts):
            raise IndexError("no such group")
        return i

    def group(self, *groups: Union[int, str]) -> Any:
        """The text of one group (``None`` if it did not take part), or a
        tuple of them for several groups; group 0 by default."""
        if not groups:
            return self._texts[0]
        if len(groups) == 1:
            return self._texts[self._index(groups[0])]
        return tuple(self._texts[self._index(g)] for g in groups)

    def __getitem__(self, group: Union[int, str]) -> Optional[str]:
        return self._texts[self._index(group)]

    def groups(self, default: Any = None) -> Tuple[Any, ...]:
        """The texts of groups 1 and up, `default` for those that did not
        take part."""
        return tuple(default if t is None else t for t in self._texts[1:])

    def groupdict(self, default: Any = None) -> Dict[str, Any]:
        """The named groups' texts, by name."""
        out = {}
        for name, i in self.re.groupindex.items():
            t = self._texts[i]
            out[name] = default if t is None else t
        return out

    def start(self, group: Union[int, str] = 0) -> int:
        """Where the group starts in the stream, in characters; -1 if it
        did not take part."""
        span = self._spans[self._index(group)]
        return -1 if span is None else span[0]

    def end(self, group: Union[int, str] = 0) -> int:
        """Where the group ends in the stream, in characters; -1 if it did
        not take part."""
        span = self._spans[self._index(group)]
        return -1 if span is None else span[1]

    def span(self, group: Union[int, str] = 0) -> Span:
        """``(start, end)`` of the group; ``(-1, -1)`` if it did not take
        part."""
        span = self._spans[self._index(group)]
        return (-1, -1) if span is None else span

    def expand(self, template: str) -> str:
        """The text of a ``re.sub`` template for this match."""
        out = []
        for part in _template(template, self.re):
            out.append(part if isinstance(part, str) else (self._texts[part] or ""))
        return "".join(out)

    def __repr__(self) -> str:
        return f"<stream_replace.Match object; span={self.span()!r}, match={self._texts[0]!r}>"


def _template(template: str, compiled: "re.Pattern[str]") -> List[Union[str, int]]:
    from stream_replace._translate import _template_parts

    return _template_parts(template, compiled)


RuleSpec = Union[
    Tuple[Union[str, "re.Pattern[str]"], Union[str, Callable[..., str]]],
    Tuple[Union[str, "re.Pattern[str]"], Union[str, Callable[..., str]], Dict[str, Any]],
]


def _match_handler(
    fn: Callable[[Match], str], compiled: "re.Pattern[str]"
) -> Callable[[Tuple[Optional[str], ...], Tuple[Optional[Span], ...]], str]:
    def handle(texts: Tuple[Optional[str], ...], spans: Tuple[Optional[Span], ...]) -> str:
        return fn(Match(compiled, texts, spans))

    return handle


def _compile_rule(i: int, spec: Any) -> Tuple[bool, str, int, Any]:
    """One rule in the engine's terms, or an exception naming rule `i`."""
    if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3):
        raise ValueError(f"rule {i}: a rule is a (pattern, replacement) tuple, got {spec!r}")
    pattern, replacement = spec[0], spec[1]
    if len(spec) == 3:
        opts = spec[2]
        if not isinstance(opts, dict):
            raise TypeError(f"rule {i}: the third item of a rule is a dict of options")
        # `lookback` tunes a guessed hold-back; this engine derives it exactly.
        unknown = sorted(set(opts) - {"lookback"})
        if unknown:
            raise ValueError(f"rule {i}: unknown rule options {unknown}")
    if not (isinstance(replacement, str) or callable(replacement)):
        raise TypeError(
            f"rule {i}: the replacement must be a str or a callable, "
            f"not {type(replacement).__name__}"
        )
    if isinstance(pattern, str):
        if not pattern:
            raise ValueError(f"rule {i}: an empty pattern matches nothing to replace")
        if isinstance(replacement, str):
            return (False, pattern, _LITERAL, replacement)
        return (False, pattern, _CALL_STR, replacement)
    if isinstance(pattern, re.Pattern):
        try:
            compiled = compile_pattern(pattern)
            engine_pattern = translate(compiled)
        except ValueError as e:
            raise ValueError(f"rule {i}: {e}") from e
        if isinstance(replacement, str):
            try:
                template = translate_template(replacement, compiled)
            except (re.error, IndexError) as e:
                raise ValueError(
                    f"rule {i}: pattern {compiled.pattern!r}: bad template {replacement!r}: {e}"
                ) from e
            return (True, engine_pattern, _TEMPLATE, template)
        return (True, engine_pattern, _CALL_MATCH, _match_handler(replacement, compiled))
    raise TypeError(f"rule {i}: pattern must be str or re.Pattern, not {type(pattern).__name__}")


def _build(rules: List[Any], max_held: Optional[int]) -> Any:
    """The engine's rules for `rules`; the last few rule sets are kept, as
    building one with large Unicode classes takes a while."""
    try:
        key = tuple(
            (spec[0], spec[1], tuple(sorted(spec[2].items())) if len(spec) == 3 else ())
            for spec in rules
        )
        hash(key)
    except Exception:  # an unhashable or malformed rule: no cache
        return _build_uncached(tuple(rules), max_held)
    return _build_cached(key, tuple(rules), max_held)


def _build_uncached(rules: Tuple[Any, ...], max_held: Optional[int]) -> Any:
    specs = [_compile_rule(i, spec) for i, spec in enumerate(rules)]
    try:
        return _engine.Rules(specs, max_held)
    except ValueError as e:
        if len(e.args) != 2:
            raise
        message, i = e.args
        if i is None:
            raise ValueError(message) from None
        pattern = rules[i][0]
        source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
        raise ValueError(f"rule {i}: pattern {source!r}: {message}") from None


_cache: Dict[Any, Any] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 32


def _build_cached(key: Any, rules: Tuple[Any, ...], max_held: Optional[int]) -> Any:
    full = (key, max_held)
    with _cache_lock:
        built = _cache.get(full)
    if built is None:
        built = _build_uncached(rules, max_held)
        with _cache_lock:
            while len(_cache) >= _CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
            _cache[full] = built
    return built


class Replacer(_engine.Stream):
    """Replaces matches of rules in text that arrives in chunks, with the
    same output for every split of the input as for the whole input.

    `rules` is a list of ``(pattern, replacement)`` tuples:

    * ``(str, str)``: literal text, replaced as it is;
    * ``(str, callable)``: the callable gets the matched str;
    * ``(re.Pattern, str)``: a ``re.sub`` template (``\\1``, ``\\g<name>``);
    * ``(re.Pattern, callable)``: the callable gets a :class:`Match`.

    The leftmost match wins; on a tie, the earlier rule. ``max_held`` caps
    the bytes (UTF-8) held back between calls (1 MiB by default); beyond it
    the stream fails with ``StreamError``. Building the rules raises
    ``ValueError`` (or ``TypeError``) naming the rule at fault.

    ``feed(chunk)`` returns the text now safe to emit, ``flush()`` ends the
    stream and returns the rest, ``reset()`` drops held text and clears a
    failure, ``held`` counts the held bytes. An exception raised by a
    replacement function comes out of ``feed`` (or ``flush``) and fails
    the stream: every later call raises ``StreamError`` until ``reset()``.
    Calls on one replacer from several threads take turns.

    >>> r = Replacer([("hello", "world"), (re.compile(r"\\d+"), r"<\\g<0>>")])
    >>> r.feed("say hel"), r.feed("lo 4"), r.feed("2!"), r.flush()
    ('say ', 'world ', '<42>!', '')
    """

    def __new__(cls, rules: Sequence[RuleSpec], *, max_held: Optional[int] = None) -> "Replacer":
        return super().__new__(cls, _build(list(rules), max_held))

    def __init__(self, rules: Sequence[RuleSpec], *, max_held: Optional[int] = None) -> None:
        pass

    def wrap(self, iterable: Iterable[str]) -> Iterator[str]:
        """Yields the replaced text of a stream of chunks (``reset`` first,
        ``flush`` at the end); empty pieces are not yielded.

        >>> list(Replacer([("ab", "X")]).wrap(["a", "b", "a"]))
        ['X', 'a']
        """
        self.reset()
        feed = self.feed
        for chunk in iterable:
            out = feed(chunk)
            if out:
                yield out
        out = self.flush()
        if out:
            yield out

    async def wrap_async(self, iterable: AsyncIterable[str]) -> AsyncIterator[str]:
        """:meth:`wrap` for an async iterable of chunks."""
        self.reset()
        feed = self.feed
        async for chunk in iterable:
            out = feed(chunk)
            if out:
                yield out
        out = self.flush()
        if out:
            yield out


def stream_replace(iterable: Iterable[str], rules: Sequence[RuleSpec]) -> Iterator[str]:
    """Applies `rules` to a stream of chunks: ``Replacer(rules).wrap(iterable)``.

    >>> "".join(stream_replace(["hel", "lo there"], [("hello", "world")]))
    'world there'
    """
    return Replacer(rules).wrap(iterable)


async def astream_replace(
    iterable: AsyncIterable[str], rules: Sequence[RuleSpec]
) -> AsyncIterator[str]:
    """Applies `rules` to an async stream of chunks."""
    async for text in Replacer(rules).wrap_async(iterable):
        yield text
