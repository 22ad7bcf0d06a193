"""Python regex syntax, translated into the engine's, exactly or refused.

The engine speaks the syntax of Rust's ``regex`` crate. A Python pattern is
read with Python's own parser (``re._parser``, ``sre_parse`` before 3.11),
and every construct is rewritten so that it means what Python means:

* every character set (a literal under ``re.IGNORECASE``, a class, ``\\d``,
  ``\\w``, ``\\s`` and their negations, in Unicode or ASCII mode) becomes an
  explicit list of code point ranges, computed by running Python's own
  ``re`` over every code point: the two engines' Unicode tables and case
  folding rules never have to agree;
* ``.`` is any character but ``\\n`` (any character at all under
  ``re.DOTALL``); ``^`` and ``$`` follow ``re.MULTILINE``; ``\\A`` and
  ``\\Z`` are the start and the end of the stream;
* groups keep Python's numbering (names are handled by the package, not by
  the engine); greedy and lazy repeats keep their preference; ``{,n}`` is
  ``{0,n}``.

What the engine cannot do exactly is refused with a ``ValueError`` naming
the construct: look-ahead and look-behind, backreferences, conditionals,
atomic groups, possessive repeats, ``$`` without ``re.MULTILINE`` (Python's
also matches before a final newline, which a stream cannot know is final),
``\\b`` and ``\\B`` in Unicode mode (Python's word characters differ from the
engine's, on combining marks for one; ``\\b`` under ``re.ASCII`` is exact),
``re.LOCALE``, bytes patterns, and patterns that can match the empty
string.

>>> translate(r"\\d{3}-\\d{4}", re.ASCII)
'(?:[0-9]){3}\\\\x{2d}(?:[0-9]){4}'
>>> translate(r"a(?=b)")
Traceback (most recent call last):
    ...
ValueError: pattern 'a(?=b)': look-ahead (?=...) is not supported: the engine has no look-around
"""

from __future__ import annotations

import array
import importlib
import re
import sys
from functools import lru_cache
from itertools import compress
from typing import Any, Iterable, List, Optional, Tuple, Union

if sys.version_info >= (3, 11):
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
else:  # pragma: no cover - exercised on 3.9 and 3.10
    import sre_constants as _c
    import sre_parse as _sre_parse

__all__ = ["translate", "translate_template", "Translated", "compile_pattern"]

_MAXREPEAT = _c.MAXREPEAT
_MAX_CP = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)

Ranges = Tuple[Tuple[int, int], ...]


def _fail(source: str, construct: str, why: str) -> ValueError:
    return ValueError(f"pattern {source!r}: {construct} is not supported: {why}")


@lru_cache(maxsize=1)
def _all_chars() -> str:
    """Every code point a str can hold in UTF-8: all but the surrogates."""
    cps = array.array("I", range(0, _SURROGATES[0]))
    cps.extend(range(_SURROGATES[1] + 1, _MAX_CP + 1))
    return cps.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def _index_to_cp(i: int) -> int:
    return i if i < _SURROGATES[0] else i + (_SURROGATES[1] + 1 - _SURROGATES[0])


@lru_cache(maxsize=1024)
def _python_set(item_source: str, flags: int) -> Ranges:
    """The code points that the one-character Python regex `item_source`
    matches under `flags`, as Python's own engine decides."""
    rx = re.compile(f"(?:{item_source})+", flags)
    out: List[Tuple[int, int]] = []
    for m in rx.finditer(_all_chars()):
        lo, hi = _index_to_cp(m.start()), _index_to_cp(m.end() - 1)
        if lo < _SURROGATES[0] <= hi:
            out.append((lo, _SURROGATES[0] - 1))
            out.append((_SURROGATES[1] + 1, hi))
        else:
            out.append((lo, hi))
    return tuple(out)


_CATEGORY_SOURCE = {
    _c.CATEGORY_DIGIT: r"\d",
    _c.CATEGORY_NOT_DIGIT: r"\D",
    _c.CATEGORY_SPACE: r"\s",
    _c.CATEGORY_NOT_SPACE: r"\S",
    _c.CATEGORY_WORD: r"\w",
    _c.CATEGORY_NOT_WORD: r"\W",
}

