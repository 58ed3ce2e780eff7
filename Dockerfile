# Image for the demo project (web and Celery worker). Production: set every variable in
# docker-compose.yml's x-app-env from your secret store.
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt pyproject.toml README.md ./
COPY ttmemory ./ttmemory
RUN pip install --no-cache-dir -r requirements.txt gunicorn==27.0.1 && pip install --no-cache-dir --no-deps .
COPY manage.py ./
COPY demo_project ./demo_project
RUN useradd --create-home app
USER app
EXPOSE 8000
# demo_project/gunicorn.conf.py: 3 workers on :8000, and the hook that keeps /metrics (summed
# over the workers through PROMETHEUS_MULTIPROC_DIR) right when a worker exits.
CMD ["gunicorn", "-c", "demo_project/gunicorn.conf.py"]
