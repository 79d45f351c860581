"""Fixtures shared by the Python SDK's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def tenant_sandbox_command() -> list[str]:
    """The repository's built sandbox (packages/sandbox/dist/cli.js) for the plugin's ``tenant`` fixtures,
    started by path as the TypeScript process tests start it."""
    return ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
