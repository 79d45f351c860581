"""The package as its users get it: the sdist and the wheel that ``pnpm build`` makes, the wheel installed with pip
into a fresh virtual environment, and the README's samples run there against a real sandbox process.

The wheel and the sdist are ``dist/``'s when they hold exactly the sources under ``src/`` (``pnpm test`` builds
first, turbo's ``test`` depends on ``build``); otherwise, e.g. when this file runs alone after an edit, they are built
into a temporary folder the way ``scripts/run.mjs build`` builds them (``python -m build --no-isolation``, the wheel
from the sdist, ``twine check --strict``).

The fresh environment is made with ``python -m venv`` (pip from ``ensurepip``) and installs without any index
(``pip install --no-index --find-links``): its dependencies come from a local folder of wheels re-packed from the
distributions installed in the repository's venv, which ``tools/python/requirements.lock`` pins and hash-checks. So
the install is hermetic, resolves exactly the dependencies the wheel declares (a missing one fails the import, an
extra one shows in the installed set), and needs no network.

README samples run here are the fenced ``python`` blocks preceded by ``<!-- test: NAME -->``; they run as written,
with only the reader's own values put in: the tenant's address and the registered loopback port.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from mypy import api as mypy_api
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tenant_integration.testing import SandboxClient, SandboxProcess

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]
SOURCES = PACKAGE / "src" / "tenant_integration"
README = PACKAGE / "README.md"
SANDBOX = ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
VERSION: str = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]

README_TENANT = "https://acme.tenant.test"
README_REDIRECT = "http://127.0.0.1:53682/callback"
README_CLIENT = "demo-integration"
DEMO_USER_NAME = "Ada Lovelace"
PAST_EXPIRY = 16 * 60
# The fresh venv must install these and nothing more (besides pip): the wheel, its two runtime dependencies and
# theirs, as the repository's pinned versions have them.
RUNTIME_DEPENDENCIES = ["httpx", "filelock"]
PROCESS_TIMEOUT = 120  # seconds; a hang guard for the child processes, not a measurement


@dataclass(frozen=True)
class Artifacts:
    """The sdist and the wheel under test: ``dist/``'s, or a fresh build's."""

    wheel: Path
    sdist: Path


def readme_samples() -> dict[str, str]:
    """The README's ``python`` blocks marked ``<!-- test: NAME -->``, by name."""
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"<!-- test: ([\w-]+) -->\s*\n```python\n(.*?)\n```", text, flags=re.DOTALL)
    samples = dict(found)
    assert len(samples) == len(found), "two README samples share a name"
    return samples


def readme_python_blocks() -> list[str]:
    """Every block of the README fenced exactly as ``python``."""
    return re.findall(r"^```python\n(.*?)\n```", README.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)


def _source_files() -> dict[str, bytes]:
    """The package's files as the wheel should carry them: ``tenant_integration/...`` -> content."""
    return {
        f"tenant_integration/{path.relative_to(SOURCES).as_posix()}": path.read_bytes()
        for path in sorted(SOURCES.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def _wheel_package_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: archive.read(name)
            for name in archive.namelist()
            if name.startswith("tenant_integration/") and not name.endswith("/")
        }


def _build(out: Path) -> None:
    """What ``scripts/run.mjs build`` does, into ``out``."""
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out)],
        cwd=PACKAGE,
        check=True,
        capture_output=True,
        timeout=PROCESS_TIMEOUT,
    )


