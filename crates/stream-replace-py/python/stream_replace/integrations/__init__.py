"""Integrations of the guard layer with the gateways users already run.

Each module imports its gateway's package: import it only where that
package is installed (``stream_replace.integrations.litellm`` needs
``litellm``).
"""
