"""The guard layer: rules, actions, validators, sessions, filters, evaluate."""

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_replace.guard import (
    Block,
    Counter,
    Guard,
    GuardError,
    KeepLast,
    KeyedHash,
    Mask,
    Rule,
    StreamBlockedError,
    pii,
    pii_rules,
)

EMAIL = r"[\w.]+@\w+\.\w+"
SSN = r"(?a)\b\d{3}-\d{2}-\d{4}\b"

BASIC = Guard(
    [
        Rule(EMAIL, Counter("EMAIL"), id="email"),
        Rule(SSN, Block("SSN in output"), id="ssn", validator="us_ssn"),
        Rule(r"(?a)\b\d{4}(?: ?\d{4}){3}\b", KeepLast(4), id="card", validator="luhn"),
        Rule("secret", Mask("***"), literal=True, id="word"),
    ],
    allow=["help@example.com"],
)
PII = Guard(pii())


def run(session, pieces):
    chunks = []
    for p in pieces:
        chunks += session.push(p)
    chunks += session.flush()
    return chunks


def text_of(chunks):
    return "".join(c.text for c in chunks)


def splits(text, cuts):
    cuts = sorted({c % (len(text) + 1) for c in cuts})
    out, last = [], 0
    for c in cuts + [len(text)]:
        out.append(text[last:c])
        last = c
    return out


# ------------------------------------------------------------------ actions


def test_actions():
    assert BASIC.evaluate("a secret").text == "a ***"
    assert BASIC.evaluate("ann@x.org bob@y.org ann@x.org").text == "[EMAIL_1] [EMAIL_2] [EMAIL_1]"
    assert BASIC.evaluate("card 4111 1111 1111 1111.").text == "card ***************1111."
    g = Guard([Rule(EMAIL, KeyedHash("EMAIL", b"k"))])
    a, b, c = g.evaluate("ann@x.org ann@x.org bob@y.org").text.split()
    assert a == b != c and re.fullmatch(r"\[EMAIL_[0-9a-f]{12}\]", a)
    e = BASIC.evaluate("ok 123-45-6789 never")
    assert (e.text, e.verdict, e.reason, e.block.rule_id, e.block.span) == (
        "ok ", "block", "SSN in output", "ssn", (3, 14))


def test_ids_default_to_index():
    g = Guard([Rule("a", literal=True), Rule("b", literal=True, id="bee")])
    assert g.rule_ids == ["0", "bee"]
    assert g.evaluate("ab").text == "[REDACTED][REDACTED]"


def test_bad_rules_name_their_index():
    with pytest.raises(ValueError, match="rule 1"):
        Guard([Rule("a", literal=True), Rule("(", Mask())])
    with pytest.raises(ValueError, match="rule 0: unknown validator"):
        Guard([Rule("a", validator="mod97")])
    with pytest.raises(ValueError, match="no rule 'mail' in the pii pack"):
        pii(exclude=["mail"])
    with pytest.raises(TypeError):
        Guard(["a"])


# --------------------------------------------------------------- validators


def test_builtin_validators():
    assert BASIC.evaluate("4111 1111 1111 1112").text == "4111 1111 1111 1112"  # Luhn fails
    assert BASIC.evaluate("000-12-3456").verdict == "pass"  # not an SSN
    g = Guard([Rule(r"(?a)\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b", Mask("[IBAN]"),
                    validator="iban")])
    assert g.evaluate("GB82 WEST 1234 5698 7654 32").text == "[IBAN]"
    assert g.evaluate("GB83 WEST 1234 5698 7654 32").text == "GB83 WEST 1234 5698 7654 32"


def test_python_validator():
    seen = []

    def even(s):
        seen.append(s)
        return int(s) % 2 == 0

    g = Guard([Rule(r"(?a)\b\d+\b", Mask("[EVEN]"), validator=even)])
    assert text_of(run(g.session(), ["1 2", "2 3 ", "4"])) == "1 [EVEN] 3 [EVEN]"
    assert seen == ["1", "22", "3", "4"]


