"""A repository's own .prdigest.toml: read from a clone, kept in the cache, layered under the config file's
[[repos]] entry; a file that cannot be used changes nothing and the report says why, in zh and en."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.openai_api import FakeOpenAI

from prdigest.analysis import rules
from prdigest.config import LLMSettings, Settings, Taxonomy, load_settings
from prdigest.config.repo_file import with_repo_file
from prdigest.errors import SourceError
from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.sources.repo_file import repo_file_text, repo_settings
from prdigest.storage import Store
from prdigest.storage.repo_files import load_repo_file

REPO = "acme/rocket"
REPO_FILE = """\
extra_instructions = "Call the rollout workers actors."

[taxonomy]
core_paths = ["flight/**"]

[taxonomy.tags.rollout]
paths = ["rollout/**"]
keywords = ["rollout"]

[taxonomy.tags.docs]
paths = ["site/**"]

[filters]
authors = ["!renovate[bot]"]
labels = ["!skip-digest"]
"""
# The config file's entry: it sets extra_instructions and the "docs" tag, which the repository's file
# sets too (the entry wins), and the filters' labels (the entry wins key by key).
CONFIG = f"""\
[[repos]]
name = "{REPO}"
extra_instructions = "Operators read this report."

[repos.taxonomy.tags.docs]
paths = ["documentation/**"]

[repos.filters]
labels = ["!wip"]
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    path = new_repo(tmp_path / "clone")
    (path / "engine").mkdir()
    (path / "engine" / "core.py").write_text("a = 1\n")
    (path / ".prdigest.toml").write_text(REPO_FILE)
    commit(path, "add the repository's settings (#1)", "2026-09-08T10:00:00+08:00")
    return path


@pytest.fixture
def store(tmp_path: Path):
    store = Store(tmp_path / "cache.db")
    yield store
    store.close()


def config(tmp_path: Path, text: str = CONFIG) -> Settings:
    path = tmp_path / "prdigest.toml"
    path.write_text(text)
    return load_settings(config=path, env={})


def test_a_clone_gives_its_file_and_the_cache_keeps_it(clone: Path, store: Store) -> None:
    source = GitSource(clone, repo=REPO)
    assert source.repo_file() == REPO_FILE
    assert repo_file_text(store, source, REPO) == REPO_FILE
    # A report from the cache alone (no source) still uses the repository's file.
    assert repo_file_text(store, None, REPO) == REPO_FILE
    assert repo_file_text(store, None, "acme/other") is None


def test_a_clone_without_the_file_gives_an_empty_text_that_replaces_the_kept_one(
    clone: Path, store: Store
) -> None:
    repo_file_text(store, GitSource(clone, repo=REPO), REPO)
    (clone / ".prdigest.toml").unlink()
    commit(clone, "drop the repository's settings (#2)", "2026-09-09T10:00:00+08:00")
    assert GitSource(clone, repo=REPO).repo_file() == ""
    assert repo_file_text(store, GitSource(clone, repo=REPO), REPO) == ""
    assert load_repo_file(store, REPO) == ""


class _Failing:
    """A source that cannot read the repository's file now (GitHub down)."""

    repo = REPO

    def repo_file(self) -> str | None:
        raise SourceError("GitHub answered 502")


def test_a_source_that_fails_leaves_the_kept_file_in_use(clone: Path, store: Store, tmp_path: Path) -> None:
    repo_file_text(store, GitSource(clone, repo=REPO), REPO)
    settings, warnings = repo_settings(config(tmp_path), store, _Failing(), REPO, "en")  # type: ignore[arg-type]
    assert warnings == []
    assert settings.repo(REPO).taxonomy.core_paths == ["flight/**"]


