package dev.privagg.cli;

import dev.privagg.bench.Bench;
import dev.privagg.bench.BenchPlan;
import dev.privagg.bench.BenchSetting;
import dev.privagg.bench.NoiseMechanismKind;
import dev.privagg.bench.StateBackendKind;
import dev.privagg.sim.EmbeddedKafka;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg bench}: throughput, round latency and memory of the real pipeline. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Benchmark the real pipeline: throughput against the Kafka ceiling, latency, memory.",
      "For each d x m x state backend x checkpoint interval x parallelism p x noise",
      "mechanism: synthetic clients preload rounds of d float32 parameters into a real",
      "broker (p partitions, keyed by client); p plain consumers read them (the ceiling);",
      "the job, in its own JVM on a Flink MiniCluster at parallelism p, aggregates them",
      "(throughput, CPU share per stage); then live rounds time the last update acked ->",
      "model visible, and the checkpoints' bytes meanwhile.",
      "Writes bench.md, bench.csv and bench.png; bench.md gives each blt setting over the",
      "same setting with independent noise when both ran."
    })
final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--dimensions",
      split = ",",
      defaultValue = "10000,1000000,8000000",
      description = "Model sizes d in float32 parameters (default 10000,1000000,8000000).")
  List<Integer> dimensions;

  @Option(
      names = "--clients",
      split = ",",
      defaultValue = "10,100,1000",
      description = "Updates per round m (default 10,100,1000).")
  List<Integer> clients;

  @Option(
      names = "--warmup-gb",
      defaultValue = "1",
      description = "Update bytes preloaded per setting before measuring (default 1).")
  double warmupGb;

  @Option(
      names = "--throughput-gb",
      defaultValue = "1.5",
      description = "Update bytes preloaded per setting for throughput (default 1.5).")
  double throughputGb;

  @Option(
      names = "--latency-gb",
      defaultValue = "8",
      description = "Update bytes sent in live rounds per setting for latency (default 8).")
  double latencyGb;

  @Option(
      names = "--max-setting-gb",
      defaultValue = "24",
      description = "Settings needing more update bytes than this are skipped (default 24).")
  double maxSettingGb;

  @Option(
      names = "--max-measured-rounds",
      defaultValue = "100",
      description = "At most this many preloaded rounds are measured (default 100).")
  int maxMeasuredRounds;

  @Option(
      names = "--latency-rounds",
      defaultValue = "3..20",
      paramLabel = "MIN..MAX",
      description = "Live rounds per setting, within --latency-gb (default 3..20).")
  String latencyRounds;

  @Option(
      names = "--job-heap",
      defaultValue = "4g",
      description = "Largest heap of the job's JVM, -Xmx syntax (default 4g).")
  String jobHeap;

  @Option(
      names = "--parallelism",
      split = ",",
      defaultValue = "1",
      description =
          "Parallelisms p of the job, each on an updates topic of p partitions (default 1). With"
              + " 1 in the list, each setting's throughput at p is also given over its value at 1.")
  List<Integer> parallelisms;

  @Option(
      names = {"--checkpoint-intervals", "--checkpoint-interval-ms"},
      split = ",",
      defaultValue = "1000",
      paramLabel = "MS",
      description =
          "The job's checkpoint intervals in ms; outputs become visible at checkpoints, so each"
              + " trades round close latency against checkpoint bytes/s (default 1000, as privagg"
              + " run).")
  List<Long> checkpointIntervals;

  @Option(
      names = "--state-backend",
      split = ",",
      defaultValue = "hashmap",
      paramLabel = "hashmap|rocksdb",
      description =
          "The job's state backends: hashmap (heap, full checkpoints) or rocksdb (incremental"
              + " checkpoints); a comma-separated list runs each (default hashmap).")
  List<String> stateBackends;

  @Option(
      names = "--mechanisms",
      split = ",",
      defaultValue = "independent",
      paramLabel = "independent|blt",
      description =
          "The job's noise mechanisms: independent (the combiner draws fresh noise per round) or"
              + " blt (correlated noise from the noise blocks' checkpointed buffers: 2 buffers, 16"
              + " blocks, a keyed source); a comma-separated list runs each (default"
              + " independent).")
  List<String> mechanisms;

  @Option(
      names = "--job-jvm-opts",
      paramLabel = "OPTS",
      description =
          "Extra JVM options of the job's JVM, space-separated (default none);"
              + " -Dprivagg.flink.KEY=VALUE sets a Flink option of its MiniCluster.")
  String jobJvmOpts;

  @Option(
      names = "--profile",
      description = "Record the job's JVM with Java Flight Recorder (work/SETTING/job.jfr).")
  boolean profile;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "Kafka to use (default: a broker started in this JVM).")
  String bootstrapServers;

  @Option(
      names = "--out",
      defaultValue = "bench-output",
      description = "Output directory (default bench-output).")
  Path out;

  @Override
  public Integer call() throws Exception {
    List<BenchSetting> settings = settings();
    BenchPlan.Limits limits = limits();
    return execute(settings, limits);
  }

  /**
   * The grid the flags ask for, in run order: the mechanisms of one setting run back to back, so
   * their ratios compare runs under the same load of the machine.
   */
  List<BenchSetting> settings() {
    Flags flags = new Flags(spec);
    dimensions.forEach(d -> flags.atLeastOne("--dimensions", d));
    clients.forEach(m -> flags.atLeastOne("--clients", m));
    parallelisms.forEach(p -> flags.atLeastOne("--parallelism", p));
    checkpointIntervals.forEach(c -> flags.atLeastOne("--checkpoint-intervals", c));
    List<NoiseMechanismKind> kinds = new ArrayList<>();
    for (String name : mechanisms) {
      try {
        kinds.add(NoiseMechanismKind.of(name));
      } catch (IllegalArgumentException e) {
        throw flags.fail("--mechanisms must be independent or blt, was '" + name + "'");
      }
    }
    List<StateBackendKind> backends = new ArrayList<>();
    for (String name : stateBackends) {
      try {
        backends.add(StateBackendKind.of(name));
      } catch (IllegalArgumentException e) {
        throw flags.fail("--state-backend must be hashmap or rocksdb, was '" + name + "'");
      }
    }
    if (!jobHeap.matches("[0-9]+[kKmMgG]?")) {
      throw flags.fail("--job-heap must look like 4g or 3072m, was '" + jobHeap + "'");
    }
    List<BenchSetting> settings = new ArrayList<>();
    for (int d : dimensions) {
      for (int m : clients) {
        for (StateBackendKind backend : backends) {
          for (long interval : checkpointIntervals) {
            for (int p : parallelisms) {
              for (NoiseMechanismKind kind : kinds) {
                settings.add(new BenchSetting(d, m, p, interval, backend, kind));
              }
            }
          }
        }
      }
    }
    return settings;
  }

  /** The volumes and round bounds the flags ask for. */
  BenchPlan.Limits limits() {
    Flags flags = new Flags(spec);
    flags.positive("--warmup-gb", warmupGb);
    flags.positive("--throughput-gb", throughputGb);
    flags.positive("--latency-gb", latencyGb);
    flags.positive("--max-setting-gb", maxSettingGb);
    flags.atLeastOne("--max-measured-rounds", maxMeasuredRounds);
    String[] range = latencyRounds.split("\\.\\.");
    if (range.length != 2 || !range[0].matches("[0-9]+") || !range[1].matches("[0-9]+")) {
      throw flags.fail(
          "--latency-rounds must be MIN..MAX, e.g. 3..20, was '" + latencyRounds + "'");
    }
    return new BenchPlan.Limits(
        (long) (warmupGb * 1e9),
        (long) (throughputGb * 1e9),
        (long) (latencyGb * 1e9),
        (long) (maxSettingGb * 1e9),
        maxMeasuredRounds,
        (int) flags.atLeastOne("--latency-rounds", Integer.parseInt(range[0])),
        Integer.parseInt(range[1]));
  }

  private Integer execute(List<BenchSetting> settings, BenchPlan.Limits limits) throws Exception {
    var console = spec.commandLine().getOut();
    if (bootstrapServers != null) {
      Bench.run(settings, limits, bootstrapServers, out, jobHeap, jvmOptions(), profile, console);
    } else {
      console.println("starting a Kafka broker in this JVM...");
      try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
        Bench.run(
            settings,
            limits,
            kafka.bootstrapServers(),
            out,
            jobHeap,
            jvmOptions(),
            profile,
            console);
      }
    }
    return 0;
  }

  private List<String> jvmOptions() {
    return jobJvmOpts == null || jobJvmOpts.isBlank()
        ? List.of()
        : List.of(jobJvmOpts.trim().split("\\s+"));
  }
}
