"""Where merged PRs come from: a local git clone, a JSON fixture, or GitHub."""