def test_the_config_entry_wins_over_the_file_which_wins_over_the_defaults(
    clone: Path, store: Store, tmp_path: Path
) -> None:
    given = config(tmp_path)
    settings, warnings = repo_settings(given, store, GitSource(clone, repo=REPO), REPO, "en")
    repo = settings.repo(REPO)
    assert warnings == []
    # Set only in the repository's file: it applies.
    assert repo.taxonomy.core_paths == ["flight/**"]
    assert repo.taxonomy.tags["rollout"].paths == ["rollout/**"]
    assert repo.filters.authors == ["!renovate[bot]"]
    # Set in both: the config file's entry wins (a tag whole, by its name; the filters key by key).
    assert repo.extra_instructions == "Operators read this report."
    assert repo.taxonomy.tags["docs"].paths == ["documentation/**"]
    assert repo.filters.labels == ["!wip"]
    # Set in neither: the defaults.
    assert repo.git is None
    assert repo.filters.paths == []
    # The given settings are frozen and left as they were.
    assert given.repo(REPO).taxonomy.core_paths == []


def test_a_repository_the_config_file_does_not_list_takes_the_file_over_the_defaults(
    clone: Path, tmp_path: Path
) -> None:
    given = config(tmp_path, "")
    settings, warnings = with_repo_file(given, REPO, GitSource(clone, repo=REPO).repo_file())
    assert warnings == []
    assert [r.name for r in settings.repos] == [REPO]
    assert settings.repo(REPO).extra_instructions == "Call the rollout workers actors."
    assert settings.repo(REPO).taxonomy.tags["docs"].paths == ["site/**"]


def test_no_file_changes_nothing(tmp_path: Path) -> None:
    given = config(tmp_path)
    for text in (None, "", "# nothing set yet\n"):
        assert with_repo_file(given, REPO, text) == (given, [])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[taxonomy]\ncore_paths = ["a/**"\n', "invalid TOML: "),
        ('extra_instructions = ""\n\n[taxonomy]\ncore_pathz = []\n', "line 4: taxonomy.core_pathz: unknown"),
        ('base_branch = "release"\n', "line 1: base_branch: the source lists that branch's PRs before"),
        ('[filters]\nbase_branch = "release"\n', "line 2: filters.base_branch: the source lists"),
        ('[taxonomy.tags.ops]\npaths = "ops/**"\n', "line 2: taxonomy.tags.ops.paths: Input should be"),
        ('git = "/srv/clone"\n', "line 1: git: a clone's path means nothing inside the repository"),
        ('name = "evil/other"\n', "line 1: name: the repository is the one this file is in"),
        ('[[repos]]\nname = "acme/rocket"\n', "line 1: repos: write the keys of one [[repos]] entry"),
        # 10 KB that nest deeper than the parser's recursion: one warning, never a crash.
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "the file nests its arrays or tables too deeply"),
        ("x = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n", "the file nests its arrays or tables too deeply"),
    ],
)  # fmt: skip
def test_a_bad_file_changes_nothing_and_the_report_says_why(
    text: str, reason: str, tmp_path: Path, store: Store
) -> None:
    path = new_repo(tmp_path / "bad")
    (path / ".prdigest.toml").write_text(text)
    commit(path, "settings with a mistake (#1)", "2026-09-08T10:00:00+08:00")
    given = config(tmp_path)
    settings, warnings = repo_settings(given, store, GitSource(path, repo=REPO), REPO, "en")
    assert settings == given
    assert len(warnings) == 1 and warnings[0].startswith(f"{REPO}'s .prdigest.toml is not used: ")
    assert reason in warnings[0]
    _, zh = repo_settings(given, store, GitSource(path, repo=REPO), REPO, "zh")
    assert zh[0].startswith(f"{REPO} 的 .prdigest.toml 未被采用：") and reason in zh[0]


def test_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    text = 'extra_instructions = "x"\n[taxonomy\n'
    _, warnings = with_repo_file(config(tmp_path), REPO, text)
    assert warnings and "line 2" in warnings[0]


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    given = config(tmp_path)
    text = f'extra_instructions = "{"x" * 70_000}"\n'
    settings, warnings = with_repo_file(given, REPO, text)
    assert settings == given
    assert warnings == ["the file is larger than 64 KB"]


