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
CMD ["gunicorn", "demo_project.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
