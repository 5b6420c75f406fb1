"""What the driver would submit to Hadoop streaming, EMR and Spark, read from mrjob's runners.

There is no cluster here, so nothing is run.  Each test builds the driver's
own crawl for an hdfs:// or s3:// store, lets it lay out one layer and the
final merge exactly as a real run would, turns every step into the job
command line the driver would use, builds the real mrjob runner from it, and
asks the runner for the arguments it would hand to `hadoop jar`, to EMR's
AddJobFlowSteps and RunJobFlow, or to spark-submit.  A crawl whose config
caps its layers (max_urls_per_host, max_urls_per_layer) has three jobs
more, which are laid out the same way.

The runners are asked through methods of mrjob 0.7.4 that are not public
API (`_args_for_streaming_step`, `_build_step`, `_cluster_kwargs`,
`_args_for_spark_step`).  mrjob is pinned to exactly that release, which is
its last, so they cannot change under these tests; the first test below
fails if the pin moves.

Nothing may reach a cluster or AWS:
- `hadoop_bin` and `spark_submit_bin` name files that do not exist, so any
  attempt to run Hadoop or Spark raises FileNotFoundError and fails the test;
- the EMR, S3, EC2 and IAM endpoints point at a closed loopback port;
- runners are cleaned up with mode LOCAL_TMP only, because the default
  cleanup would remove the job's temp directory on HDFS or S3.
Two facts a cluster would report are stated instead (see `CLUSTER_HADOOP`):
mrjob needs the Hadoop version to name jobconf properties, and asks
`hadoop version` (hadoop runner) or DescribeCluster (emr runner) for it.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import mrjob
import pytest
import yaml
from packaging.specifiers import SpecifierSet
from mrjob.conf import load_opts_from_mrjob_conf
from mrjob.emr import EMRJobRunner
from mrjob.hadoop import HadoopJobRunner
from mrjob.job import MRJob
from mrjob.local import LocalMRJobRunner
from mrjob.spark.runner import SparkMRJobRunner

from jobs.crawler import MRCrawler
from jobs.db_batch import MRDbBatch
from jobs.db_update import MRDbUpdate
from jobs.dedup import MRDedup
from jobs.generator import MRGenerator
from jobs.host_cap import MRHostCap
from jobs.html_to_xml import MRHtmlToXml
from jobs.layer_cap import MRLayerCap
from jobs.layer_histogram import MRLayerHistogram
from jobs.merge import MRMerge
from jobs.optimizer import MROptimizer
from jobs.parser import MRParser
from jobs.placement import MRPlacement
from mrcrawl.config import load_config
from mrcrawl.crawl_dir import db_root
from mrcrawl.frontier.caps import FrontierCaps
from mrcrawl.frontier.crawldb import DB_FORMAT, CrawlDb
from mrcrawl.frontier.placement import DEFAULT_SLOTS, Placement
from mrcrawl.mr import launcher
from mrcrawl.mr.launcher import Launcher, RunnerSettings
from mrcrawl.pipeline import Pipeline
from mrcrawl.plan import INTO_DB, layer_steps, run_end, run_start
from mrcrawl.store.cluster_store import ClusterCrawlStore
from mrcrawl.store.crawl_state import CrawlState

REPO = Path(__file__).resolve().parents[1]
CONF_DIR = REPO / "jobs" / "conf"
CONF_RUNNERS = {
    "local.conf": LocalMRJobRunner,
    "hadoop.conf": HadoopJobRunner,
    "spark-yarn.conf": SparkMRJobRunner,
    "spark-k8s.conf": SparkMRJobRunner,
    "emr.conf": EMRJobRunner,
}

LAYER = 2  # a middle layer: the optimizer then reads three layers of stores
REDUCERS = 4
# The reduce tasks the stated placement of each layer planned: not --reducers,
# as a run resumed with another --reducers finds them, so that what the
# Crawler is given shows which one it follows.
PLANNED_TASKS = 5
STARTED_AT = "2026_01_02_03_04_05"
RUN = "2026-01-02T03:04:05.000Z"
CLOCK_OFFSET = 86_400.5  # the run's clock, a day ahead of the wall clock (--now)
DB_PARTITIONS = 16
HDFS_ROOT = "hdfs://namenode/crawl/zh"
S3_ROOT = "s3://bucket/crawl/zh"
JOBS_WITH_REDUCER = {"place", "crawl", "dbbatch", "merge", "hostcap", "histogram"}
# How many reduce tasks each job with a reducer runs: the placement one, the Crawler its plan's.
REDUCE_TASKS = {"place": 1, "crawl": PLANNED_TASKS}
# Every job of a layer, in the order the driver runs them, and its class.
PLANNED_JOBS = {"generate": MRGenerator, "place": MRPlacement, "crawl": MRCrawler, "parse": MRParser, "dbbatch": MRDbBatch,
                "dedup": MRDedup, "dbupdate": MRDbUpdate, "optimize": MROptimizer, "merge": MRMerge,
                "xml": MRHtmlToXml}
# The same with both caps on a layer's frontier: the steps that choose a
# frontier (layer 0's, then the next layer's) follow the Generator and the Optimizer.
CAPS = FrontierCaps(per_layer=1000, per_host=50)
CAP_JOBS = {"hostcap": MRHostCap, "histogram": MRLayerHistogram, "layercap": MRLayerCap}
PLANNED_CAPPED_JOBS = {"generate": MRGenerator, **CAP_JOBS, **{name: job for name, job in PLANNED_JOBS.items()
                                                                if name != "generate"}}
# What a Hadoop 3 cluster (EMR 7.1 runs Hadoop 3.3.6) answers when asked
# its version; mrjob uses it to write jobconf names for that version.
CLUSTER_HADOOP = "3.3.6"
EMR_CLUSTER_ID = "j-0000000000000"
CLOSED_LOOPBACK = "http://127.0.0.1:9"
OFFLINE_AWS = [f"--{service}-endpoint" for service in ("emr", "s3", "ec2", "iam")]


def test_mrjob_is_the_release_these_tests_read():
    assert mrjob.__version__ == "0.7.4", "these tests call mrjob 0.7.4 internals: check them against the new release"


# ---- the mrjob.conf examples -------------------------------------------------


def test_the_conf_directory_holds_the_documented_examples():
    assert sorted(path.name for path in CONF_DIR.glob("*.conf")) == sorted(CONF_RUNNERS)


@pytest.mark.parametrize("name", sorted(CONF_RUNNERS))
def test_every_key_of_a_conf_is_an_option_of_its_runner(name):
    runner_class = CONF_RUNNERS[name]
    path = CONF_DIR / name
    # A runner section under a misspelt alias would load as nothing at all.
    assert list(yaml.safe_load(path.read_text(encoding="utf-8"))["runners"]) == [runner_class.alias]
    [(loaded_from, options)] = load_opts_from_mrjob_conf(runner_class.alias, str(path))
    assert loaded_from == str(path) and options
    # mrjob only warns about, and then ignores, an option its runner lacks.
    assert set(options) - runner_class.OPT_NAMES == set()


# The driver gives the local runner its own interpreter; the others name one.
@pytest.mark.parametrize("name", sorted(set(CONF_RUNNERS) - {"local.conf"}))
def test_the_python_a_cluster_conf_names_is_one_the_project_supports(name):
    options = conf_options(name)
    supported = SpecifierSet(pyproject()["project"]["requires-python"])
    version = re.fullmatch(r"python(\d+\.\d+)", options["python_bin"])
    assert version, f"{name}: python_bin should name a Python version, not {options['python_bin']!r}"
    assert supported.contains(version.group(1)), f"{name}: {options['python_bin']} is outside {supported}"


def test_the_emr_bootstrap_installs_exactly_the_dependencies_of_pyproject():
    options = conf_options("emr.conf")
    pip = [shlex.split(command) for command in options["bootstrap"] if " pip install " in command]
    assert len(pip) == 1
    words = pip[0]
    assert words[:5] == ["sudo", options["python_bin"], "-m", "pip", "install"]
    requirements = [word for word in words[5:] if not word.startswith("-")]
    assert sorted(requirements) == sorted(pyproject()["project"]["dependencies"])
    assert any(f"install -y {options['python_bin']}" in command for command in options["bootstrap"])


# ---- the driver's steps ------------------------------------------------------


class PlannedDb(CrawlDb):
    """A crawl db on the cluster as db.json would describe it at its first
    generation: stated, since there is no cluster to read it from."""

    def meta(self):
        return {"format": DB_FORMAT, "partitions": DB_PARTITIONS, "generation": 0, "applied": None}


class PlannedStore(ClusterCrawlStore):
    """A crawl directory on the cluster, where each store holds one part file:
    stated, since there is no cluster to list them."""

    def parts(self, directory):
        return [self.part_file(directory)]

    def read_text(self, path):
        """A placement's part file: each slot by its number, on PLANNED_TASKS tasks."""
        assert "/place/" in str(path), path  # the driver reads no other store
        plan = Placement(PLANNED_TASKS, DEFAULT_SLOTS, {slot: slot % PLANNED_TASKS for slot in range(DEFAULT_SLOTS)})
        return f'"placement"\t{json.dumps(plan.to_json())}\n'


