"""What every job of the pipeline is told: the crawl's config and its layer.

The driver writes the checked config as JSON into the crawl directory and
passes it with `--crawl-config`, a file option, so that mrjob ships the file
to the tasks on every runner (a local path means nothing on a Hadoop node).
This mixin only calls methods of the MRJob it is mixed into, so it needs
no import of mrjob itself.
"""
from __future__ import annotations

from functools import cached_property

from mrcrawl.config import CrawlConfig


class CrawlJobOptions:
    """Mix into an MRJob (before MRJob) to get `self.config` and `self.layer`."""

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--crawl-config", help="the crawl's config, as JSON (written by the driver)")
        self.add_passthru_arg("--layer", type=int, default=0, help="the layer this job works on")

    @cached_property
    def config(self) -> CrawlConfig:
        with open(self.options.crawl_config, encoding="utf-8") as config_file:
            return CrawlConfig.from_json(config_file.read())

    @property
    def layer(self) -> int:
        return self.options.layer
