"""What tokens cost, from genai-prices (an optional dependency: ``pip install promptvcr[report]``).

genai-prices is Pydantic's list of published model prices, kept up to date by its
maintainers; promptvcr keeps no price list of its own. It is only imported when a report is
written (it takes half a second), and never fetches anything: its bundled snapshot is used.
Without it, or for a model it does not know, the report shows tokens and no price.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["Prices"]

#: The provider a report names (:func:`promptvcr.cassettes.providers.provider_label`) -> genai-prices'
#: id, where they differ.
_PROVIDER_IDS = {"bedrock": "aws", "openai-compatible": "openai"}


class Prices:
    """Prices of tokens by provider and model; :attr:`available` says whether any can be known."""

    def __init__(self) -> None:
        try:
            import genai_prices
        except ImportError:
            self._module: Any = None
        else:
            self._module = genai_prices

    @property
    def available(self) -> bool:
        return self._module is not None

    def price(self, provider: str, model: str, tokens_in: int, tokens_out: int) -> float | None:
        """The list price in US dollars of those tokens, ``None`` when the model's price is unknown."""
        if self._module is None or not model or not (tokens_in or tokens_out):
            return None
        rates = self._rates(provider, model)
        if rates is None:
            return None
        per_in, per_out = rates
        return (tokens_in * per_in + tokens_out * per_out) / 1_000_000

    @functools.lru_cache(maxsize=256)  # noqa: B019  (one Prices per report: the cache dies with it)
    def _rates(self, provider: str, model: str) -> tuple[float, float] | None:
        """Dollars per million input and output tokens, priced once per model on a million of each."""
        module = self._module
        usage = module.Usage(input_tokens=1_000_000, output_tokens=1_000_000)
        for provider_id in (_PROVIDER_IDS.get(provider, provider), None):
            try:
                found = module.calc_price(usage, model, provider_id=provider_id, genai_request_timestamp=None)
            except (LookupError, ValueError):
                continue
            return float(found.input_price), float(found.output_price)
        return None

    def cached(self, provider: str, model: str, read: int, written: int) -> float | None:
        """The list price in US dollars of prompt tokens read from the cache and written to it
        (each at its own rate), ``None`` when the model's price is unknown."""
        if self._module is None or not model or not (read or written):
            return None
        usage = self._module.Usage(
            input_tokens=read + written, cache_read_tokens=read, cache_write_tokens=written
        )
        for provider_id in (_PROVIDER_IDS.get(provider, provider), None):
            try:
                found = self._module.calc_price(
                    usage, model, provider_id=provider_id, genai_request_timestamp=None
                )
            except (LookupError, ValueError):
                continue
            return float(found.input_price)
        return None
