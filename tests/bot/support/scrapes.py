"""Read a ``/metrics`` endpoint as Prometheus would: one sample's value by name and labels."""

from collections.abc import Mapping

import httpx
from prometheus_client.parser import text_string_to_metric_families


class Scrape:
    """One scrape of ``url`` (a ``/metrics`` endpoint), parsed."""

    def __init__(self, url: str) -> None:
        answer = httpx.get(url, timeout=10)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain")
        self.families = list(text_string_to_metric_families(answer.text))

    def value(self, sample: str, labels: Mapping[str, str] | None = None) -> float:
        """The sum of the samples named ``sample`` whose labels include ``labels`` (0 when none is there)."""
        wanted = dict(labels or {})
        return sum(
            found.value
            for family in self.families
            for found in family.samples
            if found.name == sample and wanted.items() <= found.labels.items()
        )

    def sample_names(self) -> set[str]:
        """Every sample name the endpoint can export (a family with no sample yet counts with its suffixes)."""
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
        names = {found.name for family in self.families for found in family.samples}
        for family in self.families:
            names.update(family.name + suffix for suffix in suffixes.get(family.type, ("",)))
        return names
