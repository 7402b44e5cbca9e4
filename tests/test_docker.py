"""The Docker image without a Docker engine: the Dockerfile read statically, and the package installed
the way the image installs it (a wheel built from the files the Dockerfile copies, in a fresh
environment) then run as the image runs it: `prdigest serve` and its HEALTHCHECK."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
from serve_support import serving

from prdigest.bot.web import WebApp

pytestmark = pytest.mark.e2e  # a wheel built and installed in a fresh environment, then served

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, continued lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, args = line.strip().partition(" ")
            found.append((name.upper(), args.strip()))
    return found


def args_of(name: str) -> list[str]:
    return [args for instruction, args in instructions() if instruction == name]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in args_of("ENV"):
        env.update(part.split("=", 1) for part in shlex.split(args))  # type: ignore[misc]
    return env


def volumes() -> list[str]:
    paths: list[str] = []
    for args in args_of("VOLUME"):
        paths += json.loads(args) if args.startswith("[") else args.split()
    return paths


def healthcheck() -> tuple[list[str], list[str]]:
    """The HEALTHCHECK's options and its command, as the exec form Docker runs."""
    (args,) = args_of("HEALTHCHECK")
    options, _, command = args.partition("CMD")
    command = command.strip()
    return shlex.split(options), json.loads(command) if command.startswith("[") else shlex.split(command)


def requirement_name(line: str) -> str:
    """A requirement's project name, normalised as PyPI compares them."""
    name = re.split(r"[\s\[<>=!~;,]", line.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


# --- the Dockerfile -------------------------------------------------------------------------


def test_the_dockerfile_runs_serve_as_a_non_root_user_with_the_database_on_a_volume() -> None:
    (base,) = args_of("FROM")
    assert re.fullmatch(r"python:3\.1[1-9](\.\d+)?-slim(-\w+)?", base), base
    user = args_of("USER")[-1]
    assert user not in ("root", "0") and not user.startswith("0:")
    assert any("useradd" in run and user in run for run in args_of("RUN")), "the user is created"
    db = PurePosixPath(image_env()["PRDIGEST_DB"])
    assert any(db.is_relative_to(volume) for volume in volumes()), (db, volumes())
    assert json.loads(args_of("CMD")[-1]) == ["prdigest", "serve"]
    assert args_of("STOPSIGNAL") in ([], ["SIGTERM"])  # serve stops cleanly on SIGTERM
    options, command = healthcheck()
    assert command == ["python", "-m", "prdigest.bot.healthcheck"]  # the settings' port, not a fixed one
    assert any(o.startswith("--start-period=") for o in options)  # serve may take a while to start
    assert not re.search(r"\b(curl|wget)\b", DOCKERFILE.read_text(encoding="utf-8"))
    assert args_of("EXPOSE") == [image_env()["PRDIGEST_WEB_PORT"]]


def test_dependencies_come_from_the_lock_file_in_a_layer_before_the_code() -> None:
    steps = instructions()
    lock_copy = steps.index(("COPY", "requirements.lock ./"))
    lock_install = next(
        i for i, (name, args) in enumerate(steps) if name == "RUN" and "requirements.lock" in args
    )
    code_copy = next(
        i for i, (name, args) in enumerate(steps) if name == "COPY" and "prdigest" in args.split()
    )
    assert lock_copy < lock_install < code_copy
    assert "--require-hashes" in steps[lock_install][1]
    assert "--no-deps" in next(
        args for name, args in steps[code_copy:] if name == "RUN" and "pip install" in args
    )
    # The lock pins every runtime dependency of the project, each with its hashes.
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    pinned = {
        requirement_name(line) for line in lock.splitlines() if "==" in line and not line.startswith("#")
    }
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {requirement_name(dep) for dep in project["dependencies"]} <= pinned
    # And the postgres extra: the same image runs `prdigest worker` and `serve` on PostgreSQL (deploy/).
    assert {requirement_name(dep) for dep in project["optional-dependencies"]["postgres"]} <= pinned
    assert lock.count("==") == len(pinned) and lock.count("--hash=sha256:") >= len(pinned)


def test_the_build_context_holds_only_what_the_image_copies() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*"  # everything is left out, then what is copied is let back in
    let_in = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    copied = {source.rstrip("/") for args in args_of("COPY") for source in args.split()[:-1]}
    assert copied <= let_in and not let_in & {".venv", ".git", "build", "tests", "bench"}
    assert (ROOT / "LICENSE").is_file() and "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_the_data_directory_is_owned_by_the_user_before_it_is_declared_a_volume() -> None:
    # Build steps that change a declared volume are dropped by the legacy builder: /data would stay root's.
    order = [name for name, _ in instructions()]
    chown = next(i for i, (name, args) in enumerate(instructions()) if name == "RUN" and "chown" in args)
    assert chown < order.index("VOLUME")


def docker_engine() -> str | None:
    """Why no image can be built here, or None when a Docker engine answers."""
    if shutil.which("docker") is None:
        return "no docker command"
    try:
        info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              text=True, timeout=20)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "the Docker engine did not answer `docker info` in 20 s"
    return None if info.returncode == 0 else f"no Docker engine: {info.stderr.strip()[:200]}"


