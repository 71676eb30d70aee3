"""Bringing cassettes of other tools into promptvcr (today: vcrpy and its serializers)."""

from .vcr import FileReport, ImportReport, convert_vcr_file, import_vcr
from .vcr_read import VcrReadError

__all__ = ["FileReport", "ImportReport", "VcrReadError", "convert_vcr_file", "import_vcr"]