def test_a_report_made_with_the_layered_settings_uses_the_repositorys_taxonomy(
    clone: Path, store: Store, tmp_path: Path
) -> None:
    (clone / "rollout").mkdir()
    (clone / "rollout" / "actor.py").write_text("step = 1\n")
    (clone / "flight").mkdir()
    (clone / "flight" / "control.py").write_text("a = 2\n")
    commit(clone, "Speed up the actors (#2)", "2026-09-09T10:00:00+08:00")
    source = GitSource(clone, repo=REPO)
    week = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
    settings, _ = repo_settings(config(tmp_path), store, source, REPO, "en")
    report = make_report(settings, store, source, week, save=False, use_llm=False)
    (pr,) = [p for p in report.prs if p.number == 2]
    assert "rollout" in pr.tags  # the file's tag, by its paths
    assert "core_path" in pr.risks  # the file's core path
    # The defaults alone give it neither.
    merged = source.fetch_pr(2)
    assert merged is not None
    plain = rules.analyse(merged, Taxonomy(), "en")
    assert "rollout" not in plain.tags and "core_path" not in [r.label for r in plain.risks]


def test_make_report_layers_the_file_and_warns_of_a_bad_one(
    clone: Path, store: Store, tmp_path: Path, serve: Callable[..., FakeOpenAI]
) -> None:
    fake = serve()
    llm = LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0)
    (clone / "rollout").mkdir()
    (clone / "rollout" / "actor.py").write_text("step = 1\n")
    commit(clone, "Speed up the actors (#2)", "2026-09-09T10:00:00+08:00")
    week = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
    given = config(tmp_path, "").model_copy(update={"llm": llm})
    report = make_report(given, store, GitSource(clone, repo=REPO), week, save=False)
    assert report.warnings == []
    # The repository's notes reach every prompt the report sent.
    assert fake.requests and all("Call the rollout workers actors." in r.user for r in fake.requests)
    (clone / ".prdigest.toml").write_text("[taxonomy]\ncore_pathz = []\n")
    commit(clone, "a typo in the settings (#3)", "2026-09-10T10:00:00+08:00")
    report = make_report(
        given, store, GitSource(clone, repo=REPO), week, save=False, use_llm=False, lang="zh"
    )
    assert report.warnings == [f"{REPO} 的 .prdigest.toml 未被采用：line 2: taxonomy.core_pathz: unknown key"]
    # From the cache alone, the file the clone last gave is the one judged.
    report = make_report(given, store, None, week, repo=REPO, save=False, use_llm=False, lang="en")
    assert report.warnings == [
        f"{REPO}'s .prdigest.toml is not used: line 2: taxonomy.core_pathz: unknown key"
    ]


def test_a_pr_the_repositorys_file_filters_out_is_named_in_the_report(tmp_path: Path, store: Store) -> None:
    path = new_repo(tmp_path / "hidden")
    (path / ".prdigest.toml").write_text('[filters]\nauthors = ["!Mallory"]\n')
    commit(path, "add the repository's settings (#1)", "2026-09-08T10:00:00+08:00")
    (path / "loader.py").write_text("import pickle\nstate = pickle.loads(blob)\n")
    commit(path, "Load the state faster (#2)", "2026-09-09T10:00:00+08:00", name="Mallory", email="m@x.org")
    week = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
    settings = config(tmp_path, "")
    report = make_report(settings, store, GitSource(path, repo=REPO), week, save=False, lang="en")
    assert [p.number for p in report.prs] == [1]  # the file may narrow the report, as its filters say
    assert report.warnings == [f"{REPO}'s .prdigest.toml filters leave out 1 PRs of this period: #2"]
    # An entry of the config file that sets the same filter hides it itself: the file hid nothing.
    own = config(tmp_path, f'[[repos]]\nname = "{REPO}"\n[repos.filters]\nauthors = ["!Mallory"]\n')
    report = make_report(own, store, GitSource(path, repo=REPO), week, save=False, lang="zh")
    assert [p.number for p in report.prs] == [1] and report.warnings == []
