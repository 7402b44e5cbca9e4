"""Team digests: several repositories' reports in one, its figures their sums, built on git repositories
made here; delivered as one card; a repository that cannot be read leaves a warning, not a failure;
`prdigest report --repo a --repo b` and `--owner OWNER` print one, in every format the command writes,
and bad options get one clear line."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from rich.console import Console

from prdigest.analysis.team import combined_stats
from prdigest.bot.delivery import ConsoleDeliverer, deliver_subscription
from prdigest.config import Settings, load_settings
from prdigest.errors import SourceError
from prdigest.models import Report, Stats, Trend, Window
from prdigest.pipeline.single import make_report
from prdigest.pipeline.team import make_team_report, team_repos
from prdigest.sources.base import Source
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")  # 2026-W37
NOW = datetime(2026, 9, 14, 9, tzinfo=UTC)
FIRST_MONDAY = date(2026, 8, 10)  # W33: four weeks before W37, then W37
AUTHORS = ("Ann", "Ben", "Cai", "Dee")
REPOS = ("acme/api", "acme/web", "acme/ops")


def build_clone(path: Path, size: int) -> Path:
    """Five weeks of PRs, ``size`` + the week's index each week; some add a dependency, some remove a
    test, some are large, so that each repository has its own risks and importances."""
    repo = new_repo(path)
    (repo / "tests").mkdir()
    number = 0
    for week in range(5):
        for k in range(size + week):
            number += 1
            day = FIRST_MONDAY + timedelta(days=7 * week + k % 5)
            name = AUTHORS[(number + size) % len(AUTHORS)]
            (repo / "src").mkdir(exist_ok=True)
            (repo / "src" / f"mod{number}.py").write_text(
                "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(number % 7 * 40 + 10))
            )
            if number % 4 == 0:
                (repo / "requirements.txt").write_text(f"requests=={number}.0\n")
            if number % 5 == 0:  # a test removed, none written
                (repo / "tests" / f"test_mod{number - 1}.py").unlink()
            else:
                (repo / "tests" / f"test_mod{number}.py").write_text(
                    "".join(f"def test_{number}_{i}():\n    assert True\n" for i in range(20))
                )
            kind = "fix" if number % 3 == 0 else "feat"
            commit(
                repo, f"{kind}: change case {number} (#{number})", f"{day}T{9 + k % 8:02d}:00:00+00:00",
                name=name, email=f"{name.lower()}@example.com",
            )  # fmt: skip
    return repo


@pytest.fixture(scope="module")
def clones(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("team")
    return {
        name: build_clone(root / name.split("/")[1], size)
        for name, size in zip(REPOS, (4, 7, 2), strict=True)
    }


def team_settings(tmp_path: Path, clones: dict[str, Path], extra: str = "") -> Settings:
    """Settings from a config file naming each clone as a [[repos]] entry (and ``extra`` TOML)."""
    lines = ['[report]\ntimezone = "UTC"\nlanguage = "en"\n']
    lines += [f'[[repos]]\nname = "{name}"\ngit = "{path}"\n' for name, path in clones.items()]
    config = tmp_path / "prdigest.toml"
    config.write_text("\n".join(lines) + extra)
    return load_settings(config, env={})


def team(repos: tuple[str, ...] = REPOS, **fields: object) -> Subscription:
    return Subscription.model_validate({"platform": "console", "chat_id": "team", "repos": list(repos),
                                        "lang": "en", **fields})  # fmt: skip


def one_report(settings: Settings, tmp_path: Path, repo: str) -> Report:
    store = Store(tmp_path / f"{repo.replace('/', '_')}.db")  # a cache of its own: nothing shared
    try:
        source = source_factory(settings)(repo)
        return make_report(
            settings, store, source, WEEK, repo=repo, lang="en", save=False, use_llm=False, now=NOW
        )
    finally:
        store.close()


def test_a_team_digest_sums_its_repositories_reports(tmp_path: Path, clones: dict[str, Path]) -> None:
    settings = team_settings(tmp_path, clones)
    singles = [one_report(settings, tmp_path, repo) for repo in REPOS]
    store = Store(tmp_path / "team.db")
    digest = make_team_report(settings, store, team(), WEEK, now=NOW, use_llm=False)

    assert digest.repo == "acme/api,acme/web,acme/ops" and [p.repo for p in digest.parts] == list(REPOS)
    s = digest.stats
    for figure in ("merged_prs", "key_prs", "additions", "deletions", "files_changed", "direct_pushes"):
        assert getattr(s, figure) == sum(getattr(r.stats, figure) for r in singles), figure
    assert s.merged_prs == 8 + 11 + 6
    assert s.risks == dict(sum((Counter(r.stats.risks) for r in singles), Counter()))
    assert len(s.risks) >= 2 and sum(s.risks.values()) > 0  # risks of more than one kind were counted
    assert s.authors == dict(sum((Counter(r.stats.authors) for r in singles), Counter()))
    assert sum(s.per_day.values()) == s.merged_prs and s.hot_files == []
    assert s.author_share[next(iter(s.authors))] == pytest.approx(
        max(s.authors.values()) / s.merged_prs, abs=1e-3
    )
    for average in ("avg_importance", "avg_insight"):
        # Each report averages over its key PRs: the team's is over all of them.
        weighted = [(getattr(r.stats, average), r.stats.key_prs) for r in singles]
        assert all(value is not None for value, _ in weighted)
        mean = sum(v * n for v, n in weighted) / sum(n for _, n in weighted)
        assert getattr(s, average) == pytest.approx(mean, abs=0.005), average
    # Week over week: the summed figures against the summed four weeks before.
    assert s.trend["merged_prs"].previous == [13 + 3 * k for k in range(4)]
    assert digest.prs == [] and digest.themes == [] and digest.risk_observations == []
    assert "3 repositories, 25 PRs merged; most activity in acme/web (11)" in digest.summary
    riskiest = max(singles, key=lambda r: ("low", "medium", "high").index(r.risk_level))
    assert f"highest risk in {riskiest.repo}" in digest.summary
    assert digest.risk_level == riskiest.risk_level and digest.source == "git" and digest.engine == "rules"

    # Saved with its parts, and read back whole.
    assert digest.id is not None
    again = store.get_report(digest.id)
    store.close()
    assert again is not None and [p.stats.merged_prs for p in again.parts] == [8, 11, 6]
    assert again.model_dump(exclude={"id"}) == digest.model_dump(exclude={"id"})


def test_week_over_week_sums_parts_over_the_same_periods_and_a_label_one_lacks_counts_zero() -> None:
    def stats(merged: int, previous: list[float], labels: dict[str, list[float]]) -> Stats:
        figures = {"merged_prs": previous, "key_prs": previous, **labels}
        trend = {name: Trend(previous=values) for name, values in figures.items()}
        return Stats(merged_prs=merged, risks={k: 1 for k in labels}, trend=trend)

    a = stats(4, [2, 2], {"no_tests": [1, 0]})
    b = stats(6, [3, 5], {})
    summed = combined_stats([a, b]).trend
    assert summed["merged_prs"].previous == [5, 7] and summed["merged_prs"].change == round((10 - 6) / 6, 3)
    assert summed["no_tests"].previous == [1, 0] and summed["no_tests"].change == 1.0
    assert combined_stats([a, stats(6, [3], {})]).trend == {}  # periods that do not line up
    assert combined_stats([a, stats(6, [], {})]).trend == {}  # a part with no earlier period known


def test_an_owner_subscription_reports_the_owners_configured_and_listed_repositories(
    tmp_path: Path, clones: dict[str, Path]
) -> None:
    settings = team_settings(tmp_path, clones)
    owner = team(repos=(), owner="acme")
    assert owner.repo == "org:acme" and owner.is_team
    assert team_repos(settings, owner) == list(REPOS)
    listed = lambda name: [f"{name}/extra", "acme/api"]  # noqa: E731
    assert team_repos(settings, owner, listed) == list(REPOS)  # no token: GitHub is not asked
    token = settings.model_copy(update={"github": settings.github.model_copy(update={"token": "t"})})
    assert team_repos(token, owner, listed) == [*REPOS, "acme/extra"]
    assert team_repos(settings, team(repos=("x/y", "x/z"))) == ["x/y", "x/z"]


def test_one_repository_failing_leaves_a_warning_and_the_others_in_the_digest(
    tmp_path: Path, clones: dict[str, Path]
) -> None:
    settings = team_settings(tmp_path, clones)
    configured = source_factory(settings)

    def source_for(repo: str) -> Source | None:
        if repo == "acme/web":
            raise SourceError("the clone of acme/web is gone")
        return configured(repo)

    store = Store(tmp_path / "team.db")
    digest = make_team_report(settings, store, team(), WEEK, now=NOW, use_llm=False, source_for=source_for)
    assert [p.repo for p in digest.parts] == ["acme/api", "acme/ops"]
    assert digest.stats.merged_prs == 8 + 6
    assert "acme/web is left out of this digest: the clone of acme/web is gone" in digest.warnings
    with pytest.raises(SourceError, match="gone"):
        make_team_report(settings, store, team(("acme/web", "acme/web2")), WEEK, now=NOW,
                         use_llm=False, source_for=source_for, save=False)  # fmt: skip
    store.close()


def test_a_team_subscription_is_delivered_as_one_card_with_its_parts(
    tmp_path: Path, clones: dict[str, Path]
) -> None:
    settings = team_settings(tmp_path, clones)
    store = Store(tmp_path / "team.db")
    sub = save_subscription(store, team())
    console = Console(record=True, width=160)
    outcome = deliver_subscription(
        settings, store, sub, {"console": ConsoleDeliverer(console)}, now=NOW, window=WEEK
    )
    assert outcome.status == "posted" and outcome.key == f"prdigest:{sub.id}:2026-W37"
    assert outcome.report is not None and len(outcome.report.parts) == 3
    assert outcome.report.stats.merged_prs == 25
    printed = console.export_text()
    assert outcome.key in printed and "3 repositories, 25 PRs merged" in printed
    again = deliver_subscription(settings, store, sub, {"console": ConsoleDeliverer(console)}, now=NOW)
    assert again.status == "already"
    store.close()


# --- the command line ---------------------------------------------------------------------------


def test_repeated_repo_prints_one_team_digest(run_cli, tmp_path: Path, clones: dict[str, Path]) -> None:
    team_settings(tmp_path, clones)  # writes tmp_path/prdigest.toml
    config = str(tmp_path / "prdigest.toml")
    args = ["report", "--config", config, "--week", "2026-W37", "--lang", "en"]
    team = [a for repo in REPOS for a in ("--repo", repo)]
    result = run_cli(*args, *team, "--format", "json")
    assert result.returncode == 0, result.stderr
    digest = json.loads(result.stdout)
    assert digest["repo"] == ",".join(REPOS) and [p["repo"] for p in digest["parts"]] == list(REPOS)
    assert digest["stats"]["merged_prs"] == 25

    owner = run_cli(*args, "--owner", "acme", "--format", "json")
    assert owner.returncode == 0, owner.stderr
    assert json.loads(owner.stdout)["repo"] == "org:acme" and len(json.loads(owner.stdout)["parts"]) == 3

    for fmt in ("md", "html", "lark", "slack"):
        shown = run_cli(*args, *team, "--format", fmt)
        assert shown.returncode == 0 and shown.stdout.strip(), (fmt, shown.stderr)

    one = run_cli(*args, "--repo", "acme/web", "--format", "json")  # one --repo: as before
    assert one.returncode == 0 and json.loads(one.stdout)["repo"] == "acme/web"
    assert json.loads(one.stdout)["parts"] == [] and json.loads(one.stdout)["stats"]["merged_prs"] == 11


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--repo", "acme/api", "--repo", "ACME/api"], "--repo ACME/api is named twice"),
        (["--repo", "acme/api", "--repo", "acme"], "--repo 'acme' is not OWNER/NAME"),
        (["--owner", "acme", "--repo", "acme/api"], "name --owner or --repo, not both"),
        (["--owner", "acme", "--git", "."], "--git and --fixture read one repository"),
        (["--owner", "nobody"], "no repository of nobody is known"),
    ],
)
def test_bad_team_options_get_one_clear_line(
    run_cli, tmp_path: Path, options: list[str], message: str
) -> None:
    result = run_cli("report", "--week", "2026-W37", *options)
    assert result.returncode != 0 and message in result.stderr and "Traceback" not in result.stderr
