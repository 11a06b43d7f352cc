"""An endpoint that cannot be reached is reported at once with an accurate message; one that has answered
before is retried (a restart mid-run is transient); a URL without a scheme is a user error."""

from __future__ import annotations

import socket
import time

import pytest

from refinelab.cli import main
from refinelab.errors import UserError
from refinelab.models import EndpointError, EndpointFailed, Message, Model, RetryPolicy, open_model
from refinelab.models._openai import OpenAIBackend
from refinelab.testing import serve

pytestmark = pytest.mark.usefixtures("http_client")  # both HTTP clients (tests/models/conftest.py)

ASK = [Message.user("hello there")]


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timed_failure(url: str) -> tuple[str, float]:
    """The error and how long it took (printed, never asserted: a loaded machine is slower). "At once" is
    asserted as what it means: the default policy's 6 attempts and their backoff were not used."""
    model = Model(OpenAIBackend("vllm:x", url, "EMPTY"))  # the default retry policy: 6 attempts
    started = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        model.generate_sync(ASK)
    assert model.accounting.retries == 0, "retried (with backoff) instead of reporting at once"
    return str(caught.value), time.monotonic() - started


def test_nothing_listening_is_reported_at_once() -> None:
    port = closed_port()
    message, seconds = timed_failure(f"http://127.0.0.1:{port}/v1")
    print(f"closed port reported in {seconds:.3f} s")
    assert message.startswith(f"cannot reach http://127.0.0.1:{port}/v1 for vllm:x: nothing is listening at ")
    assert "(connection refused)" in message and "check the address, and that the server is running there" in message


def test_a_host_that_drops_connections_is_reported_after_one_2_second_attempt() -> None:
    """A firewall that drops packets (or a machine that is off) never refuses: the connection attempt
    itself gives up after 2 s, and is not retried (the report took 2.1 s on a quiet machine; the old 5 s
    timeout took 5.3 s)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)  # never accepted: once the backlog is full, new connections get no answer
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(4)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
        try:
            message, seconds = timed_failure(f"http://127.0.0.1:{port}/v1")
        finally:
            for filler in fillers:
                filler.close()
    print(f"silent host reported in {seconds:.3f} s")
    assert f"127.0.0.1:{port} did not accept a connection within 2 s" in message


def test_an_unknown_host_is_reported_at_once() -> None:
    message, seconds = timed_failure("http://no-such-host.invalid:8000/v1")
    print(f"unknown host reported in {seconds:.3f} s")
    assert "the host name in no-such-host.invalid:8000 does not resolve (unknown host)" in message


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("localhost:8000/v1", "base URL 'localhost:8000/v1' has no scheme: write http://localhost:8000/v1"),
        ("ftp://host/v1", "base URL 'ftp://host/v1' is not an http:// or https:// address"),
        ("http://host:99999/v1", "base URL 'http://host:99999/v1' has an invalid port"),
        ("http://", "base URL 'http://' has no host: write e.g. http://localhost:8000/v1"),
        ("https://:8000/v1", "base URL 'https://:8000/v1' has no host: write e.g. https://localhost:8000/v1"),
    ],
)
def test_a_bad_url_is_a_user_error_before_any_request(url: str, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        open_model("vllm:x", {}, base_url=url)


def test_the_cli_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ping", "vllm:x", "--base-url", "localhost:8000/v1"], environ={}) == 2
    assert capsys.readouterr().err == (
        "refinelab: error: base URL 'localhost:8000/v1' has no scheme: write http://localhost:8000/v1 (or https://)\n"
    )
    assert main(["ping", "vllm:x", "--base-url", f"http://127.0.0.1:{closed_port()}/v1"], environ={}) == 2
    err = capsys.readouterr().err  # "cannot reach ... nothing is listening" is said only when nothing was retried
    assert err.count("\n") == 1 and "nothing is listening at " in err and "(connection refused)" in err


def test_a_server_that_answered_before_is_retried_when_it_goes_away() -> None:
    retry = RetryPolicy(attempts=3, base_seconds=0.01, max_seconds=0.02)
    with serve() as server:
        model = Model(OpenAIBackend("vllm:x", server.base_url, "EMPTY"), retry=retry)
        model.generate_sync(ASK)
    with pytest.raises(EndpointFailed, match="failed 3 times"):  # retried, then an infrastructure failure
        model.generate_sync([Message.user("another question")])
    assert model.accounting.retries == 2


def test_a_dropped_first_connection_is_still_transient() -> None:
    retry = RetryPolicy(attempts=3, base_seconds=0.01, max_seconds=0.02)
    with serve() as server:
        server.faults.append("drop")  # the server accepted the connection, then closed it
        completion = Model(OpenAIBackend("vllm:x", server.base_url, "EMPTY"), retry=retry).generate_sync(ASK)
    assert completion.text == "echo: hello there" and len(completion.retries) == 1