def test_the_image_builds_and_its_package_runs() -> None:
    reason = docker_engine()
    if reason is not None:
        pytest.skip(reason)
    tag = f"prdigest-test:{os.getpid()}"
    try:
        build = ["docker", "build", "-q", "-t", tag, str(ROOT)]
        built = subprocess.run(build, capture_output=True, text=True, timeout=1500)
        assert built.returncode == 0, built.stderr[-2000:]
        version = subprocess.run(["docker", "run", "--rm", tag, "prdigest", "--version"], capture_output=True,
                                 text=True, timeout=120)  # fmt: skip
        assert version.returncode == 0 and version.stdout.startswith("prdigest, version"), version.stderr
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, timeout=120)


def test_the_health_check_passes_on_a_live_web_app_and_fails_without_one(tmp_path: Path) -> None:
    web = WebApp()
    _, port = web.start("127.0.0.1", 0)
    env = {**clean_env(tmp_path), "PRDIGEST_WEB_HOST": "0.0.0.0", "PRDIGEST_WEB_PORT": str(port)}
    command = [sys.executable, *healthcheck()[1][1:]]
    try:
        assert subprocess.run(command, capture_output=True, timeout=30, env=env).returncode == 0
    finally:
        web.stop()
    failed = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)
    assert failed.returncode == 1 and failed.stderr.startswith("unhealthy:")


def clean_env(tmp: Path) -> dict[str, str]:
    """This environment without prdigest's settings, its database under ``tmp``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRDIGEST_")}
    return {**env, "PRDIGEST_DB": str(tmp / "prdigest.db")}


# --- the package, installed as the image installs it ---------------------------------------------


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv holding the wheel built from the Dockerfile's COPY sources.

    No network here: the project's dependencies already installed in this environment are made
    visible through a .pth file, minus prdigest itself (the editable install of this checkout)."""
    tmp = tmp_path_factory.mktemp("image")
    context = tmp / "context"
    for args in args_of("COPY"):
        *sources, _ = args.split()
        for source in sources:
            target = context / source
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / source, target)
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"),
         str(context)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("prdigest-*.whl")

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    deps = tmp / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("prdigest", "__editable__")) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    (site / "_prdigest_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-deps", "--no-index", "--disable-pip-version-check",
         str(wheel)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    yield venv


def image_like_env(tmp: Path, venv: Path) -> dict[str, str]:
    """The Dockerfile's ENV with /data under ``tmp``; the venv first on PATH, as the image's python is."""
    env = {k: v for k, v in os.environ.items() if k != "PRDIGEST_DB"}
    for name, value in image_env().items():
        env[name] = value.replace("/data", str(tmp / "data"), 1) if value.startswith("/data") else value
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}", "COLUMNS": "200"}


def test_the_installed_wheel_reports_the_demo_week_from_its_own_package_data(
    installed: Path, tmp_path: Path
) -> None:
    env = image_like_env(tmp_path, installed)
    prdigest = str(installed / "bin" / "prdigest")
    version = subprocess.run([prdigest, "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == "prdigest, version 0.1.0", version.stderr
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "from prdigest.sources.fixture import demo_fixture_path; print(demo_fixture_path())"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    fixture = Path(where.stdout.strip())
    assert fixture.is_relative_to(installed) and fixture.is_file(), where.stderr  # not this checkout's file
    report = subprocess.run(
        [prdigest, "report", "--fixture", str(fixture), "--week", "2026-W37", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-2000:]
    data = json.loads(report.stdout)
    assert (data["repo"], data["stats"]["merged_prs"], data["window"]["since"]) == (
        "acme-ml/trainer",
        30,
        "2026-09-07",
    )
    assert (tmp_path / "data" / "prdigest.db").is_file()  # PRDIGEST_DB from the image's ENV


def test_the_images_command_serves_and_passes_its_health_check(installed: Path, tmp_path: Path) -> None:
    env = {**image_like_env(tmp_path, installed), "PRDIGEST_WEB_HOST": "127.0.0.1", "PRDIGEST_WEB_PORT": "0"}
    program, *args = json.loads(args_of("CMD")[-1])  # found on PATH in the image: the venv's here
    command = [str(installed / "bin" / program), *args]
    with serving(command, env, tmp_path / "serve.log") as served:
        port = served.address.rsplit(":", 1)[1]
        check = [str(installed / "bin" / "python"), *healthcheck()[1][1:]]
        checked = {**env, "PRDIGEST_WEB_PORT": port}  # the port serve took (0 asked for any)
        assert subprocess.run(check, capture_output=True, env=checked, timeout=30).returncode == 0
        assert served.terminate(timeout=30) == 0
    assert (tmp_path / "data" / "prdigest.db").is_file()
