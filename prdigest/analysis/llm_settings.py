"""The LLM endpoint's settings: the `[llm]` table of prdigest.toml, then env vars.

The LLM is on only when a model is named. Its key is a secret: it comes from
the environment (PRDIGEST_LLM_API_KEY, else OPENAI_API_KEY), never from a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from prdigest.errors import ConfigError

# Setting -> env vars that set it, first one set wins. The generic OPENAI_* names come after
# the file's value (see llm_settings_from_env): a shell's OPENAI_BASE_URL must not override
# an endpoint chosen in prdigest.toml.
ENV_FIRST: dict[str, str] = {
    "base_url": "PRDIGEST_LLM_BASE_URL",
    "model": "PRDIGEST_LLM_MODEL",
    "api_key": "PRDIGEST_LLM_API_KEY",
}
ENV_LAST: dict[str, str] = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY"}


class LLMSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1)
    # None: the SDK's default endpoint (api.openai.com).
    base_url: str | None = None
    # None: a placeholder is sent; vLLM, SGLang and Ollama accept any key.
    api_key: SecretStr | None = None
    # Seconds per attempt; a stuck call costs at most (max_retries + 1) * timeout.
    timeout: float = Field(default=60, gt=0, le=600)
    concurrency: int = Field(default=8, ge=1, le=64)
    input_budget_tokens: int = Field(default=6000, ge=1000, le=200_000)
    max_retries: int = Field(default=2, ge=0, le=5)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/") if value else None


def llm_settings_from_env(env: Mapping[str, str], table: Mapping[str, Any] | None) -> LLMSettings | None:
    """The settings from the `[llm]` table and the environment; None when no model is named."""
    data = dict(table or {})
    if "api_key" in data:
        raise ConfigError(
            f"llm.api_key is a secret; set it with {ENV_FIRST['api_key']} instead of the config file"
        )
    for key, name in ENV_FIRST.items():
        if env.get(name):
            data[key] = env[name]
    for key, name in ENV_LAST.items():
        if not data.get(key) and env.get(name):
            data[key] = env[name]
    if not data.get("model"):
        return None
    try:
        return LLMSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            "; ".join(
                f"llm.{'.'.join(str(p) for p in err['loc'])}: "
                + (
                    "unknown key"
                    if err["type"] == "extra_forbidden"
                    else err["msg"].removeprefix("Value error, ")
                )
                for err in exc.errors()
            )
        ) from None
