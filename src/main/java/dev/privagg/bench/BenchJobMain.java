package dev.privagg.bench;

import dev.privagg.io.KafkaConnection;
import dev.privagg.job.PrivaggJob;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job under benchmark, in its own JVM so that its heap and RSS are its own: the real {@link
 * PrivaggJob} on a local MiniCluster whose REST API (Flink metrics, checkpoint statistics) listens
 * on a given port.
 *
 * <p>Arguments: {@code SPEC BOOTSTRAP START_MILLIS REST_PORT CHECKPOINT_DIR CHECKPOINT_MILLIS
 * PARALLELISM STATE_BACKEND}. The job reads updates appended since {@code START_MILLIS}, so updates
 * preloaded before it started are its input.
 */
public final class BenchJobMain {
  static final String USAGE =
      "use SPEC BOOTSTRAP START_MILLIS REST_PORT CHECKPOINT_DIR CHECKPOINT_MILLIS PARALLELISM"
          + " STATE_BACKEND";

  /** Checkpoints the REST API remembers: 100 ms checkpoints over 15 minutes. */
  static final int CHECKPOINT_HISTORY = 10_000;

  private BenchJobMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 8) {
      throw new IllegalArgumentException(USAGE);
    }
    List<JobSpec> specs = List.of(JobSpecReader.read(Path.of(args[0])));
    int parallelism = Integer.parseInt(args[6]);
    Path checkpoints = Path.of(args[4]);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(
            configuration(
                Integer.parseInt(args[3]), checkpoints, parallelism, StateBackendKind.of(args[7])));
    JobClient client =
        PrivaggJob.start(
            env,
            specs,
            new PrivaggJob.Settings(
                KafkaConnection.to(args[1]),
                Long.parseLong(args[5]),
                parallelism,
                Long.parseLong(args[2])));
    System.out.println("flink-job " + client.getJobID());
    System.out.flush();
    client.getJobExecutionResult().get();
  }

  /** The MiniCluster's configuration: one slot per subtask, the state backend, its REST API. */
  static Configuration configuration(
      int restPort, Path checkpointDir, int parallelism, StateBackendKind backend) {
    Map<String, String> conf = new HashMap<>();
    conf.put("rest.port", Integer.toString(restPort));
    conf.put("execution.checkpointing.dir", checkpointDir.toUri().toString());
    // The REST API caches metrics for 10 s by default; the benchmark reads them per phase.
    conf.put("metrics.fetcher.update-interval", "500");
    // Every checkpoint of a phase, not only the latest 10: the benchmark sums their sizes.
    conf.put("web.checkpoints.history", Integer.toString(CHECKPOINT_HISTORY));
    // All operators share a slot group: one slot per subtask of the widest operator.
    conf.put("taskmanager.numberOfTaskSlots", Integer.toString(parallelism));
    conf.put("parallelism.default", Integer.toString(parallelism));
    conf.put("state.backend.type", backend.configName());
    if (backend == StateBackendKind.ROCKSDB) {
      // Incremental: a checkpoint uploads only the SST files written since the previous one.
      conf.put("execution.checkpointing.incremental", "true");
      conf.put(
          "state.backend.rocksdb.localdir",
          checkpointDir.resolveSibling("rocksdb").toAbsolutePath().toString());
    }
    // Any Flink option, as -Dprivagg.flink.<key>=<value> in --job-jvm-opts (network buffer sizes,
    // say): tried side by side without a code change.
    System.getProperties()
        .stringPropertyNames()
        .forEach(
            name -> {
              if (name.startsWith(FLINK_PROPERTY_PREFIX)) {
                conf.put(name.substring(FLINK_PROPERTY_PREFIX.length()), System.getProperty(name));
              }
            });
    return Configuration.fromMap(conf);
  }

  /** System properties under this prefix are Flink options of the job's MiniCluster. */
  static final String FLINK_PROPERTY_PREFIX = "privagg.flink.";
}
