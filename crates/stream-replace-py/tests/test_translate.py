"""Python's regex syntax, translated exactly or refused.

Every supported construct is compared with Python's ``re`` on whole inputs:
the matches (spans and groups, as the replacement function sees them) and
the replaced text must be those ``re.finditer`` and ``re.sub`` give.
"""

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_replace import Replacer, translate
from reference import replace_all

# Characters where the engines' Unicode tables or case rules could differ.
TRICKY = (
    "aAbBzZ019_ -.,;:!?@#$%^&*()[]{}<>|/\\'\"\n\r\t\x0b\x0c\x1c\x1f\x85\xa0"
    "éÉe\u0301\u093f\u0915\u0663²½ⅫkK\u212aſsS\u017fİıiIßẞΣσςﬀ‿_\u2028\u3000世界"
)
texts = st.text(alphabet=st.sampled_from(TRICKY), max_size=40) | st.text(max_size=20)

# (pattern, flags): every supported construct, alone and in combination.
SUPPORTED = [
    ("abc", 0),
    ("a.c", 0),
    ("a.c", re.S),
    (r"\d+", 0),
    (r"\d+", re.A),
    (r"\D", 0),
    (r"\w+", 0),
    (r"\w+", re.A),
    (r"\W+", 0),
    (r"\s+", 0),
    (r"\s", re.A),
    (r"\S+", 0),
    (r"[a-z]+", 0),
    (r"[a-z]+", re.I),
    (r"[^a-z\s]+", 0),
    (r"[^a-z\s]+", re.I),
    (r"[\w.+-]+@[\w-]+\.\w+", 0),
    ("[[:alpha:]]+", 0),  # literal text in Python (with a FutureWarning)
    ("[a&&b]", 0),
    (r"[]a]", 0),
    (r"[-a]", 0),
    (r"[\]\\^-]", 0),
    ("k", re.I),
    ("s", re.I),
    ("i", re.I),
    ("ß", re.I),
    ("σ", re.I),
    ("é", re.I),
    ("K+", re.I | re.A),
    (r"(?i)abc|X", 0),
    (r"a(?i:b)c", 0),
    (r"(?i)a(?-i:b)c", 0),
    (r"^a", 0),
    (r"^a", re.M),
    (r"a$", re.M),
    (r"\Aa", 0),
    (r"a\Z", 0),
    (r"\ba\w*", re.A),
    (r"\w+\b", re.A),
    (r"(?P<first>\w)(?P<rest>\w*)", 0),
    (r"(a)|(b)", 0),
    (r"(a)(x)?", 0),
    (r"a{,2}b", 0),
    (r"a{2,3}", 0),
    (r"a{2}", 0),
    (r"a{2,}", 0),
    (r"a+?", 0),
    (r"a*?b", 0),
    (r"a??b", 0),
    (r"a{1,3}?", 0),
    (r"<[^>]*?>", 0),
    (r"<.*?>", re.S),
    (r"a|ab", 0),
    (r"ab|a", 0),
    (r"(?:a|ab)(?:c|bcd)", 0),
    (r"((a)|b)+", 0),
    (r"(a|b)*c", 0),
    (r"\n\t\x41\u00e9\N{EM DASH}\0", 0),
    (r"\.\*\+\?\(\)\[\]\{\}\|\$\^", 0),
    (" a  b # comment\n c", re.X),
    (r"[ ]a", re.X),
    (r"\d{3}-\d{2}-\d{4}", 0),
    (r"1[3-9]\d{9}", 0),
    (r"sk-[A-Za-z0-9]{8,}", 0),
    (r"<think>[\s\S]*?</think>", 0),
    (r"[^\W\d]+", 0),
    (r"(?s).+", 0),
    (r"(?m)^\w+$", 0),
    (r"x*y", 0),
]


_SEEN = []
_REPLACERS = {}


def _record(m):
    _SEEN.append((m.span(), m.group(), m.groups(), m.groupdict(), [m.span(i) for i in range(m.re.groups + 1)]))
    return "<" + m.group() + ">"


def _engine_matches(rx, text):
    """The matches a replacement function sees on the whole text, and the
    output (one replacer per pattern: building one takes a while)."""
    r = _REPLACERS.get(rx)
    if r is None:
        r = _REPLACERS[rx] = Replacer([(rx, _record)])
    _SEEN.clear()
    r.reset()
    out = r.feed(text) + r.flush()
    return list(_SEEN), out


def _python_matches(rx, text):
    seen = [
        (m.span(), m.group(), m.groups(), m.groupdict(), [m.span(i) for i in range(rx.groups + 1)])
        for m in rx.finditer(text)
    ]
    return seen, rx.sub(lambda m: "<" + m.group() + ">", text)


@pytest.mark.parametrize("pattern,flags", SUPPORTED, ids=[f"{p!r}/{int(f)}" for p, f in SUPPORTED])
@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_same_matches_as_re(pattern, flags, text):
    rx = re.compile(pattern, flags)
    assert _engine_matches(rx, text) == _python_matches(rx, text)


