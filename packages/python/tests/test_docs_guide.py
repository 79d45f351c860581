"""The Python snippet of the reference's quick start (``### In Python`` in spec/openapi.yaml) runs as a reader
would run it: against the sandbox, the first run signs in through the loopback redirect and prints the user,
the second run reads the token file and prints the user without opening a browser."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tenant_integration.testing import SandboxClient, SandboxProcess
from test_packaging import Reader, free_port

REPO = Path(__file__).resolve().parents[3]
SANDBOX = ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
GUIDE_TENANT = "http://127.0.0.1:4020"
GUIDE_REDIRECT = "http://127.0.0.1:53682/callback"


def python_snippet() -> str:
    """The first ``python`` block under ``### In Python`` of the quick start, unindented."""
    text = (REPO / "spec" / "openapi.yaml").read_text()
    section = text[text.index("    ### In Python") :]
    block = re.search(r"```python\n(.*?)\n\s*```", section, re.DOTALL)
    assert block is not None, "the quick start has no Python block under '### In Python'"
    return "\n".join(line.removeprefix("    ") for line in block.group(1).splitlines()) + "\n"


def test_the_guides_python_snippet_signs_in_once_and_keeps_its_tokens_between_runs(tmp_path: Path) -> None:
    snippet = python_snippet()
    assert f'"{GUIDE_TENANT}"' in snippet
    assert f'"{GUIDE_REDIRECT}"' in snippet
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    with SandboxProcess(
        command=SANDBOX, clients=[SandboxClient(id="demo-cli", redirect_uris=(redirect_uri,))]
    ) as sandbox:
        program = tmp_path / "guide.py"
        program.write_text(snippet.replace(GUIDE_TENANT, sandbox.url).replace(GUIDE_REDIRECT, redirect_uri))
        reader = Reader.make(tmp_path)
        first = reader.run(Path(sys.executable), program)
        assert len(first.opened) == 1
        assert "Ada Lovelace" in first.stdout
        second = reader.run(Path(sys.executable), program)
        assert second.opened == []
        assert "Ada Lovelace" in second.stdout
        assert (reader.home / ".config" / "my-cli" / "tokens.json").stat().st_mode & 0o777 == 0o600
        assert sandbox.refresh_count() == 0
