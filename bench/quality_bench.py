"""Report-quality benchmark: the report of each labelled real week scored against a maintainer's labels.

    python bench/quality_bench.py [--shared ../shared] [--clones DIR] [--repo OWNER/NAME] [--lang zh]
                                  [--llm-replay] [-v]

For every labels file in `<shared>/data/labels/` (the format is defined in its SPEC.md) the
report of that week is built from the real history (a clone of its repository's bundle,
`<owner>__<name>.bundle`) and scored. Printed per week (`<owner>__<name>_<figure>_<since>=value`),
as each repository's mean over its weeks (`<owner>__<name>_<figure>=value`) and as the mean over
every week (`<figure>=value`):

  risk_precision, risk_recall  the six judgement labels, PR by PR, micro-averaged over the week
  key_recall     the share of the labelled key PRs among the report's top K by importance (K = their number)
  spearman       rank correlation of labelled and reported importance over all PRs of the week
  story_f1       B-cubed F1 of the report's themes against the labelled stories
  risk_level_ok  1 where the week's risk level equals the label
  <label>_precision, <label>_recall   each judgement label over a repository's weeks (micro-averaged)

`--llm-replay` builds the weeks that have answers in `<shared>/data/llm_answers/` through the
LLM engine, with a fake OpenAI server replaying those answers, and prints the same figures with
the prefix `llm_`, then what the replayed reports asked: `llm_requests` (every request),
`llm_requests_over_prs` (requests beyond one per PR), `llm_prompt_tokens`, `followup_requests` and
`followup_token_share` (of the prompt tokens); `written_` figures score the answer files as written
(the ceiling the pipeline must not fall below). `-v` lists each week's disagreements with the labels.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from prdigest.analysis.risks.rules import JUDGEMENT_LABELS  # noqa: E402
from prdigest.config import Settings, load_settings  # noqa: E402
from prdigest.models import Report, Window  # noqa: E402
from prdigest.pipeline.single import make_report  # noqa: E402
from prdigest.sources.git.source import GitSource  # noqa: E402
from prdigest.storage import Store  # noqa: E402

JUDGED = JUDGEMENT_LABELS
FIGURES = ("risk_precision", "risk_recall", "key_recall", "spearman", "story_f1", "risk_level_ok")


@dataclass
class Judged:
    """What is scored of a report, or of answers as written: per PR risks and importance, themes, level."""

    risks: dict[int, set[str]]
    importance: dict[int, float]
    themes: list[list[int]]
    level: str | None


def judged_report(report: Report) -> Judged:
    return Judged(
        risks={p.number: set(p.risks or []) & set(JUDGED) for p in report.prs},
        importance={p.number: p.importance or 0.0 for p in report.prs},
        themes=[list(t.prs) for t in report.themes],
        level=report.risk_level,
    )


def ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float:
    rx, ry = ranks(xs), ranks(ys)
    mx, my = mean(rx), mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else 0.0


def bcubed_f1(themes: list[list[int]], stories: dict[int, str]) -> float:
    """B-cubed F1 over the PRs in a story or a theme; a PR on one side only is alone on the other."""
    theme_of: dict[int, int] = {}
    for i, prs in enumerate(themes):
        for n in prs:
            theme_of.setdefault(n, i)  # a PR in several themes counts in its first
    items = set(theme_of) | set(stories)
    if not items:
        return 0.0
    theme_key = {n: ("t", theme_of[n]) if n in theme_of else ("alone", n) for n in items}
    story_key = {n: ("s", stories[n]) if n in stories else ("alone", n) for n in items}
    precision = recall = 0.0
    for n in items:
        same_theme = [m for m in items if theme_key[m] == theme_key[n]]
        same_story = [m for m in items if story_key[m] == story_key[n]]
        precision += sum(story_key[m] == story_key[n] for m in same_theme) / len(same_theme)
        recall += sum(theme_key[m] == theme_key[n] for m in same_story) / len(same_story)
    p, r = precision / len(items), recall / len(items)
    return 2 * p * r / (p + r) if p + r else 0.0


def label_counts(judged: Judged, labels: dict) -> dict[str, list[int]]:
    """Per judged label, [true positives, false positives, false negatives] over the week's PRs."""
    counts = {label: [0, 0, 0] for label in JUDGED}
    for pr in labels["prs"]:
        want, got = set(pr["risks"]) & set(JUDGED), judged.risks.get(pr["number"], set())
        for label in JUDGED:
            counts[label][0] += label in want & got
            counts[label][1] += label in got - want
            counts[label][2] += label in want - got
    return counts