@pytest.mark.parametrize(
    "pattern,flags,text",
    [
        ("k", re.I, "K\u212ak"),
        ("s", re.I, "sS\u017f"),
        ("i", re.I, "iIİı"),
        (r"\w+", 0, "e\u0301 \u093f ² ‿"),
        (r"\s+", 0, "a\x1c\x1f\x85\u2028b"),
        (r"\d+", 0, "\u0663\u0664 ²"),
        (r"(?m)^\w+$", 0, "ab\ncd\n"),
        ("a.c", 0, "a\nc abc"),
        (r"a|ab", 0, "ab"),
        (r"<.*?>", re.S, "<a\n>b>"),
    ],
)
def test_known_differences_between_the_engines_are_handled(pattern, flags, text):
    """Texts where a naive translation (the engine's own \\w, \\s, \\d,
    case folding or $) would differ from Python."""
    rx = re.compile(pattern, flags)
    assert _engine_matches(rx, text) == _python_matches(rx, text)


NEW_IN_311 = pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.11 syntax")

REFUSED = [
    (r"a(?=b)", "look-ahead (?=...)"),
    (r"a(?!b)", "negative look-ahead (?!...)"),
    (r"(?<=a)b", "look-behind (?<=...)"),
    (r"(?<!a)b", "negative look-behind (?<!...)"),
    (r"(a)\1", "backreference"),
    (r"(?P<x>a)(?P=x)", "backreference"),
    (r"(a)?(?(1)b|c)", "conditional (?(group)...)"),
    pytest.param(r"(?>ab)", "atomic group (?>...)", marks=NEW_IN_311),
    pytest.param(r"a++", "possessive repeat", marks=NEW_IN_311),
    pytest.param(r"a{1,2}+", "possessive repeat", marks=NEW_IN_311),
    (r"a$", "$ without re.MULTILINE"),
    (r"\bword", "\\b in Unicode mode"),
    (r"(?a)a\B", "\\B"),
    (r"a*", "a pattern that can match the empty string"),
    (r"(?:)", "a pattern that can match the empty string"),
    (r"x|", "a pattern that can match the empty string"),
]


@pytest.mark.parametrize("pattern,construct", REFUSED)
def test_refused_construct_is_named(pattern, construct):
    with pytest.raises(ValueError) as info:
        Replacer([("ok", "fine"), (re.compile(pattern), "x")])
    message = str(info.value)
    assert message.startswith(f"rule 1: pattern {pattern!r}: {construct}"), message
    assert "is not supported" in message


def test_translate_refuses_what_the_replacer_refuses():
    with pytest.raises(ValueError, match=r"look-ahead"):
        translate("a(?=b)")
    with pytest.raises(ValueError, match=r"compiled pattern"):
        translate(re.compile("a"), re.I)
    with pytest.raises(ValueError, match=r"bytes pattern"):
        translate(re.compile(b"a"))


def test_invalid_python_syntax_is_a_re_error():
    with pytest.raises(re.error):
        translate("(unclosed")


TEMPLATE_PATTERN = re.compile(r"(?P<name>[a-z])(\d)?(x)?(y)?(z)?(w)?(v)?(u)?(t)?(s)?")
TEMPLATES = [
    r"[\1]",
    r"\g<1>\g<0>",
    r"\g<name>!",
    r"\\",
    r"$1 and $$",
    r"\n\t\r\f\v\a\b",
    r"\101\0",
    r"\&\%",
    r"<\2>",  # group 2 does not always take part: empty, as in re.sub
    r"\g<1>0",
    r"\10",
]


@pytest.mark.parametrize("template", TEMPLATES)
@settings(max_examples=25, deadline=None)
@given(text=texts)
def test_template_as_re_sub(template, text):
    pattern = TEMPLATE_PATTERN
    r = _REPLACERS.get(template)
    if r is None:
        r = _REPLACERS[template] = Replacer([(pattern, template)])
    r.reset()
    assert r.feed(text) + r.flush() == pattern.sub(template, text)


@pytest.mark.parametrize("template", [r"\g<nope>", r"\3", r"\g<1", r"\q"])
def test_bad_template_names_the_rule(template):
    with pytest.raises(ValueError, match=r"^rule 0: pattern '\(a\)\(b\)': bad template"):
        Replacer([(re.compile("(a)(b)"), template)])


TOGETHER = [(re.compile(p, f), "<\\g<0>>") for p, f in SUPPORTED[:30]]


@settings(max_examples=100, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 60), max_size=8))
def test_supported_constructs_together_for_every_split(text, cuts):
    from reference import run, split_at

    r = _REPLACERS.get("together")
    if r is None:
        r = _REPLACERS["together"] = Replacer(TOGETHER)
    assert run(r, split_at(text, cuts)) == replace_all(text, TOGETHER)