# The flags that decide which characters a one-character item matches.
_SET_FLAGS = re.IGNORECASE | re.ASCII | re.UNICODE


def _class_ranges(items: List[Tuple[Any, Any]], flags: int) -> Ranges:
    """The code points a Python class (`IN` items) matches."""
    negate = False
    plain = True
    parts = []
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            parts.append(f"\\U{av:08x}")
        elif op is _c.RANGE:
            parts.append(f"\\U{av[0]:08x}-\\U{av[1]:08x}")
        elif op is _c.CATEGORY:
            plain = False
            parts.append(_CATEGORY_SOURCE[av])
        else:  # pragma: no cover - the parser puts nothing else in a class
            raise ValueError(f"unknown class item {op}")
    if plain and not negate and not flags & re.IGNORECASE:
        spans = []
        for op, av in items:
            spans.append((av, av) if op is _c.LITERAL else av)
        return _normalize(spans)
    source = "[" + ("^" if negate else "") + "".join(parts) + "]"
    return _python_set(source, flags & _SET_FLAGS)


def _normalize(spans: Iterable[Tuple[int, int]]) -> Ranges:
    """Sorted, merged ranges without the surrogates."""
    out: List[List[int]] = []
    for lo, hi in sorted(spans):
        pieces = [(lo, hi)]
        if lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
            pieces = [(lo, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, hi)]
        for a, b in pieces:
            if a > b:
                continue
            if out and a <= out[-1][1] + 1:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
    return tuple((a, b) for a, b in out)


@lru_cache(maxsize=1)
def _cased() -> Optional[Tuple[int, ...]]:
    """The code points with a case mapping in Python's regex engine: the
    only ones that ``re.IGNORECASE`` can make equal to another."""
    try:
        iscased = importlib.import_module("_sre").unicode_iscased
    except (ImportError, AttributeError):  # pragma: no cover - CPython has them
        return None
    # map() over a C function: about 0.1 s for every code point. (A
    # character whose lowercase differs is cased too.)
    cps = range(_MAX_CP + 1)
    found = compress(cps, map(iscased, cps))
    return tuple(cp for cp in found if not _SURROGATES[0] <= cp <= _SURROGATES[1])


@lru_cache(maxsize=4096)
def _literal_ranges(cp: int, flags: int, negate: bool) -> Ranges:
    if not flags & re.IGNORECASE:
        if not negate:
            return ((cp, cp),)
        return _normalize([(0, cp - 1), (cp + 1, _MAX_CP)])
    cased = _cased()
    if cased is None:
        source = ("[^" if negate else "[") + f"\\U{cp:08x}]"
        return _python_set(source, flags & _SET_FLAGS)
    # A character another one can equal under re.IGNORECASE has a case
    # mapping itself; Python's engine decides which of those match.
    tolower = importlib.import_module("_sre").unicode_tolower
    rx = re.compile(f"\\U{cp:08x}", flags & _SET_FLAGS)
    candidates = set(cased) | {cp, tolower(cp)}
    same = [(x, x) for x in candidates if rx.fullmatch(chr(x))]
    matched = _normalize(same)
    if not negate:
        return matched
    out: List[Tuple[int, int]] = []
    last = 0
    for lo, hi in matched:
        out.append((last, lo - 1))
        last = hi + 1
    out.append((last, _MAX_CP))
    return _normalize(out)


def _cp(c: int) -> str:
    if c < 0x80 and (chr(c).isalnum() or c == 0x5F):
        return chr(c)
    return f"\\x{{{c:x}}}"


def _emit_set(ranges: Ranges) -> str:
    if not ranges:
        # Never matches: a class with nothing in it.
        return r"[^\x{0}-\x{10ffff}]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _cp(ranges[0][0])
    parts = []
    for lo, hi in ranges:
        parts.append(_cp(lo) if lo == hi else f"{_cp(lo)}-{_cp(hi)}")
    return "[" + "".join(parts) + "]"


