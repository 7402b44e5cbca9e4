"""Chat-understanding benchmark: how `prdigest parse` reads messages as people type them.

    python bench/chat_understanding.py [--shared ../shared] [-v]

Runs every line of ``data/chat_utterances.jsonl`` and of this project's own
``bench/data/chat_utterances_more.jsonl`` (text, today, timezone and the expected
command, dates, n, pr and language) through the `prdigest parse` command (in process, with
the line's --today and --tz) and prints, one `name=value` a line:
`intent_accuracy` (lines whose every expected field matches), `period_accuracy` (the lines
that expect a period: since and until match), `lang_accuracy`, and `lines`. Goal: 1.0 for all
three, without an LLM. ``-v`` lists every line that misses, with what was read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prdigest.cli.commands import cli  # noqa: E402


def parse(runner: CliRunner, line: dict[str, str]) -> dict[str, object]:
    result = runner.invoke(cli, ["parse", line["text"], "--today", line["today"], "--tz", line["tz"]])
    if result.exit_code != 0:
        return {"error": (result.output or str(result.exception)).strip()}
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the lines read wrong")
    opts = parser.parse_args()
    path = opts.shared / "data" / "chat_utterances.jsonl"
    if not path.is_file():
        sys.exit(f"no utterances at {path}: pass --shared PATH (the directory holding data/)")
    more = ROOT / "bench" / "data" / "chat_utterances_more.jsonl"
    raw_lines = path.read_text(encoding="utf-8").splitlines() + more.read_text(encoding="utf-8").splitlines()
    lines = [json.loads(raw) for raw in raw_lines if raw.strip()]
    runner = CliRunner()
    intents = periods = period_lines = langs = 0
    for line in lines:
        expect, got = line["expect"], parse(runner, line)
        wrong = {k: (v, got.get(k)) for k, v in expect.items() if got.get(k) != v}
        intents += not wrong
        langs += got.get("lang") == expect.get("lang")
        if "since" in expect or "until" in expect:
            period_lines += 1
            periods += "since" not in wrong and "until" not in wrong
        if wrong and opts.verbose:
            print(f"# {line['text']!r} (today {line['today']}): {wrong}", file=sys.stderr)
    print(f"lines={len(lines)}")
    print(f"intent_accuracy={intents / len(lines):.3f}")
    print(f"period_accuracy={periods / max(period_lines, 1):.3f}")
    print(f"lang_accuracy={langs / len(lines):.3f}")


if __name__ == "__main__":
    main()
