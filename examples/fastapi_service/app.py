"""`uvicorn examples.fastapi_service.app:app`: the service with default settings."""

from examples.fastapi_service.service import create_app

app = create_app()