_REFUSED = {
    "GROUPREF": ("backreference", "the engine has no backreferences"),
    "GROUPREF_EXISTS": ("conditional (?(group)...)", "the engine has no conditionals"),
    "GROUPREF_IGNORE": ("backreference", "the engine has no backreferences"),
    "ATOMIC_GROUP": ("atomic group (?>...)", "the engine has no atomic groups"),
    "POSSESSIVE_REPEAT": ("possessive repeat (*+, ++, ?+, {m,n}+)", "the engine has no possessive repeats"),
}


class _Emitter:
    def __init__(self, source: str):
        self.source = source

    def refuse(self, construct: str, why: str) -> ValueError:
        return _fail(self.source, construct, why)

    def seq(self, data: Any, flags: int) -> str:
        return "".join(self.node(op, av, flags) for op, av in data)

    def node(self, op: Any, av: Any, flags: int) -> str:
        name = getattr(op, "name", str(op))
        if op is _c.LITERAL:
            return _emit_set(_literal_ranges(av, flags, False))
        if op is _c.NOT_LITERAL:
            return _emit_set(_literal_ranges(av, flags, True))
        if op is _c.IN:
            return _emit_set(_class_ranges(av, flags))
        if op is _c.ANY:
            return r"(?s:.)" if flags & re.DOTALL else r"[^\n]"
        if op is _c.BRANCH:
            return "(?:" + "|".join(self.seq(alt, flags) for alt in av[1]) + ")"
        if op is _c.SUBPATTERN:
            group, add, remove, sub = av
            if (add | remove) & re.LOCALE:
                raise self.refuse("re.LOCALE", "the engine works on Unicode text")
            inner = self.seq(sub, (flags | add) & ~remove)
            return ("(" if group is not None else "(?:") + inner + ")"
        if op is _c.MAX_REPEAT or op is _c.MIN_REPEAT:
            lo, hi, sub = av
            if hi == _MAXREPEAT:
                count = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
            elif lo == hi:
                count = f"{{{lo}}}"
            elif (lo, hi) == (0, 1):
                count = "?"
            else:
                count = f"{{{lo},{hi}}}"
            if op is _c.MIN_REPEAT:
                count += "?"
            return "(?:" + self.seq(sub, flags) + ")" + count
        if op is _c.AT:
            return self.at(av, flags)
        if name in ("ASSERT", "ASSERT_NOT"):
            direction = av[0]
            negative = "negative " if name == "ASSERT_NOT" else ""
            if direction == 1:
                what = f"{negative}look-ahead " + ("(?!...)" if negative else "(?=...)")
            else:
                what = f"{negative}look-behind " + ("(?<!...)" if negative else "(?<=...)")
            raise self.refuse(what, "the engine has no look-around")
        if name in _REFUSED:
            construct, why = _REFUSED[name]
            raise self.refuse(construct, why)
        raise self.refuse(f"the construct {name}", "the translation does not know it")

    def at(self, code: Any, flags: int) -> str:
        if code is _c.AT_BEGINNING:
            return r"(?m:^)" if flags & re.MULTILINE else r"\A"
        if code is _c.AT_BEGINNING_STRING:
            return r"\A"
        if code is _c.AT_END:
            if flags & re.MULTILINE:
                return r"(?m:$)"
            raise self.refuse(
                "$ without re.MULTILINE",
                "Python's $ also matches before a newline that ends the text, "
                "and a stream cannot know a newline is the last; "
                "use \\Z for the end of the stream or re.MULTILINE for ends of lines",
            )
        if code is _c.AT_END_STRING:
            return r"\z"
        if code is _c.AT_BOUNDARY:
            if flags & re.ASCII:
                return r"(?-u:\b)"
            raise self.refuse(
                "\\b in Unicode mode",
                "Python's word characters differ from the engine's "
                "(combining marks, for one); use re.ASCII, where \\b is exact",
            )
        if code is _c.AT_NON_BOUNDARY:
            raise self.refuse("\\B", "the engine has no exact equivalent")
        raise self.refuse(f"the anchor {code}", "the translation does not know it")