def test_python_validator_that_raises_closes_the_stream():
    def boom(s):
        raise KeyError("no")

    g = Guard([Rule(r"\d+", Mask("[N]"), validator=boom)])
    s = g.session()
    assert text_of(s.push("a ")) == "a "
    with pytest.raises(GuardError) as info:
        s.push("12 b")
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(GuardError):  # stays closed
        s.push("more")
    s.reset()
    assert text_of(run(s, ["no digits"])) == "no digits"
    with pytest.raises(GuardError):
        g.evaluate("7")


# --------------------------------------------------------------- allowlists


def test_allowlists():
    assert BASIC.evaluate("help@example.com, ann@x.org").text == "help@example.com, [EMAIL_1]"
    s = BASIC.session()
    s.allow("ann@x.org")
    assert text_of(run(s, ["ann@x.o", "rg, bob@y.org"])) == "ann@x.org, [EMAIL_1]"
    assert s.counters()["allowed"] == 1


# ---------------------------------------------------------------- sessions


def test_session_chunks():
    s = BASIC.session()
    chunks = run(s, ["Mail ann@ex", "ample.org", " now. ", "Bye"])
    assert [c.chunk_index for c in chunks] == list(range(1, len(chunks) + 1))
    assert text_of(chunks) == "Mail [EMAIL_1] now. Bye"
    assert [c.redacted for c in chunks] == ["[EMAIL_1]" in c.text for c in chunks]
    (t,) = [t for c in chunks for t in c.triggers]
    assert (t.rule_id, t.action, t.span) == ("email", "mask", (5, 20))
    assert chunks[-1].is_final and not any(c.is_final for c in chunks[:-1])
    assert all(c.action == ("mask" if c.redacted else "pass") for c in chunks)
    with pytest.raises(GuardError, match="push after flush"):
        s.push("x")
    assert s.flush() == []
    assert s.counters()["matches"]["email"] == 1


def test_session_block():
    s = BASIC.session()
    out = s.push("Intake: ") + s.push("SSN on file is 123") + s.push("-45") + s.push("-6789. Next")
    assert text_of(out) == "Intake: SSN on file is "
    blocked = out[-1]
    assert (blocked.blocked, blocked.text, blocked.action, blocked.reason, blocked.is_final) == (
        True, "", "block", "SSN in output", True)
    assert [(t.rule_id, t.span) for t in blocked.triggers] == [("ssn", (23, 34))]
    assert not any(c.blocked for c in out[:-1])
    assert s.is_blocked and s.block.rule_id == "ssn"
    assert s.push("more text") == [] and s.flush() == []
    s.reset()
    assert not s.is_blocked
    assert text_of(run(s, ["fine"])) == "fine"


def test_session_block_at_flush_and_with_masks_before():
    s = BASIC.session()
    out = s.push("a@b.co then 123-45-678") + s.push("9")
    assert text_of(out) == "[EMAIL_1] then "
    assert not any(c.blocked for c in out)
    out = s.flush()
    assert [c.blocked for c in out] == [True]
    assert s.is_blocked


def test_release_at_words():
    s = BASIC.session(release_at_words=True)
    chunks = run(s, ["Thanks for wai", "ting. Email ann@", "x.org or", " call"])
    assert text_of(chunks) == "Thanks for waiting. Email [EMAIL_1] or call"
    for c in chunks[:-1]:
        assert c.text == "" or c.text[-1] in " \t\n\r.,;:!?()[]{}<>\"'", c


def test_held_limit_fails_closed():
    g = Guard([Rule(r"<think>[\s\S]*?</think>", Mask(""))], max_held=64)
    s = g.session()
    with pytest.raises(GuardError, match="held"):
        s.push("<think>" + "x" * 100)
    with pytest.raises(GuardError):
        s.push("</think>")


def test_spans_are_code_points():
    s = BASIC.session()
    chunks = run(s, ["héllo wörld ", "ann", "@x.org"])
    (t,) = [t for c in chunks for t in c.triggers]
    text = "héllo wörld ann@x.org"
    assert text[t.span[0]:t.span[1]] == "ann@x.org"


# ----------------------------------------------------------------- filters


