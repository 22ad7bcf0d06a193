"""The extension module: the engine's rule sets and streams.

The Python package wraps it; its patterns are in the engine's syntax and its
templates in the engine's (``${1}``, ``$$``), as ``stream_replace._translate``
makes them.
"""

from typing import Callable, List, Optional, Tuple, Union

__version__: str

#: Chunks at least this many bytes long are scanned with the GIL released.
DETACH_AT: int

class StreamError(RuntimeError):
    """A stream failed (held-back text over ``max_held``, or a replacement
    function raised in an earlier call); every call but ``reset`` raises it
    until the stream is reset."""

_Span = Tuple[int, int]
_MatchHandler = Callable[[Tuple[Optional[str], ...], Tuple[Optional[_Span], ...]], str]

class Rules:
    """A compiled rule set, immutable and shared by any number of streams
    and threads.

    Each rule is ``(is_regex, pattern, kind, replacement)``: kind 0 takes
    literal text, 1 an engine template, 2 a function of the matched str, 3
    a function of the groups' texts and spans.
    """

    def __new__(
        cls,
        rules: List[Tuple[bool, str, int, Union[str, Callable[[str], str], _MatchHandler]]],
        max_held: Optional[int] = None,
    ) -> "Rules": ...
    def stream(self) -> "Stream":
        """A new stream over these rules."""
    def __len__(self) -> int: ...

class Stream:
    """One stream over a rule set; calls from several threads take turns."""

    def feed(self, chunk: str) -> str:
        """Feeds a chunk and returns the text now safe to emit."""
    def flush(self) -> str:
        """Ends the stream and returns the rest; the next feed starts anew."""
    def reset(self) -> None:
        """Drops held text and clears a failure."""
    @property
    def held(self) -> int:
        """Bytes (UTF-8) held back."""
    @property
    def failed(self) -> bool:
        """Whether the stream refuses calls until ``reset``."""