def score(judged: Judged, labels: dict) -> tuple[dict[str, float], list[str]]:
    """The figures of one week, and the disagreements behind them."""
    tp = fp = fn = 0
    notes: list[str] = []
    labelled = {p["number"]: p for p in labels["prs"]}
    for number, pr in labelled.items():
        want = set(pr["risks"]) & set(JUDGED)
        got = judged.risks.get(number, set())
        tp += len(want & got)
        fp += len(got - want)
        fn += len(want - got)
        for label in sorted(got - want):
            notes.append(f"FP #{number} {label}: {pr['title'][:70]}")
        for label in sorted(want - got):
            notes.append(f"FN #{number} {label}: {pr['risks'][label][:110]}")
    key = {n for n, p in labelled.items() if p["key"]}
    top = sorted(labelled, key=lambda n: (-judged.importance.get(n, 0.0), n))[: len(key)]
    notes += [
        f"key missed #{n} ({judged.importance.get(n, 0.0)}): {labelled[n]['title'][:70]}"
        for n in key - set(top)
    ]
    numbers = sorted(labelled)
    stories = {n: p["story"] for n, p in labelled.items() if p["story"]}
    figures = {
        "risk_precision": tp / (tp + fp) if tp + fp else 1.0,
        "risk_recall": tp / (tp + fn) if tp + fn else 1.0,
        "key_recall": len(key & set(top)) / len(key) if key else 1.0,
        "spearman": spearman(
            [labelled[n]["importance"] for n in numbers], [judged.importance.get(n, 0.0) for n in numbers]
        ),
        "story_f1": bcubed_f1([[n for n in t if n in labelled] for t in judged.themes], stories),
        "risk_level_ok": float(judged.level == labels["risk_level"]),
    }
    if judged.level != labels["risk_level"]:
        notes.append(f"risk level {judged.level}, labelled {labels['risk_level']}")
    return figures, notes


def build(settings: Settings, clone: Path, labels: dict, lang: str, db: Path) -> Report:
    window = Window(
        since=date.fromisoformat(labels["since"]), until=date.fromisoformat(labels["until"]), tz=labels["tz"]
    )
    store = Store(db)
    try:
        return make_report(
            settings, store, GitSource(clone, repo=labels["repo"]), window, lang=lang, save=False
        )
    finally:
        store.close()


def slug(repo: str) -> str:
    return repo.replace("/", "__")


def report_weeks(
    name: str,
    weeks: Iterable[tuple[Path, dict]],
    make: Callable[[dict], Judged],
    verbose: bool,
) -> None:
    """Print each week's figures (``<owner>__<name>_<figure>_<since>``), each repository's mean over its
    weeks (``<owner>__<name>_<figure>``) and the mean over every week (``<figure>``), prefixed with
    ``name``."""
    per_repo: dict[str, list[dict[str, float]]] = {}
    per_label: dict[str, dict[str, list[int]]] = {}
    for path, labels in weeks:
        judged = make(labels)
        figures, notes = score(judged, labels)
        repo = slug(labels["repo"])
        per_repo.setdefault(repo, []).append(figures)
        counts = per_label.setdefault(repo, {label: [0, 0, 0] for label in JUDGED})
        for label, (tp, fp, fn) in label_counts(judged, labels).items():
            counts[label] = [counts[label][0] + tp, counts[label][1] + fp, counts[label][2] + fn]
        for key in FIGURES:
            print(f"{name}{repo}_{key}_{labels['since']}={figures[key]:.2f}", flush=True)
        if verbose:
            print(f"# {path.name}", *(f"#   {note}" for note in notes), sep="\n", file=sys.stderr)
    for repo, found in per_repo.items():
        for key in FIGURES:
            print(f"{name}{repo}_{key}={mean(w[key] for w in found):.2f}", flush=True)
        for label, (tp, fp, fn) in per_label[repo].items():  # each label over the repository's weeks
            print(f"{name}{repo}_{label}_precision={tp / (tp + fp) if tp + fp else 1.0:.2f}", flush=True)
            print(f"{name}{repo}_{label}_recall={tp / (tp + fn) if tp + fn else 1.0:.2f}", flush=True)
    every = [w for found in per_repo.values() for w in found]
    for key in FIGURES:
        print(f"{name}{key}={mean(w[key] for w in every):.2f}", flush=True)


def written(answers: Path, labels: dict) -> Judged:
    """The answer files scored as written: their labels, scores and themes, the level from their labels."""
    from prdigest.analysis.risks.level import risk_level
    from prdigest.models import RiskLabel

    risks: dict[int, list[RiskLabel]] = {}
    importance: dict[int, float] = {}
    for p in labels["prs"]:
        file = answers / f"pr-{p['number']}.json"
        if file.exists():
            data = json.loads(file.read_text())
            risks[p["number"]] = [RiskLabel.model_validate(r) for r in data.get("risks", [])]
            importance[p["number"]] = float(data.get("importance", 0))
    narrative = json.loads((answers / "narrative.json").read_text())
    return Judged(
        risks={n: {r.label for r in found} & set(JUDGED) for n, found in risks.items()},
        importance=importance,
        themes=[t["prs"] for t in narrative.get("themes", [])],
        level=risk_level(r for found in risks.values() for r in found),
    )


_PR = re.compile(r"PR #(\d+):")
_ITEM = re.compile(r"== Item (\d+) ==\nRisk \((\w+)")
_RISK_PR = re.compile(r"Risk PR #(\d+):")


