"""Free questions over the cached PRs: full-text candidates, then an LLM answer that cites them.

Candidates come from the FTS5 index (title, body, paths, analysis summary) of one
repository, filtered to a window when one is given. A question the index cannot
search (one in Chinese about English PR text, or one that names no topic: "what
happened last week?") gets the newest PRs instead, when an LLM can read them. The
LLM sees only the candidates, wrapped as untrusted data, and may cite only them.
Without an LLM, or when its answer cites none of them, the answer lists the best
matches.
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from pydantic import BaseModel, Field

from prdigest.analysis.facts import clean_body
from prdigest.analysis.llm import (
    Allowed,
    Call,
    LLMBudgetSpent,
    LLMClient,
    LLMEngine,
    LLMError,
    LLMOutput,
    PRNumbers,
    Section,
    data_line,
    evidence_budget,
    fit,
    inert,
    lead,
    make_call,
    one_line,
    redact,
)
from prdigest.analysis.llm.call import prompt_lang
from prdigest.analysis.pr_text import title_line
from prdigest.config import LLMSettings
from prdigest.i18n import detect_lang, texts
from prdigest.models import PullRequest, Window
from prdigest.prompts import load_prompt
from prdigest.storage import Store, llm_log

CANDIDATES = 12  # PRs the LLM may read and cite
BROWSED = 40  # newest PRs the LLM reads for a question the index cannot search (the budget may trim them)
SEARCH_LIMIT = 200  # full-text hits read before the window filter
SHOWN = 5  # best matches the rules answer lists

_CITATION = re.compile(r"#(\d+)\b")
_WORD = re.compile(r"\w+")
# Words of a question that say nothing about which PR is meant: left out of the full-text query.
# fmt: off
_STOPWORDS = frozenset({
    "a", "an", "and", "any", "are", "at", "be", "by", "can", "did", "do", "does", "for", "from", "has",
    "have", "how", "i", "in", "is", "it", "its", "me", "of", "on", "or", "our", "show", "tell", "that",
    "the", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why",
    "will", "with", "you", "change", "changed", "changes", "pr", "prs", "pull", "request", "requests",
    "merged", "week", "happened", "happen", "happening", "last", "new", "about", "been", "going",
    "anything", "something", "so", "all", "there", "these", "those", "they", "them", "their", "my",
    "your", "us", "please", "latest", "recent", "recently", "today", "yesterday", "month", "day", "days",
    "weeks", "ago", "since", "now", "just", "done", "give", "summarize", "overview", "anyone", "someone",
    "else", "much", "many", "more", "most", "some", "would", "could", "should", "may", "might", "must",
    "not", "no", "yes", "if", "but", "as", "also", "very", "into", "than", "then",
})
# fmt: on


class Answer(BaseModel):
    text: str
    cited: list[int]  # the PRs the answer rests on
    prs: list[int]  # the candidates it was given, best match first
    engine: Literal["llm", "rules"]


class AnswerOut(LLMOutput):
    answer: str
    cited: PRNumbers = Field(default_factory=list)

    def _check(self, allowed: Allowed) -> None:
        # A "#N" outside the candidates cites nothing we showed: it goes, and so do its numbers.
        prs = allowed.prs
        assert prs is not None
        self.answer = _CITATION.sub(lambda m: m[0] if int(m[1]) in prs else "", self.answer)
        self.answer = re.sub(r" {2,}", " ", self.answer).strip()
        if not self.answer:
            raise ValueError("answer is empty")
        named = [int(n) for n in _CITATION.findall(self.answer)]
        self.cited = [n for n in dict.fromkeys([*self.cited, *named]) if n in prs]


def ask(
    store: Store,
    question: str,
    repo: str,
    window: Window | None = None,
    llm: LLMSettings | None = None,
    lang: str = "zh",
    *,
    client: LLMClient | None = None,
) -> Answer:
    """Answer ``question`` from the cached PRs of ``repo`` (merged in ``window``, when given).

    ``client``: a long-lived client of ``llm``'s endpoint, so that its ladder rung is remembered.
    """
    t = texts(lang)
    no_match = Answer(
        text=t["ask_no_match"].format(question=inert(one_line(question, 80))),
        cited=[],
        prs=[],
        engine="rules",
    )
    candidates = find_candidates(store, question, repo, window)
    browsing = not candidates and llm is not None and unsearchable(question)
    if browsing:
        candidates = store.newest_prs(repo, window, BROWSED)
    if not candidates:
        return no_match
    summaries = llm_log.pr_summaries(store, repo, [pr.number for pr in candidates if pr.number])
    note = ""
    if llm is not None:
        call = _call(question, repo, candidates, summaries, llm, lang, browsing)
        try:
            result = LLMEngine(llm, store, client).complete(call, cache=True)
        except LLMBudgetSpent as exc:  # said, so that nobody takes the search's answer for the model's
            result, note = None, t["llm_budget_spent_ask"].format(endpoint=exc.endpoint)
        except LLMError:
            result = None
        if isinstance(result, AnswerOut) and result.cited:
            return Answer(text=result.answer, cited=result.cited, prs=_numbers(candidates), engine="llm")
    # The newest PRs are no match for anything: without the LLM's reading, nothing matched.
    answer = no_match if browsing else _best_matches(question, candidates, summaries, t)
    return answer.model_copy(update={"text": f"{note}\n{answer.text}"}) if note else answer


def search_terms(question: str) -> list[str]:
    """The words of a question that can find a PR: no question words, each once; [] names no topic."""
    words = [w for w in _WORD.findall(question.lower()) if len(w) > 1 and w not in _STOPWORDS]
    return list(dict.fromkeys(words))


def unsearchable(question: str) -> bool:
    """A question the full-text index cannot answer: it names no topic, or is in Chinese (PR text
    mostly is not)."""
    return not search_terms(question) or detect_lang(question) == "zh"


def find_candidates(store: Store, question: str, repo: str, window: Window | None) -> list[PullRequest]:
    """The best full-text matches among the PRs (not direct pushes) of ``repo``, in ``window`` when given."""
    hits = store.search_prs(search_terms(question), repo=repo, limit=SEARCH_LIMIT if window else CANDIDATES)
    hits = [pr for pr in hits if pr.number is not None and (window is None or window.contains(pr.merged_at))]
    return hits[:CANDIDATES]


def _call(
    question: str,
    repo: str,
    candidates: list[PullRequest],
    summaries: dict[int, str],
    llm: LLMSettings,
    lang: str,
    browsing: bool,
) -> Call:
    prompt = load_prompt("ask", prompt_lang(lang))
    variables = {"repo": repo, "question": data_line(one_line(question, 500))}
    budget = evidence_budget(prompt, llm.input_budget_tokens, **variables)
    heading = "The newest pull requests, newest first" if browsing else "Candidates, best match first"
    section = Section(heading, [_candidate_line(pr, summaries) for pr in candidates], 1)
    return make_call(
        prompt,
        purpose="ask",
        subject=f"{repo}: {redact(one_line(question, 80))}",  # the log keeps no secret a user pasted
        version=f"ask-{prompt.version}",
        schema=AnswerOut,
        allowed=Allowed(
            links=frozenset(pr.url for pr in candidates if pr.url), prs=frozenset(_numbers(candidates))
        ),
        evidence=fit([], [section], budget),
        **variables,
    )


def _candidate_line(pr: PullRequest, summaries: dict[int, str]) -> str:
    """One candidate on one line, so that the budget drops whole candidates, the weakest first."""
    parts = [f"#{pr.number} merged {pr.merged_at:%Y-%m-%d} by {pr.author}: {one_line(pr.title, 200)}"]
    summary = summaries.get(pr.number or 0)
    if summary and summary != pr.title:
        parts.append(f"summary: {summary}")
    if pr.files:
        directories = dict.fromkeys(posixpath.dirname(f.path) or "." for f in pr.files)
        parts.append("directories: " + ", ".join(list(directories)[:4]))
    body = lead(clean_body(pr.body))
    if body:
        parts.append(body)
    return data_line(" — ".join(parts))


def _best_matches(
    question: str, candidates: list[PullRequest], summaries: dict[int, str], t: dict[str, str]
) -> Answer:
    shown = candidates[:SHOWN]
    # PR text and the question echoed: inert, like everything a chat shows.
    lines = [t["ask_matches"].format(question=inert(one_line(question, 80)))]
    lines += [
        t["ask_line"].format(
            number=pr.number,
            summary=inert(summaries.get(pr.number or 0) or title_line(pr)),
            author=pr.author,
            merged=pr.merged_at,
        )
        for pr in shown
    ]
    return Answer(text="\n".join(lines), cited=_numbers(shown), prs=_numbers(candidates), engine="rules")


def _numbers(prs: list[PullRequest]) -> list[int]:
    return [pr.number for pr in prs if pr.number is not None]
