"""A crawl directory on HDFS, S3 or any URI mrjob's filesystems reach.

The layout and the rules are those of crawl_store.py; only the file operations
differ.  They go through mrjob's filesystems (the `hadoop` binary for
hdfs://, boto3 for s3://, plain files for file:///), which is why this one
store module imports mrjob.  The driver uses it, and so does a crawl db job
run as a Spark step, to copy a partition file to its executor
(mr/job.py); other tasks never load it.
"""
from __future__ import annotations

import os
import posixpath
import tempfile

from mrjob.fs.composite import CompositeFilesystem
from mrjob.fs.hadoop import HadoopFilesystem
from mrjob.fs.local import LocalFilesystem
from mrjob.fs.s3 import S3Filesystem
from mrjob.parse import is_uri

from mrcrawl.store.crawl_store import CrawlStore


def is_cluster_path(path: str) -> bool:
    return is_uri(str(path))


def mrjob_filesystem() -> CompositeFilesystem:
    # The first filesystem that can handle a path serves it: file:/// must
    # reach the local one before Hadoop's, which would claim any URI.
    fs = CompositeFilesystem()
    fs.add_fs("local", LocalFilesystem())
    fs.add_fs("s3", S3Filesystem())
    fs.add_fs("hadoop", HadoopFilesystem())
    return fs


class ClusterCrawlStore(CrawlStore):
    """A crawl directory named by a URI; paths are strings."""

    def __init__(self, root: str, fs=None):
        self.fs = fs or mrjob_filesystem()
        super().__init__(root)

    @staticmethod
    def root_path(root: str) -> str:
        return str(root).rstrip("/")  # a pathlib.Path would fold hdfs:// into hdfs:/

    def join(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def parts(self, directory) -> list[str]:
        if not self.fs.exists(directory):
            return []
        return sorted(path for path in self.fs.ls(directory) if posixpath.basename(path).startswith("part-"))

    def has_records(self, directory) -> bool:
        return any(self.fs.du(part) > 0 for part in self.parts(directory))

    def holds_crawl(self) -> bool:
        return self.fs.exists(self.state_path)

    def make_root(self) -> None:
        self.fs.mkdir(self.root)

    def entries(self) -> set[str] | None:
        # mrjob's ls lists files recursively: keep each one's first name below the root.
        if not self.fs.exists(self.root):
            return None
        return {posixpath.relpath(path, self.root).split("/", 1)[0] for path in self.fs.ls(self.root)}

    def links(self) -> list:
        return []  # HDFS and S3 have no symbolic links

    def read_text(self, path) -> str:
        return b"".join(self.fs.cat(path)).decode("utf-8")

    def write_text(self, path, text: str, private: bool = False) -> None:
        # No rename on these filesystems: replace the file in two moves.
        # (Who may read a private file there is the cluster's permissions' say.)
        # Only the driver writes these small files, one at a time.
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".mrcrawl", delete=False) as local:
            local.write(text)
        try:
            if self.fs.exists(path):
                self.fs.rm(path)
            self.fs.mkdir(posixpath.dirname(path))
            self.fs.put(local.name, path)
        finally:
            os.unlink(local.name)

    def begin_output(self, step: str, final) -> str:
        # A job writes straight into its store; what an interrupted run left
        # there goes first.  crawl.json marks the store complete afterwards.
        self.remove(final)
        return final

    def remove(self, directory) -> None:
        if self.fs.exists(directory):
            self.fs.rm(directory)

    def commit(self, written, final) -> None:
        pass  # written is final already
