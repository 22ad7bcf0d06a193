"""The Python blocks of the repository's README run as written."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def python_blocks():
    if not README.is_file():
        return []
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_blocks():
    if not README.is_file():
        pytest.skip("not run from a clone of the repository")
    assert python_blocks(), "the README's Python section has no example"


@pytest.mark.parametrize("block", python_blocks())
def test_readme_block_runs(block):
    exec(compile(block, str(README), "exec"), {})