def replay_responder(answers: Path, asked: Counter[str]):
    """Answer each request from the answer files by what survives a rewording of the prompt: an analysis
    by the PR it names (``pr-<N>.json``), a follow-up item by its label and first PR
    (``followup-<label>-<N>.json``: ``{"addressed_by": [...]}``), the narrative with its file; a request
    kind without a file gets a schema placeholder (no verdict: the rules stand). ``asked`` counts them."""

    def respond(request) -> str:
        if "<untrusted_pr_data>" in request.user:
            asked["analysis"] += 1
            match = _PR.search(request.user)
            file = answers / f"pr-{match.group(1) if match else 0}.json"
            if file.exists():
                return file.read_text()
            return json.dumps({"error": "no answer for this PR"})
        if "<untrusted_followup_data>" in request.user:
            asked["followup"] += 1
            asked["followup_tokens"] += len(request.text) // 4  # as the fake server counts them
            verdicts = []
            for block in request.user.split("== Item ")[1:]:
                item = _ITEM.match(f"== Item {block}")
                first = _RISK_PR.search(block)
                if item is None or first is None:
                    continue
                file = answers / f"followup-{item.group(2)}-{first.group(1)}.json"
                if file.exists():
                    verdicts.append({"item": int(item.group(1)), **json.loads(file.read_text())})
            return json.dumps({"items": verdicts})
        asked["narrative"] += 1
        return (answers / "narrative.json").read_text()

    return respond


def clone_of(data: Path, repo: str, clones: Path) -> Path:
    """The clone of ``repo``'s bundle under ``clones`` (made once: later runs reuse it)."""
    clone = clones / slug(repo)
    if not (clone / ".git").is_dir():
        bundle = data / f"{slug(repo)}.bundle"
        if not bundle.is_file():
            raise SystemExit(f"no git bundle of {repo} in {data} ({bundle.name})")
        subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
    return clone


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument(
        "--clones",
        type=Path,
        help="a folder to keep the bundles' clones in and reuse (a temp folder if absent)",
    )
    parser.add_argument("--repo", help="only the weeks of this repository (owner/name)")
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    parser.add_argument("--llm-replay", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    data = args.shared / "data"
    weeks = [(p, json.loads(p.read_text())) for p in sorted((data / "labels").glob("*__*.json"))]
    if args.repo:
        weeks = [(p, w) for p, w in weeks if w["repo"].lower() == args.repo.lower()]
    if not weeks:
        raise SystemExit(f"no labelled weeks in {data / 'labels'}: name the shared folder with --shared")
    with tempfile.TemporaryDirectory(prefix="prdigest-quality-") as name:
        tmp = Path(name)
        clones = args.clones or tmp / "clones"
        clones.mkdir(parents=True, exist_ok=True)
        clone = {w["repo"]: clone_of(data, w["repo"], clones) for _, w in weeks}
        rules = load_settings(env={"PRDIGEST_DB": str(tmp / "unused.db")})
        counter = iter(range(10_000))

        def by_rules(labels: dict) -> Judged:
            db = tmp / f"rules-{next(counter)}.db"
            return judged_report(build(rules, clone[labels["repo"]], labels, args.lang, db))

        report_weeks("", weeks, by_rules, args.verbose)
        if args.llm_replay:
            replay_llm(data, weeks, clone, tmp, args)


def replay_llm(data: Path, weeks: list[tuple[Path, dict]], clone: dict[str, Path], tmp: Path, args) -> None:
    from fakes.openai_api import KEY, FakeOpenAI

    answered = [(p, w) for p, w in weeks if (data / "llm_answers" / p.stem).is_dir()]
    asked: Counter[str] = Counter()
    for prefix, use_files in (("written_", True), ("llm_", False)):

        def judge(labels: dict, use_files: bool = use_files) -> Judged:
            answers = data / "llm_answers" / f"{slug(labels['repo'])}__{labels['since']}"
            if use_files:
                return written(answers, labels)
            with FakeOpenAI(responder=replay_responder(answers, asked)) as fake:
                env = {
                    "PRDIGEST_DB": str(tmp / "unused.db"),
                    "PRDIGEST_LLM_BASE_URL": fake.url,
                    "PRDIGEST_LLM_API_KEY": KEY,
                    "PRDIGEST_LLM_MODEL": "replay",
                }
                settings = load_settings(env=env)
                report = build(
                    settings, clone[labels["repo"]], labels, args.lang, tmp / f"llm-{labels['since']}.db"
                )
                asked["requests"] += fake.calls
                asked["prompt_tokens"] += sum(len(r.text) // 4 for r in fake.requests)
                asked["prs"] += len(report.prs)
                return judged_report(report)

        report_weeks(prefix, answered, judge, args.verbose)
    # What the replayed reports asked: every request, and the follow-ups' share of the prompt tokens.
    print(f"llm_requests={asked['requests']}")
    print(f"llm_requests_over_prs={asked['requests'] - asked['prs']}")
    print(f"llm_prompt_tokens={asked['prompt_tokens']}")
    print(f"followup_requests={asked['followup']}")
    print(f"followup_token_share={asked['followup_tokens'] / max(asked['prompt_tokens'], 1):.2f}")


if __name__ == "__main__":
    main()
