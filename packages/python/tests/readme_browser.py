"""The reader's browser for the README programs of ``test_packaging.py``, as :func:`webbrowser.open` runs it (the
``BROWSER`` environment variable names a wrapper that runs this file with the URL).

It notes the URL it was asked to open in the file ``$README_BROWSER_LOG``, then, in a process of its own so that
``webbrowser.open`` returns at once, plays a person at a tenant that approves at once: the authorize URL's 302 is
followed to the redirect URI, where the program's loopback server waits. It notes how that went too, for the test's
messages.

    python readme_browser.py URL            note URL, approve it in the background
    python readme_browser.py --approve URL  approve it now (the background part)
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import httpx


def approve(url: str) -> str:
    """Follows ``url``'s 302 to the redirect URI; returns what happened, in a few words."""
    try:
        with httpx.Client(trust_env=False, follow_redirects=False, timeout=30) as browser:
            answer = browser.get(url)
            if answer.status_code != 302:
                return f"authorize answered {answer.status_code}"
            landed = browser.get(answer.headers["location"])
            return f"authorize 302, callback {landed.status_code}"
    except httpx.HTTPError as error:
        return f"failed: {type(error).__name__}: {error}"


def main(argv: list[str]) -> int:
    """Notes and approves (see the module's docstring)."""
    log = os.environ["README_BROWSER_LOG"]
    if argv[:1] == ["--approve"]:
        outcome = approve(argv[1])
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{outcome}\n")
        return 0
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"opened {argv[0]}\n")
    # Left running on purpose (webbrowser.open returns at once): not a ResourceWarning in the program's stderr,
    # which the test reads for the program's own unclosed resources.
    warnings.simplefilter("ignore", ResourceWarning)
    subprocess.Popen([sys.executable, __file__, "--approve", argv[0]], stdin=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
