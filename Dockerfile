# prdigest as a long-running bot: `docker run -v prdigest:/data -e PRDIGEST_LARK_APP_ID=... prdigest`
FROM python:3.11-slim

RUN apt-get update && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY prdigest ./prdigest
RUN pip install --no-cache-dir .

# The cache lives on a volume (put prdigest.toml there too and set PRDIGEST_CONFIG=/data/prdigest.toml);
# secrets come from the environment. The web app listens on every interface of the container.
ENV PRDIGEST_DB=/data/prdigest.db \
    PRDIGEST_WEB_HOST=0.0.0.0
# The data folder belongs to the user before it becomes a volume (changes under a volume are dropped).
RUN useradd --create-home prdigest && mkdir -p /data && chown prdigest /data
VOLUME ["/data"]
USER prdigest
EXPOSE 8080
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=3)"
# serve stops cleanly on SIGTERM (docker stop): running deliveries finish first.
STOPSIGNAL SIGTERM
CMD ["prdigest", "serve"]
