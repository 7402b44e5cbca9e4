"""The Slack adapter: Bolt's events (HTTP or Socket Mode), the Web API client."""