class Translated:
    """A Python pattern in the engine's syntax, with Python's compiled
    pattern (for group names and templates)."""

    __slots__ = ("source", "pattern", "compiled")

    def __init__(self, source: str, pattern: str, compiled: "re.Pattern[str]"):
        self.source = source
        self.pattern = pattern
        self.compiled = compiled


def compile_pattern(pattern: Union[str, "re.Pattern[str]"], flags: int = 0) -> "re.Pattern[str]":
    """The compiled Python pattern of `pattern` and `flags`, refusing bytes."""
    if isinstance(pattern, re.Pattern):
        if flags:
            raise ValueError("cannot process flags argument with a compiled pattern")
        compiled = pattern
    elif isinstance(pattern, str):
        compiled = re.compile(pattern, flags)
    else:
        raise TypeError(f"pattern must be a str or re.Pattern, not {type(pattern).__name__}")
    if not isinstance(compiled.pattern, str):
        raise _fail(repr(compiled.pattern), "a bytes pattern", "the engine works on text (str)")
    return compiled


@lru_cache(maxsize=512)
def _translate(source: str, flags: int) -> str:
    if flags & re.LOCALE:
        raise _fail(source, "re.LOCALE", "the engine works on Unicode text")
    parsed = _sre_parse.parse(source, flags & ~re.DEBUG)
    flags = parsed.state.flags
    if flags & re.LOCALE:
        raise _fail(source, "re.LOCALE", "the engine works on Unicode text")
    out = _Emitter(source).seq(parsed.data, flags)
    if parsed.getwidth()[0] == 0:
        raise _fail(
            source,
            "a pattern that can match the empty string",
            "empty matches between characters have no place in a stream of replacements",
        )
    return out


def translate(pattern: Union[str, "re.Pattern[str]"], flags: int = 0) -> str:
    """Translates a Python pattern (a ``re.Pattern``, or a pattern string and
    ``re`` flags) into the engine's syntax, with the same meaning.

    Raises ``ValueError`` naming the construct when the engine cannot match
    exactly what Python would, and ``re.error`` when the pattern is not
    valid Python syntax.

    >>> translate("a.c")
    'a[^\\\\n]c'
    >>> translate(re.compile("(?P<year>19|20)"))
    '((?:19|20))'
    >>> translate("x$", re.MULTILINE)
    'x(?m:$)'
    >>> translate(r"(\\w)\\1")
    Traceback (most recent call last):
        ...
    ValueError: pattern '(\\\\w)\\\\1': backreference is not supported: the engine has no backreferences
    """
    compiled = compile_pattern(pattern, flags)
    return _translate(compiled.pattern, compiled.flags)


def translate_template(template: str, compiled: "re.Pattern[str]") -> str:
    """Translates a ``re.sub`` replacement template (``\\1``, ``\\g<1>``,
    ``\\g<name>``, ``\\n`` and the other escapes ``re.sub`` processes) for the
    pattern `compiled` into the engine's template syntax (``${1}``, ``$$``).

    Raises ``re.error`` as ``re.sub`` would for a bad template.

    >>> translate_template(r"<\\g<user>> costs $\\1\\n", re.compile(r"(?P<user>\\w+)"))
    '<${1}> costs $$${1}\\n'
    """
    parts = _template_parts(template, compiled)
    out = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"${{{part}}}")
        elif part:
            out.append(part.replace("$", "$$"))
    return "".join(out)


def _template_parts(template: str, compiled: "re.Pattern[str]") -> List[Union[str, int]]:
    """The template as literal pieces and group numbers, from Python's own
    template parser (its shape changed in 3.12)."""
    parsed = _sre_parse.parse_template(template, compiled)
    if isinstance(parsed, tuple):  # before 3.12: (groups, literals with holes)
        groups, literals = parsed
        pieces: List[Optional[Union[str, int]]] = list(literals)
        for index, group in groups:
            pieces[index] = group
        return [p for p in pieces if p is not None]
    # 3.12 and later: literal, group, literal, group, ..., literal
    return [p for p in parsed if p is not None]
