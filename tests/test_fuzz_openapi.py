"""schemathesis against /openapi.json (issue 20): every documented operation, bounded examples,
through the whole ASGI stack (host check, body guard, security headers): no server error, and
every response carries the security headers."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from app.limits import Limits  # noqa: E402
from app.main import create_app  # noqa: E402

app = create_app(Limits(max_checks=1, check_max_states=500, link_misses_per_minute=1_000_000))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_operation_answers_a_server_error(case):
    response = case.call()
    assert response.status_code < 500, (case.method, case.path, response.status_code,
                                        response.text[:300])
    assert response.headers.get("x-content-type-options") == ["nosniff"]
    assert "content-security-policy" in response.headers
