# prdigest as a long-running bot: `docker run -v prdigest:/data -e PRDIGEST_LARK_APP_ID=... prdigest`
FROM python:3.11-slim

RUN apt-get update && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, from the lock file, in a layer of their own: a change to the code reinstalls none.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md LICENSE ./
COPY prdigest ./prdigest
RUN pip install --no-cache-dir --no-deps .

# The cache lives on a volume (put prdigest.toml there too and set PRDIGEST_CONFIG=/data/prdigest.toml);
# secrets come from the environment. The web app listens on every interface of the container.
ENV PRDIGEST_DB=/data/prdigest.db \
    PRDIGEST_WEB_HOST=0.0.0.0 \
    PRDIGEST_WEB_PORT=8080
# The data folder belongs to the user before it becomes a volume (changes under a volume are dropped).
RUN useradd --create-home prdigest && mkdir -p /data && chown prdigest /data
VOLUME ["/data"]
USER prdigest
EXPOSE 8080
# The check asks the port the settings give the web app (PRDIGEST_WEB_PORT, or the config file's).
HEALTHCHECK --start-period=30s --interval=30s --timeout=5s CMD ["python", "-m", "prdigest.bot.healthcheck"]
# serve stops cleanly on SIGTERM (docker stop): running deliveries finish first.
STOPSIGNAL SIGTERM
CMD ["prdigest", "serve"]
