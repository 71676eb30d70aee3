"""Conformance: replay real recorded provider traffic through the real provider SDKs.

Run from the repository root as ``PYTHONPATH=tests python -m conformance DIR`` (it lives
beside the tests that use it, not in the installed package). It imports every vcrpy
cassette under ``DIR`` and, for each interaction a provider SDK makes (httpx/httpx2, boto3
on botocore's urllib3, voyageai on requests), checks that the SDK's result through
promptvcr equals its result on the recorded bytes (see :mod:`.runner`).
"""

from .runner import Outcome, run_cassette, run_corpus
from .table import failure_lines, provider_table

__all__ = ["Outcome", "failure_lines", "provider_table", "run_cassette", "run_corpus"]
