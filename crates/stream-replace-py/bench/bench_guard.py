"""Throughput and per-call cost of the guard layer (`stream_replace.guard`).

On one generated text of prose with emails, SSN-shaped numbers, card
numbers, IPs and keys, with the `pii` pack (16 rules, validators, triggers
recorded, one email counter), it measures:

* a session's `push` at 4-character, 64-character and 4 KiB chunks;
* `evaluate` of the whole text (the copy of record);
* the OpenAI chunk filter on dicts at 4-character `delta.content`;
* the cost of one `push` of one character, and of one chunk through the filter.

Medians of several runs, printed as a table. Build the extension optimised
first (`maturin develop --release` or `pip install .`), or the figures are
a debug build's.

    python bench/bench_guard.py            # about a minute
    python bench/bench_guard.py --quick    # a smaller text, for a smoke run
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from stream_replace.guard import Counter, Guard, pii


def make_text(size: int, seed: int = 7) -> str:
    rnd = random.Random(seed)
    words = ("the reply lists what was asked and what comes next for the account "
             "review of this quarter with notes").split()
    values = [
        lambda: f"{rnd.choice('abcdef')}{rnd.randint(1, 999)}@example.org",
        lambda: f"{rnd.randint(100, 665)}-{rnd.randint(10, 99)}-{rnd.randint(1000, 9999)}",
        lambda: "4111 1111 1111 1111",
        lambda: f"10.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}",
        lambda: "sk-ant-api03-" + "".join(rnd.choice("abcdefXYZ0123") for _ in range(24)),
    ]
    out, n = [], 0
    while n < size:
        piece = rnd.choice(values)() if rnd.random() < 0.04 else rnd.choice(words)
        out.append(piece)
        n += len(piece) + 1
    return " ".join(out)[:size]


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    size = 200_000 if args.quick else 2_000_000
    runs = 3 if args.quick else 5
    # A block would end each stream early: the pack's blocks become masks.
    guard = Guard(pii(actions={"email": Counter("EMAIL")}, blocks=False))
    text = make_text(size)
    mb = len(text.encode()) / 1e6
    rows = []

    def session_run(chunk: int):
        pieces = [text[i:i + chunk] for i in range(0, len(text), chunk)]

        def run():
            s = guard.session()
            for p in pieces:
                s.push(p)
            s.flush()
        return run

    expected = guard.evaluate(text).text
    s = guard.session()
    got = "".join(c.text for p in (text[i:i + 4] for i in range(0, len(text), 4)) for c in s.push(p))
    got += "".join(c.text for c in s.flush())
    assert got == expected, "the stream differs from evaluate"

    for chunk in (4, 64, 4096):
        t = median_seconds(session_run(chunk), runs)
        rows.append((f"session.push, {chunk}-char chunks", mb / t, t))
    t = median_seconds(lambda: guard.evaluate(text), runs)
    rows.append(("evaluate, whole text", mb / t, t))

    pieces = [text[i:i + 4] for i in range(0, min(len(text), 400_000), 4)]
    chunks = [{"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": p},
                                                     "finish_reason": None}]} for p in pieces]
    fmb = len("".join(pieces).encode()) / 1e6

    def filter_run():
        f = guard.chunk_filter("openai")
        for c in chunks:
            f.filter(c)
        f.finish()
    t = median_seconds(filter_run, runs)
    rows.append(("chunk_filter(openai), 4-char content", fmb / t, t))
    per_chunk_filter = t / len(chunks)

    s = guard.session()
    n = 200_000 if not args.quick else 50_000
    t0 = time.perf_counter()
    for _ in range(n):
        s.push("a")
    per_push = (time.perf_counter() - t0) / n

    print(f"text: {len(text)} chars ({mb:.2f} MB), pii pack ({len(guard)} rules), median of {runs}")
    print(f"{'path':<42} {'MB/s':>8} {'seconds':>9}")
    for name, rate, secs in rows:
        print(f"{name:<42} {rate:>8.2f} {secs:>9.4f}")
    print(f"one push of one character: {per_push * 1e6:.2f} us")
    print(f"one 4-char chunk through the OpenAI filter: {per_chunk_filter * 1e6:.2f} us")


if __name__ == "__main__":
    main()
