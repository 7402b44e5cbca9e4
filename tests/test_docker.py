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
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
from serve_support import serving

from prdigest.bot.web import WebApp
from prdigest.config import WebSettings

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


def healthcheck() -> list[str]:
    """The HEALTHCHECK's command, as the exec form Docker runs (options before CMD dropped)."""
    (args,) = args_of("HEALTHCHECK")
    return shlex.split(args.split("CMD", 1)[1])


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
    command = healthcheck()
    assert command[0] == "python" and "/healthz" in " ".join(command)
    assert not re.search(r"\b(curl|wget)\b", DOCKERFILE.read_text(encoding="utf-8"))
    # The health check asks the port the image exposes, which is the web app's default.
    (port,) = re.findall(r"127\.0\.0\.1:(\d+)/healthz", " ".join(command))
    assert args_of("EXPOSE") == [port] and int(port) == WebSettings().port


def test_the_data_directory_is_owned_by_the_user_before_it_is_declared_a_volume() -> None:
    # Build steps that change a declared volume are dropped by the legacy builder: /data would stay root's.
    order = [name for name, _ in instructions()]
    chown = next(i for i, (name, args) in enumerate(instructions()) if name == "RUN" and "chown" in args)
    assert chown < order.index("VOLUME")


def test_the_health_check_passes_on_a_live_web_app_and_fails_without_one() -> None:
    web = WebApp()
    _, port = web.start("127.0.0.1", 0)
    command = [sys.executable, *(part.replace("8080", str(port)) for part in healthcheck()[1:])]
    try:
        assert subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    finally:
        web.stop()
    assert subprocess.run(command, capture_output=True, timeout=30).returncode != 0


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
        check = [str(installed / "bin" / "python"), *(p.replace("8080", port) for p in healthcheck()[1:])]
        assert subprocess.run(check, capture_output=True, env=env, timeout=30).returncode == 0
        assert served.terminate(timeout=30) == 0
    assert (tmp_path / "data" / "prdigest.db").is_file()
