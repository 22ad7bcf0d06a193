"""The extension module: the engine's rule sets and streams.

The Python package wraps it; its patterns are in the engine's syntax and its
templates in the engine's (``${1}``, ``$$``), as ``stream_replace._translate``
makes them.
"""

from typing import Callable, List, Optional, Tuple, Type, TypeVar, Union

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

_S = TypeVar("_S", bound="Stream")

class Stream:
    """One stream over a rule set; calls from several threads take turns.
    The package's ``Replacer`` is a subclass."""

    def __new__(cls: Type[_S], rules: Rules, *args: object, **kwargs: object) -> _S: ...
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


# The guard layer's half (``stream_replace.guard`` wraps it).

class GuardError(StreamError):
    """A guarded stream failed (over ``max_held``, a validator raised, or
    the session is in use by another thread); it stays closed until reset."""

_Trigger = Tuple[int, str, str, Optional[str], _Span]
_Block = Tuple[int, str, str, _Span]
_Chunk = Tuple[int, str, bool, bool, List[_Trigger], bool, Optional[_Block]]
_ActionSpec = Tuple[str, Optional[str], Optional[int], Optional[bytes]]
_RuleSpec = Tuple[str, str, _ActionSpec, Optional[str], Union[None, str, Callable[[str], bool]]]

def pii_pack() -> List[Tuple[str, str, str, Optional[str], bool, str, str]]:
    """The ``pii`` pack's rules: ``(id, pattern, mask, block_reason,
    has_validator, what, misses)``."""

class GuardRules:
    """A compiled guard rule set, shared by its sessions and threads."""

    def __new__(cls, specs: List[_RuleSpec], allow: List[str], max_held: Optional[int] = None) -> "GuardRules": ...
    def __len__(self) -> int: ...
    def ids(self) -> List[str]:
        """The rules' ids, in order."""
    def evaluate(self, text: str) -> Tuple[str, List[_Trigger], Optional[_Block]]:
        """The copy of record of a whole text."""
    def session(self, words: Optional[int] = None) -> "GuardSession":
        """A new stream; ``words`` releases text at word boundaries only."""

class GuardSession:
    """One guarded stream."""

    def push(self, text: str) -> List[_Chunk]: ...
    def flush(self) -> List[_Chunk]: ...
    def reset(self) -> None: ...
    def allow(self, value: str) -> None: ...
    def counters(self) -> dict: ...
    @property
    def is_blocked(self) -> bool: ...
    @property
    def is_ended(self) -> bool: ...
    @property
    def block(self) -> Optional[_Block]: ...
    @property
    def held(self) -> int: ...
