# Foldwise service image. Build: docker build -t foldwise .
# Run with keys:   docker run -p 8000:8000 -e FOLDWISE_API_KEYS=tenant-a:secret foldwise
# Run open (demo): docker run -p 8000:8000 -e FOLDWISE_ALLOW_OPEN=true foldwise
# (serve refuses to listen on 0.0.0.0 without keys unless FOLDWISE_ALLOW_OPEN=true.)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/foldwise

# Dependencies first (cached layer): the service's own, every one pinned by hash (the same
# versions and hashes as requirements.lock, which adds the test and client tooling).
COPY requirements-serve.lock ./
RUN pip install --require-hashes --no-deps -r requirements-serve.lock

COPY pyproject.toml README.md alembic.ini ./
COPY alembic ./alembic
COPY app ./app
RUN pip install --no-deps --no-build-isolation . \
    && useradd --create-home --uid 10001 foldwise \
    && mkdir -p /data && chown foldwise /data

USER foldwise
# Embedded default: SQLite on a volume; point FOLDWISE_DATABASE_URL at PostgreSQL to scale out.
ENV FOLDWISE_DATABASE_URL=sqlite:////data/foldwise.db
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"

CMD ["foldwise", "serve", "--host", "0.0.0.0", "--port", "8000"]
