"""The container's health check: GET /healthz on the port the settings give the web app.

    python -m prdigest.bot.healthcheck

exits 0 when the web app answers 200 within three seconds, 1 otherwise. It reads the same settings as
`prdigest serve` (PRDIGEST_CONFIG, PRDIGEST_WEB_PORT, ...), so a port changed there is the port checked.
"""

from __future__ import annotations

import sys
import urllib.request

from prdigest.config import load_settings
from prdigest.errors import PrdigestError


def healthz_url() -> str:
    web = load_settings().web
    host = "127.0.0.1" if web.host in ("0.0.0.0", "", "::") else web.host  # listening everywhere: ask here
    return f"http://{host}:{web.port}/healthz"


def main() -> int:
    try:
        with urllib.request.urlopen(healthz_url(), timeout=3) as answer:
            return 0 if answer.status == 200 else 1
    except (OSError, PrdigestError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
