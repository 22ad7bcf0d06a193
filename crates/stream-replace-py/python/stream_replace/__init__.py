"""Exact streaming find-and-replace for text that arrives in chunks."""

from stream_replace._engine import __version__

__all__ = ["__version__"]