class PlannedPipeline(Pipeline):
    """The driver's pipeline, keeping what each step's job would be given instead of running it."""

    def run_step(self, step):
        output = self.db.generation_dir(1) if step.output is INTO_DB else step.output  # the update's next generation
        self.planned[step.name.kind] = (step.job, self.inputs_of(step), output, self.context_of(step),
                                        self.options_of(step))
        self.state.record(step.name, 0.0, {})


class Planned(NamedTuple):
    pipeline: PlannedPipeline
    launcher: Launcher

    @property
    def steps(self) -> dict:
        return self.pipeline.planned

    def close(self):
        self.launcher.close()


def plan(runner: str, root: str, spark_master: str | None = None, mrjob_conf: str | None = None,
         caps: FrontierCaps = FrontierCaps()) -> Planned:
    """What the driver gives the jobs of layer LAYER (not the last) and of the
    merge after LAYER + 1 layers; under `caps`, a step of each kind that
    chooses a frontier is the last of its kind: layer LAYER + 1's."""
    config = load_config(REPO / "seeds" / "zh.yaml", {"MRCRAWL_CONTACT": "https://crawler.example.org/"})  # the operator's
    store = PlannedStore(root)
    state = CrawlState(config={}, seeds="/seeds/zh.txt", seeds_count=1, run=RUN, started_at=STARTED_AT,
                       db=db_root(None, store), clock_offset=CLOCK_OFFSET)
    settings = RunnerSettings(runner, mrjob_conf=mrjob_conf, spark_master=spark_master, reducers=REDUCERS)
    launcher = Launcher(settings)
    pipeline = PlannedPipeline(store, state, PlannedDb(ClusterCrawlStore(state.db)), launcher)
    pipeline.planned = {}
    pipeline.run(run_start(store, caps))
    pipeline.run(layer_steps(store, LAYER, last=False, batch_sorted=settings.sorts_reduce_output, caps=caps,
                             reduce_tasks=settings.reduce_tasks))
    pipeline.run(run_end(store, LAYER + 1, STARTED_AT))
    assert config.name == "zh"
    return Planned(pipeline, launcher)


