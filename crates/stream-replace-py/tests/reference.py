"""The semantics, in plain Python: the oracle of the property tests.

Every rule is searched with ``re`` (a literal as an escaped pattern) from
the current position; the match that starts first wins, the earlier rule on
a tie; its replacement is inserted and the search goes on from its end.
"""

from __future__ import annotations

import re
from typing import Any, Callable, List, Sequence, Tuple


def replace_all(text: str, rules: Sequence[Tuple[Any, Any]]) -> str:
    compiled: List[Tuple["re.Pattern[str]", bool, Any]] = []
    for pattern, replacement in rules:
        if isinstance(pattern, str):
            compiled.append((re.compile(re.escape(pattern)), True, replacement))
        else:
            compiled.append((pattern, False, replacement))
    out = []
    pos = 0
    while pos <= len(text):
        best = None
        for i, (rx, literal, repl) in enumerate(compiled):
            m = rx.search(text, pos)
            if m is not None and (best is None or m.start() < best[0].start()):
                best = (m, literal, repl)
        if best is None:
            break
        m, literal, repl = best
        assert m.end() > m.start(), "the package refuses patterns that match empty"
        out.append(text[pos : m.start()])
        if literal:
            out.append(repl(m.group()) if callable(repl) else repl)
        else:
            out.append(repl(m) if callable(repl) else m.expand(repl))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def split_at(text: str, cuts: Sequence[int]) -> List[str]:
    """`text` cut at the given offsets (sorted, clamped, duplicates kept:
    they make empty chunks)."""
    points = sorted(min(max(c, 0), len(text)) for c in cuts)
    pieces, last = [], 0
    for p in points:
        pieces.append(text[last:p])
        last = p
    pieces.append(text[last:])
    return pieces


def run(replacer: Any, chunks: Sequence[str]) -> str:
    return "".join(replacer.feed(c) for c in chunks) + replacer.flush()


