"""Errors of the offline sandbox, shaped like the Messages API's error responses."""
from __future__ import annotations

from ctxlab.errors import CtxlabError


class ApiError(CtxlabError):
    """An error response: HTTP status, error type and message.

    Serialized as ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``,
    which the SDK turns into ``anthropic.BadRequestError`` (400), ``NotFoundError`` (404) ...
    """

    def __init__(self, status: int, error_type: str, message: str):
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message

    def body(self, request_id: str) -> dict:
        return {
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        }


def invalid(message: str) -> ApiError:
    """400 invalid_request_error."""
    return ApiError(400, "invalid_request_error", message)


def not_found(message: str) -> ApiError:
    """404 not_found_error."""
    return ApiError(404, "not_found_error", message)