def expected_stores(root: str, caps: FrontierCaps = FrontierCaps()) -> dict[str, tuple[list[str], str]]:
    """What each job reads and writes, spelled out: (inputs, output)."""
    if caps:
        return expected_capped_stores(root)
    layers = range(LAYER + 1)
    # The db's jobs read its partition files, each named: the URL partitions, the digest index's, the link store's.
    db_files = [f"{root}/db/gen-000000/part-{n:05d}" for n in range(3 * DB_PARTITIONS)]
    url_files, digest_files = db_files[:DB_PARTITIONS], db_files[DB_PARTITIONS:2 * DB_PARTITIONS]
    return {
        "generate": (url_files, f"{root}/in/0"),
        "place": ([f"{root}/in/{LAYER}"], f"{root}/place/{LAYER}"),
        "crawl": ([f"{root}/in/{LAYER}"], f"{root}/doc/{LAYER}"),
        "parse": ([f"{root}/doc/{LAYER}"], f"{root}/out/{LAYER}"),
        "dbbatch": ([f"{root}/in/{LAYER}", f"{root}/doc/{LAYER}", f"{root}/out/{LAYER}"], f"{root}/dbbatch/{LAYER}"),
        "dedup": (digest_files, f"{root}/dup/{LAYER}"),
        "dbupdate": (db_files, f"{root}/db/gen-000001"),
        "optimize": (url_files, f"{root}/in/{LAYER + 1}"),
        "merge": ([f"{root}/{store}/{n}" for store in ("doc", "out", "dup") for n in layers], f"{root}/doc/merged"),
        "xml": ([f"{root}/doc/merged"], f"{root}/xml/{STARTED_AT}"),
    }


