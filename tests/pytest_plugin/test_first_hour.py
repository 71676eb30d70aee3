"""A newcomer's first hour: httpx installed without respx does not break every test."""

from __future__ import annotations

import pytest
from plugin_suites import make_suite, run


def test_httpx_without_respx_fails_only_httpx_requests_with_one_clear_message(
    pytester: pytest.Pytester,
) -> None:
    make_suite(
        pytester,
        conftest="""
        import importlib.util

        _real = importlib.util.find_spec

        def _without_respx(name, package=None):  # this environment has httpx but not respx
            return None if name == "respx" else _real(name, package)

        importlib.util.find_spec = _without_respx


        def pytest_unconfigure(config):  # an in-process run: give the outer session its import system back
            importlib.util.find_spec = _real
        """,
        test_app="""
        import httpx
        import pytest
        import promptvcr
        from promptvcr.interceptors import RespxMissing
        from llm import ask

        @pytest.mark.promptvcr
        def test_a_cassette_without_httpx_traffic_works(cassette):
            assert cassette.played == []

        def test_an_httpx_request_is_refused_not_sent(tmp_path):
            with promptvcr.use_cassette(tmp_path / "x.yaml"):
                with pytest.raises(RespxMissing, match=r"pip install 'promptvcr\\[httpx\\]'"):
                    httpx.get("https://api.example.com/v1/models")
            assert httpx.HTTPTransport.handle_request.__name__ == "handle_request"  # restored
        """,
    )
    run(pytester).assert_outcomes(passed=2)
