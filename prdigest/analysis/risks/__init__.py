"""Risk labels: the rules that find them in a PR, their evidence, the week's risk level."""
