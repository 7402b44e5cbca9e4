"""Taxonomy and rules engine: tags, risk labels with evidence, scores with reasons, unknown inputs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from prdigest.analysis import rules
from prdigest.analysis.facts import clean_body
from prdigest.analysis.taxonomy import parse_title, tags_for
from prdigest.config import TagRule, Taxonomy
from prdigest.models import ChecksState, FileChange, PullRequest, Review, ReviewThread
from prdigest.path_kinds import matches
from prdigest.sources.fixture import FixtureSource, demo_fixture_path

NOW = datetime(2026, 9, 8, tzinfo=UTC)
MEGATRON = Taxonomy(
    tags={"megatron": TagRule(paths=["**/megatron/**"], keywords=["megatron"])},
    core_paths=["trainer/backends/**"],
)


def make(title: str = "fix: x", files: list[tuple[str, int, int]] | None = None, **kw) -> PullRequest:
    changes = None
    if files is not None:
        changes = [FileChange(path=p, additions=a, deletions=d) for p, a, d in files]
        kw.setdefault("additions", sum(a for _, a, _ in files))
        kw.setdefault("deletions", sum(d for _, _, d in files))
    return PullRequest(repo="a/b", number=7, title=title, author="ann", merged_at=NOW, files=changes, **kw)


def diff(path: str, *lines: str) -> str:
    """A diff excerpt as the sources write it: a file header, then its changed lines."""
    return "\n".join([f"diff --git a/{path} b/{path}", *lines])


def labels(pr: PullRequest, taxonomy: Taxonomy = MEGATRON) -> dict[str, str]:
    return {r.label: r.evidence_source for r in rules.analyse(pr, taxonomy, "en").risks}


@pytest.mark.parametrize(
    ("title", "brackets", "kind", "scope", "breaking", "text"),
    [
        ("[ci, megatron] fix: retry", ("ci", "megatron"), "fix", None, False, "retry"),
        ("feat(rollout)!: new api", (), "feat", "rollout", True, "new api"),
        ("dashboard: report MFU", (), None, "dashboard", False, "report MFU"),
        ("Add a page", (), None, None, False, "Add a page"),
        ("fix: one\ntwo", (), "fix", None, False, "one\ntwo"),  # a line break is read, never a crash
    ],
)
def test_parse_title(title, brackets, kind, scope, breaking, text) -> None:
    parsed = parse_title(title)
    assert (parsed.brackets, parsed.type, parsed.scope, parsed.breaking, parsed.text) == (
        brackets,
        kind,
        scope,
        breaking,
        text,
    )


def test_tags_from_title_labels_paths_and_repository_rules() -> None:
    pr = make("[ci, megatron] fix: retry NCCL init", [("trainer/x.py", 5, 1), ("tests/test_x.py", 9, 0)])
    assert tags_for(pr, MEGATRON) == ["ci", "megatron", "bugfix", "testing"]
    assert "megatron" not in tags_for(pr, Taxonomy())  # an extra tag exists only where configured
    labelled = make("Speed up loading", [("docs/a.md", 50, 0), ("a.py", 10, 0)], labels=["enhancement"])
    assert tags_for(labelled, Taxonomy()) == ["performance", "feature", "docs"]
    by_path = make("Refresh", [("trainer/backends/megatron/sync.py", 1, 1)])
    assert "megatron" in tags_for(by_path, MEGATRON)


def test_globs_match_at_the_top_level() -> None:
    assert matches("tests/test_a.py", ("**/tests/**",))
    assert matches("pkg/tests/test_a.py", ("**/tests/**",))
    assert not matches("pkg/testsuite.py", ("**/tests/**",))


def test_each_risk_label_fires_with_its_evidence_source() -> None:
    core = ("trainer/backends/sync.py", 900, 100)
    reviews = [Review(author="bob", state="COMMENTED")]
    cases = {
        "core_path": (make("refactor: sync", [core], reviews=[]), "paths"),
        "large_low_review": (make("refactor: sync", [core], reviews=reviews, review_threads=[]), "reviews"),
        "fork_no_bot_review": (make("fix: x", [("a.py", 1, 1)], is_fork=True, reviews=reviews), "reviews"),
        "unreviewed_core_change": (  # approved by its author alone
            make(
                "fix: sync",
                [("trainer/backends/sync.py", 3, 1)],
                reviews=[Review(author="ann", state="APPROVED")],
            ),
            "reviews",
        ),
        "tests_removed": (
            make(
                "chore: drop",
                files=None,
                diff_excerpt=diff("tests/test_a.py", "+@pytest.mark.skip(reason='flaky')"),
            ),
            "diff",
        ),
        "no_tests": (make("fix: crash", [("a.py", 3, 1)]), "paths"),
        "dependency_change": (make("chore: bump", [("pyproject.toml", 1, 1)]), "paths"),  # no diff known
        "config_breaking": (
            make(
                "refactor: x", diff_excerpt=diff("pkg/cli.py", "-  p.add_argument('--old-flag')", "+  x = 1")
            ),
            "diff",
        ),
        "security_sensitive": (
            make("feat: load", diff_excerpt=diff("pkg/io.py", "+    state = pickle.loads(blob)")),
            "diff",
        ),
        "perf_regression": (make("fix: x", body="Throughput drops 8% on H100 as measured."), "body"),
        "unresolved_threads": (
            make("fix: x", review_threads=[ReviewThread(is_resolved=False, body="why?")]),
            "reviews",
        ),
        "failing_checks": (
            make("fix: x", checks=ChecksState(state="FAILURE", failing=["gpu-e2e"])),
            "checks",
        ),
    }
    assert set(cases) == set(rules.RISK_RULES)
    for label, (pr, source) in cases.items():
        found = labels(pr)
        assert found.get(label) == source, (label, found)


def test_tests_removed_by_path_and_perf_suspected() -> None:
    pr = make("chore: cleanup", [("a.py", 1, 1)])
    pr.files.append(FileChange(path="tests/test_old.py", additions=0, deletions=40, status="removed"))
    assert labels(pr)["tests_removed"] == "paths"
    analysis = rules.analyse(
        make("perf: x", body="This may cause a slowdown for small batches."), Taxonomy(), "en"
    )
    assert analysis.risks[0].evidence.startswith("suspected regression")


def test_unknown_inputs_fire_no_rule() -> None:
    """A git clone: no reviews, threads, forks or checks known, so none of their rules fire."""
    pr = make("refactor: sync", [("trainer/backends/sync.py", 2000, 100)])
    assert pr.reviews is None and pr.is_fork is None and pr.checks is None and pr.review_threads is None
    found = labels(pr)
    assert not {"large_low_review", "fork_no_bot_review", "unresolved_threads", "failing_checks"} & set(found)
    assert "core_path" in found  # files are known: that rule runs
    assert labels(make("fix: crash", files=None)) == {}  # not even the files: no test rule either


def test_not_fired_when_the_data_says_no() -> None:
    bot = Review(author="review-bot", state="COMMENTED", is_bot=True)
    assert "fork_no_bot_review" not in labels(make("fix: x", [("a.py", 1, 1)], is_fork=True, reviews=[bot]))
    resolved = ReviewThread(is_resolved=True, body="ok")
    outdated = ReviewThread(is_resolved=False, is_outdated=True, body="old")
    assert "unresolved_threads" not in labels(make("fix: x", review_threads=[resolved, outdated]))
    assert "failing_checks" not in labels(make("fix: x", checks=ChecksState(state="SUCCESS")))
    tested = make("fix: crash", [("a.py", 3, 1), ("tests/test_a.py", 10, 0)])
    assert "no_tests" not in labels(tested)
    safe = make(
        "fix: x",
        diff_excerpt=diff(
            "pkg/run.py", "-    proc = run(cmd, shell=True)", "+    proc = run(argv, shell=False)"
        ),
    )
    assert labels(safe)["security_sensitive"] == "diff"  # the removed call is the evidence, not the new one
    assert "rename" not in str(labels(make("docs: rename the Agentic Env page")))


@pytest.mark.parametrize(
    ("line", "fires"),
    [
        ("result = eval(expr)", True),
        ("exec(code)", True),
        ("sandbox.process.exec(cmd)", False),  # a method of another API
        ("# Held-out eval (disjoint split)", False),  # a comment
        ("medieval(x)", False),
        ("obj = pickle.load(f)", True),
        ("run(cmd, shell=True)", True),
        ("os.system(cmd)", True),
        ("cfg = yaml.load(f)", True),
        ("cfg = yaml.load(f, Loader=yaml.SafeLoader)", False),
        ("sd = torch.load(path)", True),
        ("sd = torch.load(path, weights_only=True)", False),
        ("requests.get(url, verify=False)", True),
        ('API_KEY = "sk-123456789"', True),
        ('token = "abc"', False),  # too short to be a credential
        ('eos_token = "<|endoftext|>"', False),  # a model's special token
        ('PER_TOKEN_ACTIVATION = "1"', False),
        ("max_tokens = 4096", False),
    ],
)
def test_security_sensitive_code_in_the_diff(line: str, fires: bool) -> None:
    pr = make("chore: tidy", [("pkg/a.py", 1, 0)], diff_excerpt=diff("pkg/a.py", f"+    {line}"))
    assert ("security_sensitive" in labels(pr)) is fires


def test_the_first_security_hit_in_the_diff_is_quoted() -> None:
    excerpt = diff("pkg/a.py", "+    a = 1", "+    obj = pickle.loads(blob)", "+    out = eval(text)")
    risks = rules.analyse(make("chore: x", diff_excerpt=excerpt), MEGATRON, "en").risks
    risk = next(r for r in risks if r.label == "security_sensitive")
    assert "pickle.loads(blob)" in risk.evidence and "eval" not in risk.evidence


def test_scores_are_bounded_and_explained() -> None:
    big = make(
        "feat(sync): new transport",
        [("trainer/backends/a.py", 3000, 900), ("trainer/rollout/b.py", 800, 0), ("tests/test_a.py", 300, 0)],
        body="Because the old one raced, " * 40,
    )
    small = make("docs: typo", [("docs/a.md", 1, 1)])
    a, b = rules.analyse(big, MEGATRON, "en"), rules.analyse(small, MEGATRON, "en")
    assert 0 <= b.importance < a.importance <= 10 and 0 <= b.insight < a.insight <= 10
    assert b.importance <= 4  # docs only
    assert any("core paths" in r for r in a.reasons) and any(
        "size 4700 lines" in r for r in a.reasons
    )  # shipped code only
    assert a.summary.startswith("sync: New transport. Because the old one raced")  # the title, then the body
    assert a.version == rules.rules_version(MEGATRON) != rules.rules_version(Taxonomy())


def test_clean_body_strips_template_boilerplate() -> None:
    body = "## Motivation\nFix the race.\n<!-- template -->\n## Checklist\n- [x] tests\n- [ ] docs\n"
    assert clean_body(body) == "Fix the race."


def test_demo_week_risks_land_on_the_intended_prs() -> None:
    source = FixtureSource(demo_fixture_path())
    found = {p.number: set(labels(p, Taxonomy())) for p in source.prs}
    expected = {
        4131: "unresolved_threads",
        4127: "fork_no_bot_review",
        4140: "tests_removed",
        4116: "tests_removed",
        4120: "security_sensitive",
        4124: "large_low_review",
        4142: "failing_checks",
        4109: "dependency_change",
        4129: "config_breaking",
        4137: "perf_regression",
        4108: "no_tests",
    }
    for number, label in expected.items():
        assert label in found[number], (number, found[number])
    assert "fork_no_bot_review" not in found[4110]  # a fork that the bot did review


@pytest.mark.parametrize(
    ("title", "brackets", "kind", "scope", "text"),
    [
        ("(1/4) feat(ci): metric gate", (), "feat", "ci", "metric gate"),
        ("[3/7][multi-lora]: trainer core", ("multi-lora",), None, None, "trainer core"),
        ("feat (async): evaluation", (), "feat", "async", "evaluation"),
    ],
)
def test_stack_markers_and_bracket_groups_before_the_type(title, brackets, kind, scope, text) -> None:
    parsed = parse_title(title)
    assert (parsed.brackets, parsed.type, parsed.scope, parsed.text) == (brackets, kind, scope, text)


def test_a_small_fix_of_a_severe_problem_outranks_routine_changes() -> None:
    leak = make("fix: release the GPU memory leak in weight sync", [("pkg/sync.py", 6, 2)])
    oom = make("Avoid OOM when the batch is empty", [("pkg/batch.py", 4, 1)])
    typo = make("fix: typo in a log message", [("pkg/sync.py", 1, 1)])
    refactor = make("refactor: split the loader", [("pkg/loader.py", 150, 150)])
    ci = make("ci: cache the wheels", [(".github/workflows/ci.yml", 300, 20)])
    score = {name: rules.analyse(pr, Taxonomy(), "en").importance for name, pr in locals().items()}
    assert score["leak"] > score["refactor"] and score["oom"] > score["refactor"]
    assert score["leak"] > score["typo"] and score["oom"] > score["ci"]
    reasons = rules.analyse(leak, Taxonomy(), "en").reasons
    assert any("fixes something severe: memory leak" in r for r in reasons)


def test_a_version_users_install_counts_and_an_example_option_is_no_interface() -> None:
    bump = make(
        "Bump the inference engine to v2",
        [("docker/Dockerfile", 1, 1)],
        diff_excerpt=diff(
            "docker/Dockerfile", "-RUN pip install engine==1.9", "+RUN pip install engine==2.0"
        ),
    )
    image_tweak = make(
        "docker: set an env var",
        [("docker/Dockerfile", 1, 0)],
        diff_excerpt=diff("docker/Dockerfile", "+ENV A=1"),
    )
    a, b = rules.analyse(bump, Taxonomy(), "en"), rules.analyse(image_tweak, Taxonomy(), "en")
    assert "dependency_change" in {r.label for r in a.risks} and a.importance > b.importance
    example = make(
        "examples: drop the bake CLI",
        [("examples/agent/bake.py", 0, 3)],
        diff_excerpt=diff(
            "examples/agent/bake.py", '-    parser.add_argument("--bake-all", action="store_true")'
        ),
    )
    assert "config_breaking" not in labels(example)


def test_an_upgrade_the_title_names_outranks_a_pin_moved_on_the_way() -> None:
    lines = (
        "-RUN pip install engine==1.9.0 tokenizers==0.1",
        "+RUN pip install engine==2.3.0 tokenizers==0.2",
    )
    files = [("docker/Dockerfile", 1, 1), ("docker/patches/engine_fix.patch", 30, 10)]
    excerpt = diff("docker/Dockerfile", *lines)
    bump = rules.analyse(make("Bump Engine to 2.3.0", files, diff_excerpt=excerpt), Taxonomy(), "en")
    moved = rules.analyse(make("docker: refresh the image", files, diff_excerpt=excerpt), Taxonomy(), "en")
    # The patches it carries count as its size.
    assert any("upgrades engine 1.9.0 -> 2.3.0" in r for r in bump.reasons)
    assert not any("upgrades" in r for r in moved.reasons) and bump.importance >= moved.importance + 1.5
    unpinned = diff("docker/Dockerfile", "-RUN pip install engine==1.9.0", "+RUN pip install engine")
    floating = rules.analyse(make("Bump Engine", files, diff_excerpt=unpinned), Taxonomy(), "en")
    assert not any("upgrades" in r for r in floating.reasons)  # no release to name


def test_a_moved_bound_of_a_range_is_no_install_every_user_picks_up() -> None:
    """A raised floor or ceiling of a supported range reaches the users at its edge; a pin moved or a new
    package reaches every user. All three are dependency changes."""

    def bump(title: str, *lines: str) -> rules.PRAnalysis:
        files = [("pyproject.toml", 1, 1), ("pkg/versions.py", 2, 2)]
        excerpt = "\n".join([diff("pyproject.toml", *lines), diff("pkg/versions.py", "-LOW = 3", "+LOW = 4")])
        return rules.analyse(make(title, files, diff_excerpt=excerpt), Taxonomy(), "en")

    floor = bump(
        "Drop engine 0.13 support", '-    "engine>=0.13.0,<=0.23.0",', '+    "engine>=0.14.0,<=0.23.0",'
    )
    ceiling = bump(
        "Support engine 0.24", '-    "engine>=0.13.0,<=0.23.0",', '+    "engine>=0.13.0,<=0.24.0",'
    )
    pin = bump("Support engine 0.24", '-    "engine==0.23.0",', '+    "engine==0.24.0",')
    added = bump("Support engine 0.24", '+    "tokenizers>=0.2",')
    every = [floor, ceiling, pin, added]
    assert all("dependency_change" in {r.label for r in a.risks} for a in every)
    installs = [any("changes what users install" in r for r in a.reasons) for a in every]
    assert installs == [False, False, True, True]
    assert pin.importance >= ceiling.importance + 1.5


def test_new_options_make_a_feature_whatever_the_title_calls_it() -> None:
    option = ('+    parser.add_argument("--topk-per-position", type=int, default=0)', "+    return parser")
    files = [("pkg/arguments.py", 2, 0)]
    scoring = make(
        "Per-position scoring + robustness fixes", files, diff_excerpt=diff("pkg/arguments.py", *option)
    )
    reasons = rules.analyse(scoring, Taxonomy(), "en").reasons
    assert any("adds options --topk-per-position" in r for r in reasons)
    plain = make(
        "Per-position scoring + robustness fixes", files, diff_excerpt=diff("pkg/arguments.py", "+x = 1")
    )
    assert (
        rules.analyse(scoring, Taxonomy(), "en").importance
        == rules.analyse(plain, Taxonomy(), "en").importance + 0.5
    )
    renamed = diff("pkg/arguments.py", '-    parser.add_argument("--topk", type=int, default=0)', option[0])
    rename = make("Per-position scoring + robustness fixes", files, diff_excerpt=renamed)
    assert not any("adds options" in r for r in rules.analyse(rename, Taxonomy(), "en").reasons)  # no new one


def test_a_field_added_to_a_config_class_is_a_new_option() -> None:
    def pr(*lines: str, context: str = "class DataConfig:") -> PullRequest:
        excerpt = diff("pkg/data.py", f"@@ -10,2 +10,3 @@ {context}", *lines)
        return make("Align loaders with the trainer", [("pkg/data.py", 3, 0)], diff_excerpt=excerpt)

    field = "+    fraction: float | None = None"
    added = rules.analyse(pr(field), Taxonomy(), "en")
    assert any("adds options DataConfig.fraction" in r for r in added.reasons)
    # The same line in a class users do not configure, a field that was there, or a local variable: none.
    assert not any(
        "adds options" in r
        for r in rules.analyse(pr(field, context="class Loader:"), Taxonomy(), "en").reasons
    )
    moved = pr("-    fraction: float = 1.0", field)
    assert not any("adds options" in r for r in rules.analyse(moved, Taxonomy(), "en").reasons)
    local = pr("+        fraction: float = 0.5")
    assert not any("adds options" in r for r in rules.analyse(local, Taxonomy(), "en").reasons)


def test_a_new_package_counts_as_one_more_module() -> None:
    def pr(*paths: str) -> PullRequest:
        files = [FileChange(path=p, additions=100, deletions=0, status="added") for p in paths]
        return make(
            "registry with an HTTP control plane", additions=100 * len(paths), deletions=0, files=None
        ).model_copy(update={"files": files})

    landed = rules.analyse(pr("pkg/registry/core.py", "pkg/registry/__init__.py"), Taxonomy(), "en")
    grown = rules.analyse(pr("pkg/registry/core.py", "pkg/registry/http.py"), Taxonomy(), "en")
    assert (
        any("new package pkg/registry" in r for r in landed.reasons) and landed.importance > grown.importance
    )
    assert not any("new package" in r for r in grown.reasons)


def test_a_test_gated_on_hardware_is_not_disabled_and_a_deleted_module_needs_no_test() -> None:
    gated = make(
        "feat: fp4 quantizer",
        [("pkg/fp4.py", 40, 0), ("tests/test_fp4.py", 20, 0)],
        diff_excerpt=diff("tests/test_fp4.py", '+    disabled="Requires a Blackwell runner",'),
    )
    assert "tests_removed" not in labels(gated)
    dropped = make("fix: remove the legacy writer", [("pkg/legacy.py", 0, 30), ("pkg/io.py", 0, 4)])
    dropped.files[0].status = "removed"
    dropped = dropped.model_copy(
        update={"diff_excerpt": diff("pkg/io.py", "-from pkg.legacy import Writer", "-    Writer.install()")}
    )
    assert "no_tests" not in labels(dropped)


def test_a_field_whose_help_text_changes_keeps_its_default() -> None:
    reworded = make(
        "docs: clearer help",
        [("pkg/args.py", 1, 1)],
        diff_excerpt=diff(
            "pkg/args.py",
            '-    model_type: str = field(help="Model type")',
            '+    model_type: str = field(help="Model type matching the script")',
        ),
    )
    assert "config_breaking" not in labels(reworded)
    changed = make(
        "perf: bigger batches",
        [("pkg/args.py", 1, 1)],
        diff_excerpt=diff("pkg/args.py", "-    batch_size: int = 32", "+    batch_size: int = 64"),
    )
    assert "from 32 to 64" in rules.analyse(changed, Taxonomy(), "en").risks[0].evidence


def test_a_base_image_changed_below_other_lines_is_a_dependency_change() -> None:
    excerpt = diff(
        "docker/Dockerfile",
        "+# build stage",
        "+ENV A=1",
        "-FROM nvidia/cuda:12.4-devel",
        "+FROM nvidia/cuda:12.8-devel",
    )
    risk = rules.analyse(
        make("docker: newer CUDA", [("docker/Dockerfile", 3, 1)], diff_excerpt=excerpt), Taxonomy(), "en"
    )
    found = {r.label: r for r in risk.risks}
    assert "FROM nvidia/cuda:12.8-devel" in found["dependency_change"].evidence


def test_a_release_and_a_fix_of_an_error_users_hit_outrank_routine_work() -> None:
    version = ('-__version__ = "1.8.0.dev0"', '+__version__ = "1.8.0"')
    files = [("pkg/__init__.py", 1, 1), ("pyproject.toml", 1, 1)]
    release = make("Release: v1.8", files, diff_excerpt=diff("pkg/__init__.py", *version))
    dev_bump = make("Bump dev version", files, diff_excerpt=diff("pkg/__init__.py", *version))
    error = make("Fix FileNotFoundError when the cache is cold", [("pkg/cache.py", 2, 0)])
    routine = make("Support a mapping of datasets for evaluation", [("pkg/trainer.py", 30, 5)])
    prs = {"release": release, "dev_bump": dev_bump, "error": error, "routine": routine}
    score = {name: rules.analyse(pr, Taxonomy(), "en") for name, pr in prs.items()}
    assert score["release"].importance > score["routine"].importance > score["dev_bump"].importance
    assert any("releases v1.8" in r for r in score["release"].reasons)
    assert any("fixes something severe: FileNotFoundError" in r for r in score["error"].reasons)


def test_a_change_of_comments_alone_weighs_what_docs_weigh() -> None:
    lines = (
        "-    # the sampler repeats each prompt",
        "+    # the sampler repeats each prompt num_iterations times",
    )
    comment = make(
        "Change the sampler's comment",
        [("pkg/sampler.py", 30, 30)],
        diff_excerpt=diff("pkg/sampler.py", *lines),
    )
    logic = make(
        "Change the sampler",
        [("pkg/sampler.py", 30, 30)],
        diff_excerpt=diff("pkg/sampler.py", "-    n = 1", "+    n = 2"),
    )
    a, b = rules.analyse(comment, Taxonomy(), "en"), rules.analyse(logic, Taxonomy(), "en")
    assert a.importance <= rules.NO_CODE_CAP < b.importance


def test_a_ci_action_pin_moved_is_a_dependency_change_and_a_new_workflow_is_not() -> None:
    path = ".github/workflows/docs.yml"
    moved = make(
        "Update the docs builder",
        [(path, 1, 1)],
        diff_excerpt=diff(
            path,
            "-    uses: acme/builder/.github/workflows/build.yml@2f7376e",
            "+    uses: acme/builder/.github/workflows/build.yml@e60a538",
        ),
    )
    new = make(
        "ci: add a ROCm workflow",
        [(".github/workflows/rocm.yml", 30, 0)],
        diff_excerpt=diff(
            ".github/workflows/rocm.yml", "+      - uses: actions/checkout@v4", "+        run: make test"
        ),
    )
    found = rules.analyse(moved, Taxonomy(), "en")
    assert "dependency_change" in labels(moved) and "dependency_change" not in labels(new)
    assert any("acme/builder/.github/workflows/build.yml@e60a538" in r.evidence for r in found.risks)
    assert found.importance <= rules.NO_CODE_CAP  # CI's pin: nothing users install


def test_a_new_option_that_lets_remote_code_run_is_security_sensitive() -> None:
    path = "pkg/config.py"
    declared = make(
        "Add trust_remote_code to the trainer config",
        [(path, 3, 0)],
        diff_excerpt=diff(path, "+    trust_remote_code: bool = field(default=False)"),
    )
    forwarded = make(
        "Load the tokenizer like the model",
        [("pkg/trainer.py", 1, 0)],
        diff_excerpt=diff("pkg/trainer.py", "+            trust_remote_code=args.trust_remote_code,"),
    )
    assert "security_sensitive" in labels(declared)
    assert "security_sensitive" not in labels(forwarded)  # the user's own choice, handed on


@pytest.mark.parametrize(
    ("path", "lines", "sensitive"),
    [
        # The release workflow hands the project's own secret to its publish step: routine.
        (".github/workflows/publish.yml", ["+          password: ${{ secrets.PYPI_TOKEN }}"], False),
        # GitHub's own token, in any workflow the PR's code does not get to run in as a target.
        (".github/workflows/tests.yml", ["+          token: ${{ secrets.GITHUB_TOKEN }}"], False),
        # The same secret, once pull_request_target lets a fork's code run with it.
        (
            ".github/workflows/publish.yml",
            ["+on: pull_request_target", "+          password: ${{ secrets.PYPI_TOKEN }}"],
            True,
        ),
        # A secret handed to the step that runs the PR's tests.
        (
            ".github/workflows/tests.yml",
            ["+        env:", "+          HF_TOKEN: ${{ secrets.HF_TOKEN }}"],
            True,
        ),
    ],
    ids=["publish", "github-token", "pull-request-target", "test-step"],
)
def test_a_ci_secret_is_a_risk_only_where_code_the_pr_controls_gets_it(
    path: str, lines: list[str], sensitive: bool
) -> None:
    pr = make("ci: update the workflow", [(path, len(lines), 0)], diff_excerpt=diff(path, *lines))
    assert ("security_sensitive" in labels(pr)) is sensitive
