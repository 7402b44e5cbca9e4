"""Per-PR analysis (rules or LLM) and the report built from it."""
