"""ttstore's Python client: ``ttstore.Client(url, api_key=...)``."""

from .client import OPERATIONS, METHOD_OF, Client, Job, Served, from_npy, to_npy
from .errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    QuotaError,
    RateLimitError,
    ServerError,
    TimeoutError,
    TtstoreError,
    UnavailableError,
)
from .retry import RetryPolicy

__all__ = [
    "Client", "Job", "Served", "RetryPolicy", "OPERATIONS", "METHOD_OF", "to_npy", "from_npy",
    "TtstoreError", "ApiError", "BadRequestError", "AuthenticationError", "QuotaError", "ForbiddenError",
    "NotFoundError", "ConflictError", "RateLimitError", "ServerError", "UnavailableError", "TimeoutError",
]
__version__ = "0.1.0"