def _twine_check(*files: Path) -> subprocess.CompletedProcess[str]:
    twine = Path(sys.executable).parent / "twine"
    return subprocess.run(
        [str(twine), "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
        timeout=PROCESS_TIMEOUT,
    )


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Artifacts:
    """``dist/``'s sdist and wheel when they are current, else a fresh build of both."""
    dist = PACKAGE / "dist"
    wheels = sorted(dist.glob("*.whl")) if dist.is_dir() else []
    sdists = sorted(dist.glob("*.tar.gz")) if dist.is_dir() else []
    if len(wheels) == 1 and len(sdists) == 1 and _wheel_package_files(wheels[0]) == _source_files():
        return Artifacts(wheel=wheels[0], sdist=sdists[0])
    out = tmp_path_factory.mktemp("dist")
    _build(out)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Artifacts(wheel=wheel, sdist=sdist)


# -- the artifacts ---------------------------------------------------------------------------------------------------


def test_the_wheel_and_the_sdist_carry_the_version_of_package_json_which_changesets_bumps(
    artifacts: Artifacts,
) -> None:
    assert artifacts.wheel.name == f"tenant_integration-{VERSION}-py3-none-any.whl"
    assert artifacts.sdist.name == f"tenant_integration-{VERSION}.tar.gz"
    with zipfile.ZipFile(artifacts.wheel) as archive:
        wheel_metadata = archive.read(f"tenant_integration-{VERSION}.dist-info/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in wheel_metadata


def test_the_wheel_ships_exactly_the_sources_with_py_typed_so_type_checkers_read_its_annotations(
    artifacts: Artifacts,
) -> None:
    files = _wheel_package_files(artifacts.wheel)
    assert "tenant_integration/py.typed" in files
    assert files == _source_files()
    with zipfile.ZipFile(artifacts.wheel) as archive:
        outside = [
            name
            for name in archive.namelist()
            if not name.startswith(("tenant_integration/", f"tenant_integration-{VERSION}.dist-info/"))
        ]
    assert outside == []


def test_the_wheel_declares_httpx_and_filelock_only_redis_and_postgres_as_extras_and_the_pytest_plugin(
    artifacts: Artifacts,
) -> None:
    with zipfile.ZipFile(artifacts.wheel) as archive:
        info = f"tenant_integration-{VERSION}.dist-info"
        wheel_metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    prefix = "Requires-Dist: "
    requires = [Requirement(line[len(prefix) :]) for line in wheel_metadata.splitlines() if line.startswith(prefix)]
    always = sorted(r.name for r in requires if r.marker is None)
    extras = sorted((r.name, str(r.marker)) for r in requires if r.marker is not None)
    assert always == sorted(RUNTIME_DEPENDENCIES)
    assert extras == [
        ("psycopg", 'extra == "postgres"'),
        ("psycopg-pool", 'extra == "postgres"'),
        ("redis", 'extra == "redis"'),
    ]
    assert "Requires-Python: >=3.11" in wheel_metadata
    assert "Classifier: Typing :: Typed" in wheel_metadata
    assert "[pytest11]\ntenant_integration = tenant_integration.pytest_plugin" in entry_points


def test_the_sdist_holds_what_the_wheel_is_built_from_and_the_readme_license_and_changelog_when_there_is_one(
    artifacts: Artifacts,
) -> None:
    with tarfile.open(artifacts.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    sources = {f"src/{name}" for name in _source_files()}
    assert sources <= names
    assert {"README.md", "LICENSE", "package.json", "pyproject.toml", "PKG-INFO"} <= names
    assert ("CHANGELOG.md" in names) == (PACKAGE / "CHANGELOG.md").is_file()
    assert not any("__pycache__" in name or name.startswith(("tests/", "dist/")) for name in names)


def test_twine_check_strict_passes_on_both(artifacts: Artifacts) -> None:
    result = _twine_check(artifacts.wheel, artifacts.sdist)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


# -- a fresh virtual environment --------------------------------------------------------------------------------------


def _closure(names: list[str]) -> list[metadata.Distribution]:
    """The installed distributions ``names`` need at run time (markers evaluated here), names included."""
    seen: dict[str, metadata.Distribution] = {}
    pending = list(names)
    while pending:
        name = canonicalize_name(pending.pop())
        if name in seen:
            continue
        distribution = metadata.distribution(name)
        seen[name] = distribution
        for line in distribution.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return sorted(seen.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def _record_hash(content: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _repack(distribution: metadata.Distribution, out: Path) -> Path:
    """A pure-Python distribution installed in the repository's venv, written back as the wheel it came from:
    its files as its RECORD lists them under site-packages (no console scripts, which pip makes again from
    ``entry_points.txt``; no bytecode; not the installer's own INSTALLER, REQUESTED, direct_url.json), with a new
    RECORD."""
    wheel_info = distribution.read_text("WHEEL") or ""
    assert "Root-Is-Purelib: true" in wheel_info, f"{distribution.metadata['Name']} is not a pure-Python wheel"
    tags = [line.split(":", 1)[1].strip() for line in wheel_info.splitlines() if line.startswith("Tag:")]
    name = canonicalize_name(distribution.metadata["Name"]).replace("-", "_")
    version = distribution.version
    wheel = out / f"{name}-{version}-{'.'.join(sorted(set(tags)))}.whl"
    skipped = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
    record_lines: list[str] = []
    dist_info = ""
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in distribution.files or []:
            path = file.as_posix()
            if path.startswith("..") or "__pycache__" in file.parts or path.endswith(".pyc"):
                continue
            if file.parts[0].endswith(".dist-info"):
                dist_info = file.parts[0]
                if file.name in skipped:
                    continue
            content = Path(str(file.locate())).read_bytes()
            archive.writestr(path, content)
            record_lines.append(f"{path},{_record_hash(content)},{len(content)}")
        assert dist_info, f"{distribution.metadata['Name']} lists no .dist-info"
        record_lines.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(record_lines) + "\n")
    return wheel


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of the runtime dependencies and of pytest (with pytest-asyncio), from the repository's venv."""
    out = tmp_path_factory.mktemp("wheelhouse")
    for distribution in _closure([*RUNTIME_DEPENDENCIES, "pytest", "pytest-asyncio"]):
        _repack(distribution, out)
    return out


@dataclass(frozen=True)
class FreshVenv:
    """A virtual environment made for this test module, with the wheel installed by pip from no index."""

    root: Path
    python: Path
    added_by_the_wheel: dict[str, str]

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Runs pip in it, offline."""
        return run_checked(
            [str(self.python), "-m", "pip", "--disable-pip-version-check", "--no-input", *args], cwd=self.root
        )


def clean_env(**extra: str) -> dict[str, str]:
    """An environment with nothing of the repository's venv or Python path in it."""
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT") if name in os.environ}
    venv_bin = str(Path(sys.executable).parent)
    keep["PATH"] = os.pathsep.join(p for p in keep.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return {**keep, "PYTHONNOUSERSITE": "1", "PIP_NO_INDEX": "1", **extra}


def run_checked(
    command: list[str], *, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs ``command``; fails the test with its output when it fails."""
    result = subprocess.run(
        command,
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=PROCESS_TIMEOUT,
    )
    assert result.returncode == 0, f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
    return result


def _installed(python: Path, cwd: Path) -> dict[str, str]:
    result = run_checked([str(python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"], cwd=cwd)
    return {canonicalize_name(item["name"]): item["version"] for item in json.loads(result.stdout)}


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, artifacts: Artifacts, wheelhouse: Path) -> FreshVenv:
    """``python -m venv``, then ``pip install --no-index --find-links <wheelhouse> <the wheel>``; pytest after."""
    root = tmp_path_factory.mktemp("fresh")
    venv = root / "venv"
    # The interpreter the repository's venv was made from, so nothing of that venv carries over.
    base = getattr(sys, "_base_executable", sys.executable)
    run_checked([base, "-m", "venv", str(venv)], cwd=root)
    python = venv / "bin" / "python"
    install = ["-m", "pip", "install", "--disable-pip-version-check", "--no-index", "--find-links", str(wheelhouse)]
    before = _installed(python, root)  # pip (and setuptools, which Python 3.11's ensurepip still adds)
    run_checked([str(python), *install, str(artifacts.wheel)], cwd=root)
    added = {name: version for name, version in _installed(python, root).items() if before.get(name) != version}
    run_checked([str(python), *install, "pytest", "pytest-asyncio"], cwd=root)
    return FreshVenv(root=root, python=python, added_by_the_wheel=added)


def test_pip_installs_the_wheel_into_a_fresh_venv_with_httpx_and_filelock_and_nothing_else(
    fresh_venv: FreshVenv,
) -> None:
    expected: dict[str, str] = {"tenant-integration": VERSION}
    expected.update((canonicalize_name(d.metadata["Name"]), d.version) for d in _closure(RUNTIME_DEPENDENCIES))
    assert fresh_venv.added_by_the_wheel == expected


def test_the_installed_package_is_the_wheels_not_the_repositorys_sources(fresh_venv: FreshVenv) -> None:
    probe = (
        "import importlib.metadata as m, tenant_integration as t;"
        " print(t.__file__, m.version('tenant-integration'), t.__version__)"
    )
    result = run_checked([str(fresh_venv.python), "-c", probe], cwd=fresh_venv.root)
    location, version, module_version = result.stdout.split()
    assert Path(location).is_relative_to(fresh_venv.root / "venv")
    assert version == VERSION
    assert module_version == VERSION


# -- the README, run in the fresh venv against the sandbox -----------------------------------------------------------


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class ProgramRun:
    """What one run of a README program did."""

    stdout: str
    stderr: str
    opened: list[str]
    """The URLs the program opened in the browser."""


@dataclass(frozen=True)
class Reader:
    """A reader's machine: a home directory, and a browser (``tests/readme_browser.py``, named by ``BROWSER``) that
    approves every sign-in at the sandbox."""

    home: Path
    browser: Path
    browser_log: Path
    dev_mode: bool = True
    """Run in Python's development mode and fail on a ResourceWarning (something left open)."""

    @classmethod
    def make(cls, root: Path, *, dev_mode: bool = True) -> Reader:
        """A home directory under ``root`` and the browser's wrapper."""
        home = root / "home"
        home.mkdir()
        browser = root / "browser"
        browser.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).with_name("readme_browser.py")}" "$@"\n'
        )
        browser.chmod(0o755)
        return cls(home=home, browser=browser, browser_log=root / "browser.log", dev_mode=dev_mode)

    def _log(self) -> list[str]:
        return self.browser_log.read_text().splitlines() if self.browser_log.exists() else []

    def run(self, python: Path, program: Path, *args: str) -> ProgramRun:
        """Runs ``program`` as the reader would, in a clean environment with this home and browser."""
        before = len(self._log())
        # Python's development mode: a client or manager left open shows as a ResourceWarning (issue 27).
        env = clean_env(
            HOME=str(self.home),
            BROWSER=str(self.browser),
            README_BROWSER_LOG=str(self.browser_log),
            **({"PYTHONDEVMODE": "1"} if self.dev_mode else {}),
        )
        result = subprocess.run(
            [str(python), str(program), *args],
            cwd=self.home,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=PROCESS_TIMEOUT,
        )
        log = self._log()[before:]
        assert result.returncode == 0, f"{result.stdout}{result.stderr}\nbrowser: {log}"
        assert not self.dev_mode or "ResourceWarning" not in result.stderr, result.stderr
        opened = [line.removeprefix("opened ") for line in log if line.startswith("opened ")]
        return ProgramRun(result.stdout, result.stderr, opened)


@pytest.fixture(scope="module")
def redirect_uri() -> str:
    """The loopback redirect URI the README's program registers, on a free port rather than its fixed 53682."""
    return f"http://127.0.0.1:{free_port()}/callback"


@pytest.fixture(scope="module")
def sandbox(redirect_uri: str) -> Iterator[SandboxProcess]:
    """The repository's sandbox with the README's client registered at ``redirect_uri``."""
    clients = [SandboxClient(id=README_CLIENT, redirect_uris=(redirect_uri,))]
    with SandboxProcess(command=SANDBOX, clients=clients) as running:
        yield running


def reader_program(name: str, sandbox: SandboxProcess, redirect_uri: str, directory: Path) -> Path:
    """The README's sample ``name`` as a program file, with the reader's tenant and redirect URI put in."""
    source = readme_samples()[name]
    assert README_TENANT in source
    assert README_REDIRECT in source
    program = directory / f"{name.replace('-', '_')}.py"
    program.write_text(source.replace(README_TENANT, sandbox.url).replace(README_REDIRECT, redirect_uri))
    return program


def outcomes(sandbox: SandboxProcess, after: int) -> list[str]:
    """The sandbox's token and revoke calls since ``after``, as ``endpoint grant: outcome``."""
    return [
        " ".join(filter(None, (e["endpoint"], e["grantType"]))) + f": {e['outcome']}"
        for e in sandbox.events(after=after)
    ]


def test_the_readme_marks_the_samples_that_run() -> None:
    assert set(readme_samples()) == {"cli", "async-cli", "errors", "pytest-plugin"}


def test_every_python_block_of_the_readme_type_checks_under_mypy_strict(tmp_path: Path) -> None:
    blocks = readme_python_blocks()
    assert len(blocks) >= 6
    files = []
    for number, block in enumerate(blocks, start=1):
        ast.parse(block, filename=f"README.md python block {number}")
        files.append(tmp_path / f"readme_block_{number}.py")
        files[-1].write_text(block)
    cache = ["--cache-dir", str(tmp_path / ".mypy")]
    stdout, stderr, status = mypy_api.run(
        ["--strict", "--no-error-summary", *cache, "--config-file", "", *map(str, files)]
    )
    assert status == 0, stdout + stderr


def test_the_readme_cli_signs_in_through_the_loopback_reads_the_user_refreshes_later_and_logs_out(
    fresh_venv: FreshVenv, sandbox: SandboxProcess, redirect_uri: str, tmp_path: Path
) -> None:
    reader = Reader.make(tmp_path)
    program = reader_program("cli", sandbox, redirect_uri, tmp_path)

    def run(*args: str) -> ProgramRun:
        return reader.run(fresh_venv.python, program, *args)

    # 1. The first run signs in through the loopback redirect, stores the tokens in the file, reads the user.
    seq = sandbox.last_seq()
    first = run()
    assert len(first.opened) == 1
    assert first.opened[0].startswith(f"{sandbox.url}/oauth/authorize?")
    assert f"Signed in as {DEMO_USER_NAME}" in first.stdout
    assert outcomes(sandbox, seq) == ["token authorization_code: ok"]
    token_file = reader.home / ".config" / "my-cli" / "tokens.json"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert token_file.parent.stat().st_mode & 0o777 == 0o700

    # 2. The next run reads the tokens from the file: no sign-in, no token request.
    seq = sandbox.last_seq()
    second = run()
    assert second.opened == []
    assert f"Signed in as {DEMO_USER_NAME}" in second.stdout
    assert outcomes(sandbox, seq) == []

    # 3. 16 minutes later on the tenant's clock: the access token is refused, refreshed once, the call repeated.
    sandbox.advance(PAST_EXPIRY)
    seq = sandbox.last_seq()
    later = run()
    assert later.opened == []
    assert f"Signed in as {DEMO_USER_NAME}" in later.stdout
    assert outcomes(sandbox, seq) == ["token refresh_token: ok"]
    tokens = json.loads(next(iter(json.loads(token_file.read_text()).values())))

    # 4. `logout` revokes; the run after it has to sign in again.
    seq = sandbox.last_seq()
    logout = run("logout")
    assert logout.opened == []
    assert [e["endpoint"] for e in sandbox.events(after=seq)] == ["revoke"]
    again = run()
    assert len(again.opened) == 1
    assert f"Signed in as {DEMO_USER_NAME}" in again.stdout

    # Nothing the program printed holds a token or the code.
    for result in (first, second, later, logout, again):
        printed = result.stdout + result.stderr
        assert tokens["access_token"] not in printed
        assert tokens["refresh_token"] not in printed
        assert not re.search(r"[?&]code=", printed)


def test_the_readme_async_cli_signs_in_then_makes_one_refresh_for_ten_concurrent_calls(
    fresh_venv: FreshVenv, sandbox: SandboxProcess, redirect_uri: str, tmp_path: Path
) -> None:
    reader = Reader.make(tmp_path)
    program = reader_program("async-cli", sandbox, redirect_uri, tmp_path)
    seq = sandbox.last_seq()
    first = reader.run(fresh_venv.python, program)
    assert len(first.opened) == 1
    assert f"Signed in as {DEMO_USER_NAME}" in first.stdout
    assert outcomes(sandbox, seq) == ["token authorization_code: ok"]
    sandbox.advance(PAST_EXPIRY)
    seq = sandbox.last_seq()
    later = reader.run(fresh_venv.python, program)
    assert later.opened == []
    assert f"Signed in as {DEMO_USER_NAME}" in later.stdout
    assert outcomes(sandbox, seq) == ["token refresh_token: ok"]


def test_the_readme_errors_sample_handles_not_signed_in_the_most_common_error_and_closes_what_it_opened(
    fresh_venv: FreshVenv, sandbox: SandboxProcess, redirect_uri: str, tmp_path: Path
) -> None:
    """Issue 27, point 4: as written, the sample crashed on NOT_SIGNED_IN (a manager with no tokens) and
    never closed its TokenManager."""
    reader = Reader.make(tmp_path)
    program = reader_program("errors", sandbox, redirect_uri, tmp_path)
    seq = sandbox.last_seq()
    run = reader.run(fresh_venv.python, program)
    assert run.opened == []
    assert "Not signed in" in run.stdout
    assert outcomes(sandbox, seq) == []


def test_the_readme_pytest_sample_runs_with_the_plugin_of_the_installed_wheel(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    (tmp_path / "test_readme_sample.py").write_text(readme_samples()["pytest-plugin"])
    env = clean_env(HOME=str(tmp_path), TENANT_SANDBOX_COMMAND=" ".join(SANDBOX))
    result = subprocess.run(
        [str(fresh_venv.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_sample.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=PROCESS_TIMEOUT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    tests = len(re.findall(r"^(?:async )?def test_", readme_samples()["pytest-plugin"], flags=re.MULTILINE))
    assert tests >= 2
    assert re.search(rf"\b{tests} passed\b", result.stdout), result.stdout


# -- the release --------------------------------------------------------------------------------------------------


def test_the_release_workflow_builds_and_publishes_to_pypi_with_trusted_publishing_when_the_version_changed() -> None:
    import yaml  # type: ignore[import-untyped]  # PyYAML ships no annotations

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    changed = "needs.python-version.outputs.changed == 'true'"
    # Which push releases: the one whose packages/python/package.json version differs from the commit before it.
    version_steps = [step.get("run", "") for step in jobs["python-version"]["steps"]]
    assert any("tools/release/python-release.mjs" in run and "github.event.before" in run for run in version_steps)
    assert set(jobs["python-version"]["outputs"]) == {"changed", "version"}
    # The build: what `pnpm build` makes, in a job with no publishing permission.
    build = jobs["python-build"]
    assert build["if"] == changed
    assert "id-token" not in build.get("permissions", {})
    assert "pnpm --filter @tenant-integration/python build" in [step.get("run") for step in build["steps"]]
    # The upload: PyPI trusted publishing from the `pypi` environment, nothing else allowed.
    publish = jobs["python-publish"]
    assert publish["if"] == changed
    assert "python-build" in publish["needs"]
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    uploads = [
        step for step in publish["steps"] if str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")
    ]
    assert len(uploads) == 1
    assert "password" not in uploads[0].get("with", {})  # no stored token: OIDC only
    # The workflow's default grants no OIDC token to any other job.
    assert "id-token" not in workflow.get("permissions", {})
