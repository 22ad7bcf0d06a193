"""Exact streaming find-and-replace for text that arrives in chunks.

A drop-in for the ``stream-replace`` package's API on a Rust engine: for
every split of the input, the output equals the whole input's, with the
leftmost match winning and the earlier rule winning a tie.

>>> import re
>>> from stream_replace import Replacer
>>> r = Replacer([("secret", "***"), (re.compile(r"1[3-9]\\d{9}"), "[PHONE]")])
>>> r.feed("my secr") + r.feed("et: 1380013") + r.feed("8000 ok") + r.flush()
'my ***: [PHONE] ok'
"""

from stream_replace._engine import StreamError, __version__
from stream_replace._replacer import Match, Replacer, astream_replace, stream_replace
from stream_replace._translate import translate

__all__ = [
    "Match",
    "Replacer",
    "StreamError",
    "astream_replace",
    "stream_replace",
    "translate",
    "__version__",
]
