"""The guard modules' docstring examples, run as tests."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["stream_replace.guard"])
def test_doctests(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0
