"""Running Ray clusters in tests without any traffic leaving loopback.

Ray advertises the machine's primary address, so every cluster test runs inside a network namespace
whose only interface is ``lo`` (``unshare --net``, then ``ip link set lo up``), where Ray falls back to
127.0.0.1. Not as root, a user namespace maps the caller to root for the ``ip`` call, then a nested one
maps it back to its own uid (so the sandbox runs as it would for that user).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess


def loopback_only() -> bool:
    """True inside a network namespace whose only interface is the loopback."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def in_loopback_namespace(argv: list[str]) -> list[str]:
    """``argv`` run in a fresh network namespace with only ``lo`` up."""
    ip = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin") or "ip"
    if os.geteuid() == 0:
        script = f'{ip} link set lo up && exec "$@"'
        return ["unshare", "--net", "--", "sh", "-c", script, "sh", *argv]
    back = f"unshare --user --map-user={os.getuid()} --map-group={os.getgid()} --"
    script = f'{ip} link set lo up && exec {back} "$@"'
    return ["unshare", "--user", "--map-root-user", "--net", "--", "sh", "-c", script, "sh", *argv]


def namespace_problem() -> str | None:
    """Why a loopback-only network namespace cannot be made here (``None``: it can): no ``unshare`` or
    ``ip``, or the kernel or container refuses the namespaces."""
    for tool in ("unshare", "ip"):
        if shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin") is None:
            return f"no `{tool}` here (util-linux / iproute2)"
    probe = subprocess.run(in_loopback_namespace(["true"]), capture_output=True, text=True, timeout=60, check=False)
    if probe.returncode != 0:
        return f"cannot make a loopback-only network namespace: {probe.stderr.strip()[-300:]}"
    return None