def expected_capped_stores(root: str) -> dict[str, tuple[list[str], str]]:
    """The same under both caps: the Generator and the Optimizer write
    candidates, and the steps that choose layer LAYER + 1's frontier read them."""
    chosen = LAYER + 1
    stores = expected_stores(root)
    url_files = stores["generate"][0]
    return {**stores,
            "generate": (url_files, f"{root}/cand/0"),
            "optimize": (url_files, f"{root}/cand/{chosen}"),
            "hostcap": ([f"{root}/cand/{chosen}"], f"{root}/hostcap/{chosen}"),
            "histogram": ([f"{root}/hostcap/{chosen}"], f"{root}/hist/{chosen}"),
            "layercap": ([f"{root}/hostcap/{chosen}"], f"{root}/in/{chosen}")}


@pytest.fixture
def absent(tmp_path):
    """Paths of programs that do not exist: running one fails the test."""
    return {"hadoop": str(tmp_path / "no-hadoop" / "hadoop"), "spark-submit": str(tmp_path / "no-spark" / "spark-submit")}


def test_the_driver_plans_the_jobs_on_the_stores_of_the_design():
    crawl = plan("hadoop", HDFS_ROOT)
    try:
        assert {name: (inputs, output) for name, (_, inputs, output, *_) in crawl.steps.items()} == expected_stores(HDFS_ROOT)
        assert {name: job_class for name, (job_class, *_) in crawl.steps.items()} == PLANNED_JOBS
        assert list(crawl.steps) == list(PLANNED_JOBS)
    finally:
        crawl.close()


def test_a_capped_crawl_plans_the_steps_that_choose_each_frontier():
    crawl = plan("hadoop", HDFS_ROOT, caps=CAPS)
    try:
        assert {name: (inputs, output) for name, (_, inputs, output, *_) in crawl.steps.items()} == \
            expected_stores(HDFS_ROOT, CAPS)
        assert list(crawl.steps) == list(PLANNED_CAPPED_JOBS)
        assert {name: job_class for name, (job_class, *_) in crawl.steps.items()} == PLANNED_CAPPED_JOBS
        # The topN's second pass is shipped the histogram its first pass wrote.
        assert crawl.steps["layercap"][4] == ["--histogram-part", f"{HDFS_ROOT}/hist/{LAYER + 1}/part-00000"]
        # Layer 0's frontier is chosen by the same steps, from the Generator's candidates.
        chosen = [str(name) for name in crawl.pipeline.state.done if name.kind in CAP_JOBS]
        assert chosen == [f"{kind}/{layer}" for layer in (0, LAYER + 1) for kind in CAP_JOBS]
    finally:
        crawl.close()


@pytest.mark.parametrize("caps, kinds, frontier_writer", [
    (FrontierCaps(), [], "optimize"),
    (FrontierCaps(per_host=50), ["hostcap"], "hostcap"),
    (FrontierCaps(per_layer=1000), ["histogram", "layercap"], "layercap"),
])
def test_each_cap_plans_its_own_steps_and_no_cap_none(caps, kinds, frontier_writer):
    crawl = plan("hadoop", HDFS_ROOT, caps=caps)
    try:
        assert [name for name in crawl.steps if name in CAP_JOBS] == kinds
        assert crawl.steps[frontier_writer][2] == f"{HDFS_ROOT}/in/{LAYER + 1}"
        if kinds:  # the first step that chooses reads the Optimizer's candidates
            assert crawl.steps[kinds[0]][1] == [crawl.steps["optimize"][2]] == [f"{HDFS_ROOT}/cand/{LAYER + 1}"]
    finally:
        crawl.close()


def test_reduce_tasks_are_expected_exactly_for_the_jobs_with_a_reducer():
    assert {name for name, job_class in PLANNED_CAPPED_JOBS.items() if job_class.reducer is not MRJob.reducer} == JOBS_WITH_REDUCER


def jobs_of(crawl: Planned, *runner_args: str):
    """(step kind, the job as the driver would launch it, plus runner_args)."""
    for name, (job_class, inputs, output, context, options) in crawl.steps.items():
        yield name, job_class(args=crawl.launcher.args(job_class, inputs, output, context, options) + list(runner_args))


def pairs(args: list[str]) -> dict[str, list[str]]:
    """`-flag value` pairs as {flag: [values...]}."""
    assert len(args) % 2 == 0 and all(flag.startswith("-") for flag in args[::2]), args
    found = defaultdict(list)
    for flag, value in zip(args[::2], args[1::2]):
        found[flag].append(value)
    return found


def shipped_files(option: str) -> dict[str, str]:
    """A -files list (`uri#name,...`) as {name in the task's directory: uri}."""
    files = {}
    for entry in option.split(","):
        uri, _, name = entry.partition("#")
        files[name or uri.rsplit("/", 1)[1]] = uri
    return files


