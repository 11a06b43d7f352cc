"""Starting bubblewrap: private uids that never collide, and a clear message when user namespaces
are unavailable to an unprivileged user (shown by injection: a fake bwrap and a fake /proc/sys)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from refinelab.errors import MissingDependency
from refinelab.sandbox import Limits, WorkerPool
from refinelab.sandbox._bwrap import claim_uid_block, probe_bwrap, userns_advice

UBUNTU_2404 = "bwrap: setting up uid map: Permission denied\n"
OLD_KERNEL = "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.\n"


def test_two_claims_never_get_the_same_uid_block(tmp_path: Path) -> None:
    first, first_fd = claim_uid_block(tmp_path, start=7)
    second, second_fd = claim_uid_block(tmp_path, start=7)
    assert first == 7 and second == 8
    os.close(first_fd)
    again, again_fd = claim_uid_block(tmp_path, start=7)  # released when its holder lets go
    assert again == 7
    os.close(second_fd)
    os.close(again_fd)


def test_a_block_held_by_another_process_is_skipped(tmp_path: Path) -> None:
    code = (
        "import time\nfrom pathlib import Path\nfrom refinelab.sandbox._bwrap import claim_uid_block\n"
        f"claim_uid_block(Path({str(tmp_path)!r}), start=3)\nprint('held', flush=True)\ntime.sleep(60)\n"
    )
    # our own interpreter holding one lock; ended below by its PID
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            block, fd = claim_uid_block(tmp_path, start=3)
            assert block == 4
            os.close(fd)
        finally:
            holder.kill()


def sysctls(tmp_path: Path, **values: str) -> Path:
    for name, value in values.items():
        path = tmp_path / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    return tmp_path


def test_the_apparmor_restriction_is_named_with_its_fixes(tmp_path: Path) -> None:
    root = sysctls(
        tmp_path, **{"kernel.apparmor_restrict_unprivileged_userns": "1", "user.max_user_namespaces": "63000"}
    )
    advice = userns_advice(UBUNTU_2404, root)
    assert advice is not None
    assert "kernel.apparmor_restrict_unprivileged_userns is set" in advice
    assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in advice
    assert "AppArmor" in advice and "as root" in advice and "--isolation landlock" in advice
    # a sandbox works without namespaces: never advise running none (auto's fallback warning shows this advice)
    assert "--isolation none" not in advice
    assert "max_user_namespaces" not in advice


def test_disabled_user_namespaces_are_named(tmp_path: Path) -> None:
    root = sysctls(tmp_path, **{"kernel.unprivileged_userns_clone": "0"})
    assert "kernel.unprivileged_userns_clone is set" in (userns_advice(OLD_KERNEL, root) or "")
    root = sysctls(tmp_path / "other", **{"user.max_user_namespaces": "0"})
    assert "user.max_user_namespaces=15000" in (userns_advice(UBUNTU_2404, root) or "")


def test_other_bubblewrap_errors_get_no_namespace_advice(tmp_path: Path) -> None:
    assert userns_advice("bwrap: Can't mount proc on /newroot/proc: Device or resource busy\n", tmp_path) is None


@pytest.fixture
def fake_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap on PATH that fails like Ubuntu 24.04's, run by an unprivileged user."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "bwrap"
    script.write_text(f"#!/bin/sh\nprintf '%s' {UBUNTU_2404!r} >&2\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # the os module _bwrap asks


@pytest.mark.usefixtures("fake_bwrap")
def test_the_probe_says_what_to_do() -> None:
    reason = probe_bwrap(Limits())
    assert reason is not None
    assert reason.startswith("bubblewrap failed: bwrap: setting up uid map: Permission denied")
    assert "unprivileged user namespaces are unavailable" in reason and "--isolation landlock" in reason


@pytest.mark.usefixtures("fake_bwrap")
def test_requiring_the_sandbox_fails_with_that_message() -> None:
    async def start() -> None:
        async with WorkerPool(workers=1, isolation="bwrap"):
            pass

    import asyncio

    with pytest.raises(MissingDependency, match="unprivileged user namespaces are unavailable") as caught:
        asyncio.run(start())
    assert "apt-get install" not in str(caught.value)  # bubblewrap is installed; installing it is no fix
