"""What a path is, by convention of most repositories: tests, docs, CI, dependency manifests, support
files, examples. Pure and cached; the taxonomy (analysis), the diff excerpt (sources) and the rules read
it, so it sits below them all."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

# `**/` also matches at the top level (see `matches`).
TEST_GLOBS = (
    "**/tests/**",
    "**/test/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/*_test.go",
    "**/*.test.ts",
    "**/*.spec.ts",
    "**/conftest.py",
)
DOC_GLOBS = ("docs/**", "doc/**", "**/*.md", "**/*.rst", "**/*.mdx", "**/*.ipynb")
CI_GLOBS = (".github/**", ".gitlab-ci.yml", ".circleci/**", "ci/**", ".buildkite/**", "**/Jenkinsfile")
DEPENDENCY_GLOBS = (
    "**/pyproject.toml",
    "**/requirements*.txt",
    "setup.py",
    "setup.cfg",
    "**/Dockerfile*",
    "docker/**",
    "**/*.lock",
    "**/package.json",
    "go.mod",
    "Cargo.toml",
    "**/environment.yml",
    "Pipfile",
)
# Code that does not ship with the package: examples, scripts, tools, images, hidden tool folders.
# Rules about the product (missing tests, public options) do not read these.
SUPPORT_GLOBS = (
    "examples/**",
    "**/examples/**",
    "example/**",
    "scripts/**",
    "tools/**",
    "docker/**",
    "benchmarks/**",
    "bench/**",
    "notebooks/**",
    "recipes/**",
    ".*/**",
    "**/Dockerfile*",
    "**/*.sh",
)
# Used when a repository names no core paths of its own.
DEFAULT_CORE_GLOBS = (
    "**/core/**",
    "**/backends/**",
    "**/engine/**",
    "**/kernels/**",
    "**/distributed/**",
    "**/*.cu",
    "**/*.cuh",
)


def matches(path: str, globs: tuple[str, ...] | list[str]) -> bool:
    """Glob match where `**/` may match nothing, so `**/tests/**` also matches `tests/x.py`."""
    return _matches(path, tuple(globs))


@lru_cache(maxsize=16384)  # keyed on the globs' tuple, not the taxonomy that holds them (unhashable)
def _matches(path: str, globs: tuple[str, ...]) -> bool:
    """Cached per path and globs: a repository's core and tag globs are asked about every file of a week."""
    return _glob_pattern(globs).match(path) is not None


@lru_cache(maxsize=256)
def _glob_pattern(globs: tuple[str, ...]) -> re.Pattern[str]:
    """All the globs as one compiled pattern: a week of thousands of files is matched many times."""
    variants = [g for glob in globs for g in (glob, glob[3:]) if g == glob or glob.startswith("**/")]
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in variants) or "(?!)")


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_test(path: str) -> bool:
    return matches(path, TEST_GLOBS)


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_doc(path: str) -> bool:
    return matches(path, DOC_GLOBS) and not is_test(path)


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_ci(path: str) -> bool:
    return matches(path, CI_GLOBS)


EXAMPLE_GLOBS = ("examples/**", "**/examples/**", "example/**", "**/experimental/**")


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_example(path: str) -> bool:
    return matches(path, EXAMPLE_GLOBS)


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_support(path: str) -> bool:
    return matches(path, SUPPORT_GLOBS)


@lru_cache(maxsize=16384)  # a week's paths are asked about by many rules
def is_dependency(path: str) -> bool:
    return matches(path, DEPENDENCY_GLOBS)