def jobconf(values: list[str]) -> dict[str, str]:
    return dict(value.split("=", 1) for value in values)


def shipped_parts(job) -> list[tuple[str, list[str]]]:
    """The part files of stores a job is shipped whole, by kind: the db's
    jobs' seeds, batch and duplicates; LayerCap's histogram."""
    return [(name.removesuffix("_part"), parts) for name, parts in sorted(vars(job.options).items())
            if name.endswith("_part")]


def check_streaming_step(name, job, options, wrapper, task_python, root, output_suffix="", caps=FrontierCaps()):
    """What every Hadoop streaming step of the crawl must carry, on Hadoop and EMR alike."""
    inputs, output = expected_stores(root, caps)[name]
    assert options["-input"] == inputs
    assert options["-output"] == [output + output_suffix]

    files = shipped_files(options["-files"][0])
    script = Path(job.mr_job_script()).name
    # The package: the driver's zip goes to every task and onto its PYTHONPATH.
    wrapper_name = "manifest-setup.sh" if job.READS_WHOLE_FILES else "setup-wrapper.sh"
    assert "mrcrawl.zip" in files and script in files and wrapper_name in files
    assert "export PYTHONPATH=$__mrjob_PWD/mrcrawl.zip:$PYTHONPATH" in wrapper
    task = f"{wrapper_name} {task_python} {script} --step-num=0"
    # Every job is told the crawl's context; the crawl's config is shipped from the store, and tasks open their copy.
    assert files["config.json"] == f"{root}/config.json"
    task_args = (f"--crawl-config config.json --layer {job.options.layer} --db-partitions {DB_PARTITIONS} --run {RUN}"
                 f" --clock-offset {CLOCK_OFFSET}")
    # The seeds, the batch, the duplicates and the histogram are shipped from the store as well.
    # Part files of two stores share a name: mrjob ships each under a name of its own.
    name_of = {uri: name for name, uri in files.items()}
    for kind, parts in shipped_parts(job):
        for part in parts:
            assert part in name_of
            task_args += f" --{kind}-part {name_of[part]}"
    if name == "place":
        task_args += f" --slots {DEFAULT_SLOTS} --reduce-tasks {REDUCERS}"
    if job.READS_WHOLE_FILES:
        # A Hadoop reduce task writes its keys sorted: the db's tasks may seek in the batch.
        assert job.options.batch_sorted == bool(job.options.batch_part)
        task_args += " --batch-sorted" * job.options.batch_sorted

    conf = jobconf(options["-D"])
    assert_task_command(options["-mapper"][0], f"{task} --mapper", task_args)
    if name in JOBS_WITH_REDUCER:
        assert conf["mapreduce.job.reduces"] == str(REDUCE_TASKS.get(name, REDUCERS))
        assert_task_command(options["-reducer"][0], f"{task} --reducer", task_args)
    else:
        assert conf["mapreduce.job.reduces"] == "0" and "-reducer" not in options

    if name == "crawl":
        assert conf["mapreduce.reduce.speculative"] == "false"
        # One host's URLs reach one reducer call: partition on the key (the
        # host) alone, though mrjob sorts on key and value for SORT_VALUES.
        assert options["-partitioner"] == ["org.apache.hadoop.mapred.lib.KeyFieldBasedPartitioner"]
        assert conf["mapreduce.partition.keypartitioner.options"] == "-k1,1"
        assert conf["stream.num.map.output.key.fields"] == "2"
        # The key is the reduce task's (placement.reduce_task_key), which that
        # partitioner sends to the task itself (tests/test_placement.py runs it):
        # the placement's part file is shipped to every task.
        assert [name_of[part] for part in job.options.placement_part] and conf["mapreduce.job.counters.max"]
    else:
        assert "mapreduce.reduce.speculative" not in conf
    return conf


SWITCHES = {"--batch-sorted"}  # the jobs' options that take no value


def assert_task_command(command: str, task: str, task_args: str) -> None:
    """A task's command is `/bin/sh -x` or `-ex`, the task, then its options in any order."""
    words = shlex.split(command)
    assert words[0] == "/bin/sh" and words[1] in ("-x", "-ex"), command
    assert words[2:2 + len(task.split())] == task.split(), command
    given, expected = words[2 + len(task.split()):], task_args.split()
    assert sorted(SWITCHES.intersection(given)) == sorted(SWITCHES.intersection(expected)), command
    with_values = [[word for word in words if word not in SWITCHES] for words in (given, expected)]
    assert pairs(with_values[0]) == pairs(with_values[1]), command


