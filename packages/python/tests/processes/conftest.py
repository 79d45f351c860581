"""The sandbox every process test module starts once: the repository's built sandbox with the fleet's client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tenant_integration.testing import SandboxProcess

from .fleet import start_sandbox


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxProcess]:
    with start_sandbox() as running:
        yield running
