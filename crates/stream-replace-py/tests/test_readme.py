"""The examples of the API this package is a drop-in for, run unchanged."""

import asyncio
import re

from reference import replace_all

TEXT = (
    "请勿提及敏感词。The secret plan: call 13912345678"
    "<think>the user wants 3 things</think> then buy 21 apples, secret!"
)


def tokens(text, size=3):
    return [text[i : i + size] for i in range(0, len(text), size)]


ai_stream = tokens(TEXT)
chunks = tokens("hello there, hello world, hel" + "lo", 2)


async def _agen(items):
    for item in items:
        await asyncio.sleep(0)
        yield item


def test_quick_start(capsys):
    import re
    from stream_replace import Replacer

    r = Replacer([
        ("敏感词", "***"),                                        # string → string
        ("secret", lambda s: s[0] + "***"),                       # string → callable
        (re.compile(r"1[3-9]\d{9}"), "[PHONE]"),                  # regex  → string
        (re.compile(r"<think>[\s\S]*?</think>"), ""),              # regex  → remove
        (re.compile(r"(\d+)"), lambda m: str(int(m.group()) * 2)), # regex  → callable
    ])

    for chunk in ai_stream:
        safe_text = r.feed(chunk)
        print(safe_text, end="")

    print(r.flush(), end="")

    out = capsys.readouterr().out
    assert out == "请勿提及***。The s*** plan: call [PHONE] then buy 42 apples, s***!"
    assert out == replace_all(
        TEXT,
        [
            ("敏感词", "***"),
            ("secret", lambda s: s[0] + "***"),
            (re.compile(r"1[3-9]\d{9}"), "[PHONE]"),
            (re.compile(r"<think>[\s\S]*?</think>"), ""),
            (re.compile(r"(\d+)"), lambda m: str(int(m.group()) * 2)),
        ],
    )


def test_wrap(capsys):
    from stream_replace import Replacer

    r = Replacer([("hello", "world")])
    for text in r.wrap(chunks):
        print(text, end="")
    assert capsys.readouterr().out == "world there, world world, world"


def test_wrap_async(capsys):
    from stream_replace import Replacer

    r = Replacer([("hello", "world")])
    async_chunks = _agen(chunks)

    async def main():
        async for text in r.wrap_async(async_chunks):
            print(text, end="")

    asyncio.run(main())
    assert capsys.readouterr().out == "world there, world world, world"


def test_functional_sync(capsys):
    from stream_replace import stream_replace, astream_replace

    # sync
    for text in stream_replace(chunks, [("hello", "world")]):
        print(text, end="")
    assert capsys.readouterr().out == "world there, world world, world"


def test_functional_async(capsys):
    from stream_replace import stream_replace, astream_replace

    async_chunks = _agen(chunks)

    async def main():
        # async
        async for text in astream_replace(async_chunks, [("hello", "world")]):
            print(text, end="")

    asyncio.run(main())
    assert capsys.readouterr().out == "world there, world world, world"


def test_reset_then_reuse():
    from stream_replace import Replacer

    r = Replacer([("hello", "world")])
    assert r.feed("say hel") == "say "
    r.reset()  # "hel" is dropped, never emitted
    assert r.feed("lo") == "lo"
    assert r.flush() == ""


def test_split_phone_is_replaced():
    """The case the guessing hold-back gets wrong: a phone number cut
    across tokens."""
    from stream_replace import Replacer

    r = Replacer([(re.compile(r"1[3-9]\d{9}"), "[PHONE]"), (re.compile(r"(\d+)"), lambda m: m.group() * 2)])
    out = "".join(r.feed(c) for c in ["call 1390", "01", "2345", "6 now"]) + r.flush()
    assert out == "call [PHONE] now"


def _readme_block():
    import pathlib

    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_crate_readme_example(capsys):
    scope = {}
    exec(compile(_readme_block(), "README.md", "exec"), scope)
    assert capsys.readouterr().out == "call [PHONE] about the s***: 42\nokworld"
    asyncio.run(scope["relay"](_agen(["a sec", "ret 1", "0"])))
    assert capsys.readouterr().out == "a s*** 20"
