"""Typed exceptions: every error reply of the service is a problem+json whose ``code`` is stable."""

from __future__ import annotations

from typing import Any, Dict, Optional


class TtstoreError(Exception):
    """Any failure of the client."""


class ApiError(TtstoreError):
    """An error reply of the service (RFC 9457 problem)."""

    def __init__(self, problem: Dict[str, Any], status: int, retry_after_s: Optional[float] = None):
        self.problem = problem
        # The HTTP status, not the body's: a problem's extra fields may reuse the name (job_finished does).
        self.status = status
        self.code: str = str(problem.get("code", ""))
        self.detail: str = str(problem.get("detail", ""))
        self.retry_after_s = retry_after_s
        super().__init__(f"{self.status} {self.code}: {self.detail}")


class BadRequestError(ApiError):
    pass


class AuthenticationError(ApiError):
    pass


class QuotaError(ApiError):
    pass


class ForbiddenError(ApiError):
    pass


class NotFoundError(ApiError):
    pass


class ConflictError(ApiError):
    pass


class RateLimitError(ApiError):
    pass


class ServerError(ApiError):
    pass


class UnavailableError(ServerError):
    pass


class TimeoutError(TtstoreError):  # noqa: A001 - the client's own, raised for a request past its timeout
    pass


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    402: QuotaError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: BadRequestError,
    415: BadRequestError,
    431: BadRequestError,
    429: RateLimitError,
    503: UnavailableError,
}


def api_error(problem: Dict[str, Any], status: int, retry_after_s: Optional[float] = None) -> ApiError:
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(problem, status, retry_after_s)
