"""The week's stories: PRs grouped by what ties them, and the words that tell them."""
