"""Benchmarks by name from the stand-in hub: how long the first read takes (download, verify, load) and
how long every later one takes (verify the cache, load), per benchmark. Run from the repository root:

    python bench/downloads.py [--shared ../shared/data] [--repeats 3]

The stand-in (tests/problems/standin.py) serves the shared data on 127.0.0.1, so the download part is
loopback-fast: what is measured is refinelab's own work (HTTP, hashing, counting, the atomic rename,
parsing). Prints per benchmark: bytes, the first read and a cached read (median of ``--repeats`` fresh
processes' worth: the per-process hash memo is cleared), and their ratio; then a model file of
``--model-mb`` MB from the same stand-in, through refinelab's fetcher and through ``hf_hub_download`` (the
hub client's own download, the peer), a cached read of it, and the resume of a download stopped half way;
then the hashing rate.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.problems.standin
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read when huggingface_hub is imported: the peer's bars off

from tests.problems.standin import build

from refinelab._downloads import HubFile, forget_hashes
from refinelab.errors import UserError
from refinelab.models._local_files import fetch_hub_file
from refinelab.problems import FetchOptions, open_benchmark, read_benchmark, read_humanevalplus, read_mbppplus
from refinelab.testing import StandInHub, serve_standin

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


def model_file(hub: StandInHub, folder: Path, size: int, repeats: int) -> None:
    """A model file from the same stand-in: refinelab's fetcher against ``hf_hub_download`` (the hub client's own
    download) on the same bytes in this process; a cached read (not hashed again: its mtime is unchanged); and
    the resume of a download stopped half way."""
    import huggingface_hub

    block = random.Random(0).randbytes(1 << 20)
    content = b"".join(bytes([i % 256]) + block[1:] for i in range(size >> 20))  # no two MB alike
    commit = hub.add("bench/model-GGUF", "model.gguf", content)
    environ = {"HF_ENDPOINT": hub.url}
    file = HubFile("bench/model-GGUF", "model.gguf", commit)
    ours, peers, cached, resumed = [], [], [], []
    download = huggingface_hub.hf_hub_download
    for _ in range(repeats):
        mine = {**environ, "REFINELAB_CACHE_DIR": tempfile.mkdtemp(dir=folder)}
        ours.append(seconds(fetch_hub_file, file, mine))
        forget_hashes()
        cached.append(seconds(fetch_hub_file, file, mine))
        peer = tempfile.mkdtemp(dir=folder)
        peers.append(seconds(download, file.repo, file.path, revision=commit, cache_dir=peer, endpoint=hub.url))
        stopped = {**environ, "REFINELAB_CACHE_DIR": tempfile.mkdtemp(dir=folder)}
        hub.cut[f"huggingface/models/{file.repo}/{commit}/model.gguf"] = size // 6  # three connections: half
        try:
            fetch_hub_file(file, stopped)
        except UserError:
            pass
        hub.cut.clear()
        resumed.append(seconds(fetch_hub_file, file, stopped))
    mine_s, peer_s = statistics.median(ours), statistics.median(peers)
    print(
        f"model file ({size / 1e6:,.0f} MB): refinelab {mine_s:.2f}s · hf_hub_download {peer_s:.2f}s "
        f"(ratio {mine_s / peer_s:.2f}) · cached read {statistics.median(cached):.3f}s · "
        f"resuming the second half {statistics.median(resumed):.2f}s"
    )


def seconds(work: Callable[..., object], *args: object, **kwargs: object) -> float:
    """Seconds ``work(*args, **kwargs)`` took."""
    start = time.perf_counter()
    work(*args, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model-mb", type=int, default=256, help="size of the model file downloaded")
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
            model_file(hub, Path(folder), args.model_mb << 20, args.repeats)
    data = bytes(256 * 1024 * 1024)
    start = time.perf_counter()
    hashlib.sha256(data).hexdigest()
    print(f"SHA-256: {len(data) / (time.perf_counter() - start) / 1e9:.2f} GB/s on this machine")


if __name__ == "__main__":
    main()