def test_stream_filter():
    assert "".join(BASIC.stream_filter(["mail ann@", "x.org ok"])) == "mail [EMAIL_1] ok"
    shown = []
    with pytest.raises(StreamBlockedError) as info:
        for t in BASIC.stream_filter(["SSN on file is ", "123", "-45", "-6789", ". Next"]):
            shown.append(t)
    e = info.value
    assert isinstance(e, RuntimeError) and isinstance(e, GuardError)
    assert (e.rule_id, e.reason, e.action) == ("ssn", "SSN in output", "block")
    assert e.released == "".join(shown) == "SSN on file is "


def test_astream_filter():
    async def agen(pieces):
        for p in pieces:
            await asyncio.sleep(0)
            yield p

    async def collect(pieces):
        return [t async for t in BASIC.astream_filter(agen(pieces))]

    assert "".join(asyncio.run(collect(["a secr", "et, ann@x", ".org"]))) == "a ***, [EMAIL_1]"
    with pytest.raises(StreamBlockedError) as info:
        asyncio.run(collect(["ok ", "123-45-", "6789"]))
    assert info.value.released == "ok "


def test_stream_filter_rejects_bytes():
    with pytest.raises(TypeError):
        list(BASIC.stream_filter([b"bytes"]))


# ---------------------------------------------------------------- the pack


def test_pii_pack():
    ids = [r.id for r in pii_rules()]
    assert ids[:2] == ["private_key", "anthropic_key"] and "us_ssn" in ids
    e = PII.evaluate("IBAN GB82 WEST 1234 5698 7654 32, host 10.0.0.1, SSN 123-45-6789!")
    assert (e.text, e.block.rule_id) == ("IBAN [IBAN], host [IPV4], SSN ", "us_ssn")
    g = Guard(pii(exclude=["ipv4"], actions={"email": Counter("EMAIL")}, blocks=False))
    assert g.evaluate("10.0.0.1 a@b.io 123-45-6789").text == "10.0.0.1 [EMAIL_1] [US_SSN]"
    # A rule before the pack wins a tie with it.
    g = Guard([Rule(EMAIL, Mask("<mail>"), id="mine")] + pii())
    assert g.evaluate("a@b.io").text == "<mail>"


# ----------------------------------------------- evaluate equals the stream

FRAGMENTS = st.sampled_from(
    ["ann@x.org", "bob.b@y.io", "123-45-6789", "000-12-3456", "4111 1111 1111 1111",
     "4111 1111 1111 1112", "secret", "help@example.com", " ", ". ", "é", "a", "12", "-", "@"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAGMENTS, max_size=14), st.lists(st.integers(0, 400), max_size=8),
       st.sampled_from([False, True, 3]))
def test_evaluate_equals_every_stream(parts, cuts, words):
    text = "".join(parts)
    whole = BASIC.evaluate(text)
    s = BASIC.session(release_at_words=words)
    chunks = run(s, splits(text, cuts))
    assert text_of(chunks) == whole.text
    assert [t for c in chunks for t in c.triggers] == list(whole.triggers)
    assert s.is_blocked == whole.is_blocked
    if whole.is_blocked:
        assert chunks[-1].blocked and chunks[-1].block == whole.block
    assert chunks[-1].is_final
    assert [c.chunk_index for c in chunks] == list(range(1, len(chunks) + 1))


# ------------------------------------- oracle: no byte of a planted value

FILLER = st.text(alphabet="abc ,.\n", max_size=30)
PLANTED_SSN = "123-45-6789"
PLANTED_EMAIL = "zq7x@k9w.io"


def planted_text(draw_parts):
    fill, values = draw_parts
    text = fill[0]
    for v, f in zip(values, fill[1:]):
        text += " " + v + " " + f
    return text


def leaked(output, forbidden):
    return sorted(set(output) & forbidden)


@settings(max_examples=300, deadline=None)
@given(st.lists(FILLER, min_size=3, max_size=3),
       st.lists(st.sampled_from([PLANTED_SSN, PLANTED_EMAIL]), min_size=1, max_size=2),
       st.lists(st.integers(0, 200), max_size=10))
