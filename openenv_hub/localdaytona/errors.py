"""The one error type of the local Daytona's handlers, and its JSON answer.

Daytona answers a failure with a JSON envelope whose ``message`` the SDK shows and whose status
it maps to an exception (404: ``DaytonaNotFoundError``, 401: ``DaytonaAuthenticationError``...);
every failure here is an :class:`ApiError` rendered that way.

Layer: runtimes.
"""

from __future__ import annotations

from http import HTTPStatus

from starlette.responses import JSONResponse

__all__ = ["ApiError", "error_response"]


class ApiError(Exception):
    """A failure the caller sees: an HTTP status and a message saying what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    @classmethod
    def unauthorized(cls, message: str) -> ApiError:
        return cls(401, message)

    @classmethod
    def not_found(cls, what: str) -> ApiError:
        return cls(404, f"{what} not found")


def error_response(error: ApiError) -> JSONResponse:
    """``error`` as the service answers it: ``{"statusCode", "message", "code", "error"}``."""
    phrase = HTTPStatus(error.status).phrase
    body = {
        "statusCode": error.status,
        "message": error.message,
        "code": phrase.upper().replace(" ", "_"),
        "error": phrase,
    }
    return JSONResponse(body, status_code=error.status)
