"""A streamed answer, read until its JSON object closes.

A server on this machine or the team's network spends its own time on every token, one request after
another: a weak model that writes on after its JSON object, or never closes it, holds the server until
``max_tokens``, and the requests behind it time out waiting. A non-streamed request runs to its end
even when the client has given up on it. A streamed one can be ended: reading stops once the answer's
first JSON object closes, or at the request's deadline, and closing the stream tells the server to
stop (llama.cpp's and llama-cpp-python's servers, vLLM and Ollama stop generating when the client
leaves a streamed request).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

# White space read after the object closes before the stream is ended: a grammar-bound model may
# write newlines until max_tokens.
TRAILING_SPACE = 64


class JsonEnd:
    """Where the first JSON object of a text that arrives in pieces closes, and the object's first key.
    Linear in the text: each character is looked at once, whatever the pieces."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.first_key: str | None = None
        self._key: list[str] | None = None  # the first key's characters while it is read

    def feed(self, piece: str) -> int | None:
        """The length of ``piece`` up to and with the brace that closes the object; None before it."""
        for i, char in enumerate(piece):
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                    if self._key is not None:
                        self.first_key, self._key = "".join(self._key), None
                        continue
                if self._key is not None:
                    self._key.append(char)
            elif char == "{":
                self.depth += 1
            elif self.depth == 0:
                continue  # prose before the object: its quotes and braces are not the object's
            elif char == '"':
                self.in_string = True
                if self.depth == 1 and self.first_key is None:
                    self._key = []
            elif char == "}":
                self.depth -= 1
                if self.depth == 0:
                    return i + 1
        return None


def joined(pieces: Iterable[str], stop_at_json: bool, limit: int, keys: frozenset[str] = frozenset()) -> str:
    """The pieces of a streamed answer joined; with ``stop_at_json`` only up to the close of its first
    JSON object (the answer of a JSON rung is that object). Reading goes on past it while only a little
    white space follows, so that a model that has finished lets the server's last chunks (the usage)
    arrive; at anything else, once the answer is longer than ``limit`` characters, or once the object's
    first key is none of ``keys`` (when given: a model that begins off the schema does not come back to
    it, and writes on to max_tokens; the answer is invalid either way) the caller closes the stream,
    which ends the request on the server."""
    parts: list[str] = []
    size = 0
    end = JsonEnd() if stop_at_json else None
    after: int | None = None  # characters of white space read since the object closed
    for piece in pieces:
        if after is not None:
            after += len(piece)
            if piece.strip() or after > TRAILING_SPACE:
                break
            continue
        cut = end.feed(piece) if end is not None else None
        parts.append(piece if cut is None else piece[:cut])
        size += len(parts[-1])
        if cut is not None:
            after = len(piece) - cut
            if piece[cut:].strip():
                break
        elif size > limit or (keys and end is not None and end.first_key not in (None, *keys)):
            break
    return "".join(parts)


class Chunks:
    """The text of a stream of chat.completion.chunk objects (plain dicts, as parsed), piece by piece;
    on the way, its usage chunk and whether a choice finished. ``ended``: every chunk was read. A chunk
    not of that shape holds no text."""

    def __init__(self, chunks: Iterable[object]):
        self._chunks = chunks
        self.usage: object = None
        self.finished = False
        self.ended = False

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            if not isinstance(chunk, dict):
                continue
            self.usage = chunk.get("usage") or self.usage
            for choice in _dicts(chunk.get("choices")):
                self.finished = self.finished or bool(choice.get("finish_reason"))
                delta = choice.get("delta")
                content = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(content, str):
                    yield content
        self.ended = True

    def tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens of the usage chunk; (0, 0) when none of its shape came."""
        usage = self.usage if isinstance(self.usage, dict) else {}
        sent, got = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if isinstance(sent, int) and isinstance(got, int) and min(sent, got) >= 0:
            return sent, got
        return 0, 0


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
