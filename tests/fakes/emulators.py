"""The two Google emulators the GCP tests run against, started so that nothing outlives the test session.

- Cloud Storage: `gcp-storage-emulator` (PyPI), in-process on a free port, in memory.
- Pub/Sub: the gcloud emulator (Java). It is started through its launcher script, which `exec`s Java, so
  there is one process to stop; it gets its own session (killpg on teardown) and PR_SET_PDEATHSIG, so Java
  dies even if pytest is killed with SIGKILL (see /work/shared/design/gcp-events-deploy.md §3).

`pubsub_missing()` names what is missing (gcloud, java, the component) so tests can skip loudly.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, timeout_s: float = 1.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.read().decode("utf-8", "replace")
    except OSError:
        return None


# --- Cloud Storage --------------------------------------------------------------------------------------


@dataclass
class GcsEmulator:
    host: str  # "http://127.0.0.1:PORT", the form STORAGE_EMULATOR_HOST takes
    server: object

    def stop(self) -> None:
        self.server.stop()  # type: ignore[attr-defined]


def start_gcs() -> GcsEmulator:
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    host = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while _get(host + "/") is None:
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"gcp-storage-emulator did not answer on {host}")
        time.sleep(0.02)
    return GcsEmulator(host, server)


# --- Pub/Sub ----------------------------------------------------------------------------------------------


def _sdk_root() -> Path | None:
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        return None
    try:
        out = subprocess.run(
            [gcloud, "info", "--format=value(installation.sdk_root)"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "CLOUDSDK_CORE_DISABLE_PROMPTS": "1"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    root = out.stdout.strip()
    return Path(root) if root else None


def pubsub_launcher() -> tuple[Path | None, str | None]:
    """(launcher path, None) or (None, the reason the emulator cannot run here)."""
    if shutil.which("java") is None:
        return None, "java is not on PATH (Debian: apt-get install openjdk-17-jre-headless)"
    if shutil.which("gcloud") is None:
        return None, "gcloud is not installed (package google-cloud-cli with google-cloud-cli-pubsub-emulator)"
    root = _sdk_root()
    if root is None:
        return None, "`gcloud info` did not report an SDK root"
    launcher = root / "platform" / "pubsub-emulator" / "bin" / "cloud-pubsub-emulator"
    if not launcher.exists():
        return None, f"the pubsub-emulator component is missing ({launcher} not found)"
    return launcher, None


def _die_with_parent() -> None:
    """preexec_fn: ask the kernel to SIGTERM the child when the parent (pytest) dies, however it dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class PubSubEmulator:
    host: str  # "127.0.0.1:PORT", the form PUBSUB_EMULATOR_HOST takes
    process: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def start_pubsub(launcher: Path, log_dir: Path | None = None) -> PubSubEmulator:
    port = free_port()
    log_path = Path(log_dir or tempfile.mkdtemp(prefix="pubsub-emulator-")) / f"pubsub-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(launcher), "--host=127.0.0.1", f"--port={port}"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    emulator = PubSubEmulator(f"127.0.0.1:{port}", process, log_path)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the Pub/Sub emulator exited with {process.returncode}; see {log_path}")
        if (_get(f"http://127.0.0.1:{port}/") or "").strip() == "Ok":
            return emulator
        if time.monotonic() > deadline:
            emulator.stop()
            raise RuntimeError(f"the Pub/Sub emulator did not answer within 60 s; see {log_path}")
        time.sleep(0.05)


@contextlib.contextmanager
def pubsub_emulator(log_dir: Path | None = None) -> Iterator[PubSubEmulator]:
    launcher, reason = pubsub_launcher()
    if launcher is None:
        raise RuntimeError(reason)
    emulator = start_pubsub(launcher, log_dir)
    try:
        yield emulator
    finally:
        emulator.stop()
