"""Benchmarks by name from the stand-in hub: how long the first read takes (download, verify, load) and
how long every later one takes (verify the cache, load), per benchmark. Run from the repository root:

    python bench/downloads.py [--shared ../shared/data] [--repeats 3]

The stand-in (tests/problems/standin.py) serves the shared data on 127.0.0.1, so the download part is
loopback-fast: what is measured is refinelab's own work (HTTP, hashing, counting, the atomic rename,
parsing). Prints per benchmark: bytes, the first read and a cached read (median of ``--repeats`` fresh
processes' worth: the per-process hash memo is cleared), and their ratio; then the hashing rate.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.problems.standin

from tests.problems.standin import build

from refinelab._downloads import forget_hashes
from refinelab.problems import FetchOptions, open_benchmark, read_benchmark, read_humanevalplus, read_mbppplus
from refinelab.testing import serve_standin

NAMES = ["humaneval-plus", "mbpp-plus", "mbpp", "mbpp-sanitized", "livecodebench", "apps", "codecontests"]


def read(name: str, options: FetchOptions) -> tuple[int, int]:
    """Open (download or verify) and load; (bytes, problems)."""
    files = open_benchmark(name, options=options)
    size = sum(f.size for f in files.provenance.files)
    if name == "humaneval-plus":
        return size, len(list(read_humanevalplus(files.paths[0])))  # the tasks; outputs are computed later
    if name == "mbpp-plus":
        return size, len(list(read_mbppplus(files.paths[0])))
    return size, len(read_benchmark(files))


def timed(name: str, options: FetchOptions) -> tuple[float, int, int]:
    start = time.perf_counter()
    size, problems = read(name, options)
    return time.perf_counter() - start, size, problems


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "standin"
        manifest = build(args.shared, root)
        with serve_standin(root) as hub:
            environ = {**hub.environ(), "REFINELAB_BENCHMARK_MANIFEST": str(manifest)}
            print(f"{'benchmark':<16}{'bytes':>12}{'problems':>10}{'first read':>12}{'cached read':>13}{'ratio':>8}")
            for name in NAMES:
                cold, warm = [], []
                for _ in range(args.repeats):
                    cache = Path(tempfile.mkdtemp(dir=folder))
                    options = FetchOptions(cache, environ)
                    seconds, size, problems = timed(name, options)
                    cold.append(seconds)
                    forget_hashes()  # as a new process: the cached file is hashed again
                    warm.append(timed(name, options)[0])
                first, again = statistics.median(cold), statistics.median(warm)
                print(f"{name:<16}{size:>12,}{problems:>10,}{first:>11.2f}s{again:>12.2f}s{first / again:>8.2f}")
    data = bytes(256 * 1024 * 1024)
    start = time.perf_counter()
    hashlib.sha256(data).hexdigest()
    print(f"SHA-256: {len(data) / (time.perf_counter() - start) / 1e9:.2f} GB/s on this machine")


if __name__ == "__main__":
    main()