def package_modules() -> set[str]:
    """Every module of the package, as its path inside the driver's zip."""
    return {path.relative_to(REPO).as_posix() for path in (REPO / "mrcrawl").rglob("*.py")}


def carries_every_module(package_zip: str) -> bool:
    return set(zipfile.ZipFile(package_zip).namelist()) == package_modules()


def task_files(runner) -> dict[str, str]:
    """The local files the runner would upload into each task's directory, by name."""
    return runner._working_dir_mgr.name_to_path("file")


def test_the_package_zip_alone_imports_every_module(tmp_path):
    """What a cluster task has: the zip on its PYTHONPATH, and not this checkout."""
    package_zip = launcher.package_zip(str(tmp_path))
    assert carries_every_module(package_zip)
    modules = sorted(path.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for path in package_modules())
    loaded = subprocess.run(
        [sys.executable, "-c", "import importlib, sys\nfor name in sys.argv[1:]: print(importlib.import_module(name).__file__)",
         *modules],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": package_zip}, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert len(loaded) == len(modules) and all(path.startswith(package_zip + os.sep) for path in loaded), loaded


# ---- Hadoop streaming --------------------------------------------------------


def prepared_step(runner, build_step) -> tuple:
    """What a streaming runner's _run() prepares before it uploads anything:
    (the first step, as build_step(0) makes it; the tasks' setup wrapper).
    The package zip it would upload must carry every module."""
    try:
        runner._create_setup_wrapper_scripts()
        runner._add_job_files_for_upload()
        step = build_step(0)
        # A job that reads whole files (mapper_raw) has its map tasks wrapped
        # in the script that fetches each file of the input manifest.
        wrapper_path = runner._manifest_setup_script_path if runner._uses_input_manifest() else runner._setup_wrapper_script_path
        wrapper = Path(wrapper_path).read_text()
        assert carries_every_module(task_files(runner)["mrcrawl.zip"])
        return step, wrapper
    finally:
        runner.cleanup(mode=["LOCAL_TMP"])


@pytest.mark.parametrize("caps", [FrontierCaps(), CAPS], ids=["uncapped", "capped"])
def test_hadoop_streaming_arguments_of_every_job(absent, caps):
    crawl = plan("hadoop", HDFS_ROOT, mrjob_conf=str(CONF_DIR / "hadoop.conf"), caps=caps)
    conf = conf_options("hadoop.conf")
    try:
        for name, job in jobs_of(crawl, "--hadoop-bin", absent["hadoop"]):
            runner = job.make_runner()
            assert runner._num_steps() == 1
            runner.fs.hadoop._hadoop_version = CLUSTER_HADOOP  # see the module's docstring
            command, wrapper = prepared_step(runner, runner._args_for_streaming_step)

            assert command[:3] == [absent["hadoop"], "jar", conf["hadoop_streaming_jar"]]
            options = pairs(command[3:])
            settings = check_streaming_step(name, job, options, wrapper, conf["python_bin"], HDFS_ROOT, caps=caps)
            # Uploads go under the conf's hadoop_tmp_dir, and its jobconf reaches every job.
            assert shipped_files(options["-files"][0])["mrcrawl.zip"].startswith(conf["hadoop_tmp_dir"] + "/")
            assert settings["mapreduce.task.timeout"] == str(conf["jobconf"]["mapreduce.task.timeout"])
    finally:
        crawl.close()


# ---- EMR ---------------------------------------------------------------------


def emr_runner_args(*extra: str) -> list[str]:
    args = list(extra)
    for switch in OFFLINE_AWS:
        args += [switch, CLOSED_LOOPBACK]
    return args


@pytest.mark.parametrize("caps", [FrontierCaps(), CAPS], ids=["uncapped", "capped"])
def test_emr_step_arguments_of_every_job(caps):
    crawl = plan("emr", S3_ROOT, mrjob_conf=str(CONF_DIR / "emr.conf"), caps=caps)
    conf = conf_options("emr.conf")
    try:
        # Steps are built for a cluster that exists: mrjob reads the cluster's
        # release and Hadoop version from DescribeCluster, stated here instead.
        for name, job in jobs_of(crawl, *emr_runner_args("--cluster-id", EMR_CLUSTER_ID)):
            runner = job.make_runner()
            runner._cluster_to_cache[EMR_CLUSTER_ID].update(
                image_version=conf["release_label"].removeprefix("emr-"), app_versions={"hadoop": CLUSTER_HADOOP},
            )
            step, wrapper = prepared_step(runner, runner._build_step)

            # EMR 4 and later run streaming through command-runner.jar.
            jar_step = step["HadoopJarStep"]
            assert jar_step["Jar"] == "command-runner.jar" and jar_step["Args"][0] == "hadoop-streaming"
            options = pairs(jar_step["Args"][1:])
            # mrjob writes S3 output directories with a trailing slash.
            settings = check_streaming_step(name, job, options, wrapper, conf["python_bin"], S3_ROOT, output_suffix="/",
                                            caps=caps)
            assert shipped_files(options["-files"][0])["mrcrawl.zip"].startswith(conf["cloud_tmp_dir"])
            # mrjob comes from the bootstrap's pip install, not from an upload.
            assert "mrjob.zip" not in shipped_files(options["-files"][0])
            assert settings["mapreduce.reduce.memory.mb"] == str(conf["jobconf"]["mapreduce.reduce.memory.mb"])
    finally:
        crawl.close()


def test_emr_cluster_request_from_the_conf():
    crawl = plan("emr", S3_ROOT, mrjob_conf=str(CONF_DIR / "emr.conf"))
    conf = conf_options("emr.conf")
    try:
        _, job = next(jobs_of(crawl, *emr_runner_args()))
        runner = job.make_runner()
        try:
            # What EMRJobRunner does before RunJobFlow, short of uploading.
            runner._add_bootstrap_files_for_upload()
            bootstrap = Path(runner._master_bootstrap_script_path).read_text()
            cluster = runner._cluster_kwargs()
        finally:
            runner.cleanup(mode=["LOCAL_TMP"])
    finally:
        crawl.close()

    assert cluster["ReleaseLabel"] == conf["release_label"]
    assert cluster["Applications"] == [{"Name": "Hadoop"}]
    groups = {group["InstanceRole"]: (group["InstanceType"], group["InstanceCount"]) for group in cluster["Instances"]["InstanceGroups"]}
    assert groups == {"MASTER": (conf["master_instance_type"], 1), "CORE": (conf["core_instance_type"], conf["num_core_instances"])}
    assert (cluster["JobFlowRole"], cluster["ServiceRole"]) == (conf["iam_instance_profile"], conf["iam_service_role"])
    assert cluster["LogUri"] == conf["cloud_log_dir"]
    # A pooled cluster stays up between the crawl's jobs and ends itself when idle.
    assert cluster["Instances"]["KeepJobFlowAliveWhenNoSteps"] is True
    [idle] = [action for action in cluster["BootstrapActions"] if action["Name"] == "idle timeout"]
    assert idle["ScriptBootstrapAction"]["Args"] == [str(conf["max_mins_idle"] * 60)]
    # Every node installs the pinned Python and the dependencies.
    for command in conf["bootstrap"]:
        assert command in bootstrap


# ---- Spark -------------------------------------------------------------------


def spark_command(job) -> tuple[dict[str, list[str]], list[str], object]:
    """spark-submit's options, and what it runs: mrjob's Spark harness and its
    arguments, or for a job that reads whole files, the job's own script and
    its arguments (a Spark step: mrcrawl/mr/job.py's DbFileJob)."""
    runner = job.make_runner()
    try:
        assert runner._num_steps() == 1
        runner._create_setup_wrapper_scripts()
        command = runner._args_for_spark_step(0)
        program = job.mr_job_script() if job.READS_WHOLE_FILES else runner._spark_harness_path()
        start = command.index(program)
        return pairs(command[1:start]), command[start + 1:], runner
    finally:
        runner.cleanup(mode=["LOCAL_TMP"])


@pytest.mark.parametrize("caps", [FrontierCaps(), CAPS], ids=["uncapped", "capped"])
def test_spark_submit_arguments_of_every_job_on_yarn(absent, caps):
    crawl = plan("spark", HDFS_ROOT, spark_master="yarn", mrjob_conf=str(CONF_DIR / "spark-yarn.conf"), caps=caps)
    conf = conf_options("spark-yarn.conf")
    try:
        for name, job in jobs_of(crawl, "--spark-submit-bin", absent["spark-submit"], "--hadoop-bin", absent["hadoop"]):
            submit, program_args, runner = spark_command(job)
            inputs, output = expected_stores(HDFS_ROOT, caps)[name]

            assert submit["--master"] == ["yarn"] and submit["--deploy-mode"] == [conf["spark_deploy_mode"]]
            # The package zip goes to the driver and every executor's Python.
            [py_files] = submit["--py-files"]
            [package_zip] = [path for path in py_files.split(",") if Path(path).name == "mrcrawl.zip"]
            assert carries_every_module(package_zip)
            settings = jobconf(submit["--conf"])
            assert settings["spark.executorEnv.PYSPARK_PYTHON"] == conf["python_bin"]
            assert settings["spark.speculation"] == "false"  # from the conf's spark_args
            assert submit["--num-executors"] == ["8"]

            shipped = {entry.split("#")[0]: entry.split("#")[-1].rsplit("/", 1)[-1]
                       for entry in submit["--files"][0].split(",")}
            if job.READS_WHOLE_FILES:
                # A Spark step of the job's own script: its options, then the inputs and the output.
                assert program_args[:2] == ["--step-num=0", "--spark"]
                assert program_args[-2:] == [",".join(inputs), output]
                options = pairs([arg for arg in program_args[2:-2] if arg != "--spark-whole-files"])
                # Spark's shuffle leaves the batch's part files unsorted: each task reads them whole.
                assert not job.options.batch_sorted
                assert "--spark-whole-files" in program_args and options["--spark-counters"]
                assert options["--db-partitions"] == [str(DB_PARTITIONS)] and options["--run"] == [RUN]
                assert options["--clock-offset"] == [str(CLOCK_OFFSET)]
                for kind, parts in shipped_parts(job):
                    # Shipped to every executor, and named by its name there.
                    assert options.get(f"--{kind}-part", []) == [shipped[part] for part in parts]
                assert options["--crawl-config"] == ["config.json"] and shipped[f"{HDFS_ROOT}/config.json"]
            else:
                # The harness: job class, inputs, output, then its options.
                assert program_args[1:3] == [",".join(inputs), output]
                options = program_args[3:]
                assert f"{HDFS_ROOT}/config.json" in shipped
                # LayerCap's histogram is shipped to every executor, and named by its name there.
                parts = "".join(f"--{kind}-part {shipped[part]} " for kind, parts in shipped_parts(job) for part in parts)
                placement = f"--slots {DEFAULT_SLOTS} --reduce-tasks {REDUCERS} " if name == "place" else ""
                job_args = (f"{placement}{parts}--crawl-config config.json --layer {job.options.layer}"
                            f" --db-partitions {DB_PARTITIONS} --run {RUN} --clock-offset {CLOCK_OFFSET}")
                assert options[options.index("--job-args") + 1] == job_args
                if name in JOBS_WITH_REDUCER:
                    assert options[options.index("--num-reducers") + 1] == str(REDUCE_TASKS.get(name, REDUCERS))
                else:
                    assert "--num-reducers" not in options
            assert runner._spark_tmp_dir.startswith(conf["spark_tmp_dir"] + "/")
    finally:
        crawl.close()


def test_spark_submit_arguments_on_kubernetes(absent):
    conf = conf_options("spark-k8s.conf")
    crawl = plan("spark", "s3a://bucket/crawl/zh", spark_master=conf["spark_master"],
                 mrjob_conf=str(CONF_DIR / "spark-k8s.conf"))
    try:
        jobs = dict(jobs_of(crawl, "--spark-submit-bin", absent["spark-submit"], "--hadoop-bin", absent["hadoop"]))
        submit, harness, runner = spark_command(jobs["crawl"])
    finally:
        crawl.close()
    assert submit["--master"] == [conf["spark_master"]] and submit["--deploy-mode"] == ["cluster"]
    assert "mrcrawl.zip" in [Path(path).name for path in submit["--py-files"][0].split(",")]
    settings = jobconf(submit["--conf"])
    # Executors and the driver pod run the same Python.
    assert settings["spark.executorEnv.PYSPARK_PYTHON"] == settings["spark.pyspark.python"] == conf["python_bin"]
    assert settings["spark.kubernetes.file.upload.path"].startswith("s3a://")
    assert harness[1:3] == ["s3a://bucket/crawl/zh/in/2", "s3a://bucket/crawl/zh/doc/2"]
    assert harness[harness.index("--num-reducers") + 1] == str(PLANNED_TASKS)
    assert runner._spark_tmp_dir.startswith(conf["spark_tmp_dir"] + "/")


# ---- reading the confs and pyproject.toml ------------------------------------


def conf_options(name: str) -> dict:
    [(_, options)] = load_opts_from_mrjob_conf(CONF_RUNNERS[name].alias, str(CONF_DIR / name))
    return options


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
