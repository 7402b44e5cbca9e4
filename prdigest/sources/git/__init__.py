"""The git source: merged PRs read from the first-parent history of a local clone."""