def test_no_byte_of_a_planted_value_reaches_the_output(fill, values, cuts):
    text = planted_text((fill, values))
    pieces = splits(text, cuts)
    # Characters of the values that are in neither the filler nor a mask.
    forbidden = set(PLANTED_SSN + PLANTED_EMAIL) - set("abc ,.\n") - set("[EMAIL]")
    out = text_of(run(PII.session(), pieces))
    assert not leaked(out, forbidden), (pieces, out)
    out = []
    try:
        for t in PII.stream_filter(pieces):
            out.append(t)
    except StreamBlockedError as e:
        assert e.released == "".join(out)
    assert not leaked("".join(out), forbidden)
    if PLANTED_SSN in values:
        assert PII.evaluate(text).is_blocked


# ------------------------------------------------------------------ threads


def test_sessions_in_threads_share_one_guard():
    import threading

    texts = [f"mail u{i}@x.org, SSN {100 + i}-45-6789 end" for i in range(8)]
    results = {}

    def work(i):
        s = BASIC.session()
        out = run(s, [texts[i][j:j + 3] for j in range(0, len(texts[i]), 3)])
        results[i] = (text_of(out), s.is_blocked)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == {i: (BASIC.evaluate(texts[i]).text, True) for i in range(8)}


def test_a_session_used_by_two_threads_at_once_refuses_the_second():
    import threading

    entered, release = threading.Event(), threading.Event()

    def slow(s):
        entered.set()
        release.wait(timeout=30)
        return True

    s = Guard([Rule(r"\d+", Mask("#"), validator=slow)]).session()
    errors = []
    t = threading.Thread(target=lambda: errors.append(text_of(s.push("a 1 "))))
    t.start()
    assert entered.wait(timeout=30)
    with pytest.raises(GuardError, match="in use by another thread"):
        s.push("b")
    release.set()
    t.join(timeout=30)
    assert errors == ["a # "]


# ------------------------------------------------------------------ config


def test_from_config(monkeypatch):
    monkeypatch.setenv("SR_TEST_KEY", "k1")
    g = Guard.from_config({
        "rules": [
            {"id": "ticket", "pattern": r"TKT-\d{6}", "counter": "TICKET"},
            {"id": "acct", "pattern": r"ACCT-\d{8}", "keep_last": 4, "mask_char": "#"},
            {"id": "user", "pattern": r"user-\d+", "keyed_hash": "USER", "key_env": "SR_TEST_KEY"},
            {"id": "code", "literal": "Bluebird", "block": "codename"},
            {"id": "num", "pattern": r"(?a)\b\d{16}\b", "validator": "luhn"},
        ],
        "pack": "pii", "exclude": ["ipv4"], "pack_actions": {"phone": {"mask": "<phone>"}},
        "allow": ["help@example.com"],
    })
    e = g.evaluate("TKT-123456 ACCT-12345678 user-7 user-7 4111111111111111 10.0.0.1 help@example.com")
    t, acct, u1, u2, card, ip, mail = e.text.split()
    assert (t, acct, card, ip, mail) == ("[TICKET_1]", "#########5678", "[REDACTED]", "10.0.0.1",
                                         "help@example.com")
    assert u1 == u2 and u1.startswith("[USER_")
    assert g.evaluate("call +1 415 555 0199 now").text == "call <phone> now"
    assert g.evaluate("about Bluebird").verdict == "block"
    assert g.rule_ids[:5] == ["ticket", "acct", "user", "code", "num"]


@pytest.mark.parametrize("config, message", [
    ({"rules": [{"pattern": "a", "redact": "x"}]}, "unknown keys redact"),
    ({"rules": [{"pattern": "a", "mask": "x", "block": "y"}]}, "exactly one of"),
    ({"rules": [{"pattern": "a", "literal": "b"}]}, "exactly one of pattern, literal"),
    ({"rules": [{"pattern": "a", "keyed_hash": "E", "key_env": "SR_NO_SUCH_VAR"}]}, "key_env"),
    ({"rules": [{"pattern": r"(?<=a)b"}]}, "rule 0"),
    ({"pack": "pii", "pack_actions": {"mail": {"mask": "x"}}}, "no rule 'mail'"),
    ({"pack": "phi"}, "unknown pack"),
    ({"exclude": ["email"]}, "need a pack"),
    ({}, "needs rules or a pack"),
    ({"rules": [{"pattern": "a"}], "allow": "x"}, "allow is a list"),
])
def test_from_config_refuses(config, message):
    with pytest.raises(ValueError, match=message):
        Guard.from_config(config)
