"""Moved: the LLM settings live in `prdigest.config` with the others (config imports nothing from analysis).

Kept only for `analysis/ask.py`'s import line; import from `prdigest.config` instead.
"""

from prdigest.config import LLM_ENV_FIRST as ENV_FIRST
from prdigest.config import LLM_ENV_LAST as ENV_LAST
from prdigest.config import LLMSettings, llm_settings_from_env

__all__ = ["ENV_FIRST", "ENV_LAST", "LLMSettings", "llm_settings_from_env"]
