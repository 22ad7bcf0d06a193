"""The docstrings' examples, run as tests against the installed package."""

import doctest
import importlib

import pytest

MODULES = ["stream_replace", "stream_replace._replacer", "stream_replace._translate"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0
