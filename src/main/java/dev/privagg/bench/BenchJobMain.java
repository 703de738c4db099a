package dev.privagg.bench;

import dev.privagg.job.PrivaggJob;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job under benchmark, in its own JVM so that its heap and RSS are its own: the real {@link
 * PrivaggJob} on a local MiniCluster whose REST API (Flink metrics) listens on a given port.
 *
 * <p>Arguments: {@code SPEC BOOTSTRAP START_MILLIS REST_PORT CHECKPOINT_DIR CHECKPOINT_MILLIS}. The
 * job reads updates appended since {@code START_MILLIS}, so updates preloaded before it started are
 * its input.
 */
public final class BenchJobMain {
  private BenchJobMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      throw new IllegalArgumentException(
          "use SPEC BOOTSTRAP START_MILLIS REST_PORT CHECKPOINT_DIR CHECKPOINT_MILLIS");
    }
    List<JobSpec> specs = List.of(JobSpecReader.read(Path.of(args[0])));
    Configuration conf =
        Configuration.fromMap(
            Map.of(
                "rest.port",
                args[3],
                "execution.checkpointing.dir",
                Path.of(args[4]).toUri().toString(),
                // The REST API caches metrics for 10 s by default; the benchmark reads them per
                // phase.
                "metrics.fetcher.update-interval",
                "500"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    JobClient client =
        PrivaggJob.start(
            env,
            specs,
            new PrivaggJob.Settings(args[1], Long.parseLong(args[5]), 1, Long.parseLong(args[2])));
    System.out.println("flink-job " + client.getJobID());
    System.out.flush();
    client.getJobExecutionResult().get();
  }
}
