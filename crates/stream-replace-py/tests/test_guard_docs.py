"""GUARD.md's Python examples run as written."""

import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parent.parent / "GUARD.md"


def test_guard_md_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 2
    ns = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    out = capsys.readouterr().out
    assert "halted by us_ssn" in out and "[EMAIL_1]" in out and "dana" not in out
    shown, stored = ns["stream_and_store"](list("Reach support@example.com or ann@x.org. SSN"))
    assert shown == stored == "Reach [EMAIL_1] or [EMAIL_2]. SSN"
    shown, stored = ns["stream_and_store"](["SSN 123-45-", "6789 on file"])
    assert (shown, stored) == ("SSN ", None)
