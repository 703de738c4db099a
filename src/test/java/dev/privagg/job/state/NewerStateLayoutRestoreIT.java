package dev.privagg.job.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.privagg.job.JobProgress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md, "Upgrading privagg under a running job": "A downgrade is refused, with a
 * message naming the state and its version, before anything runs". The check is in {@link
 * StateLayoutSnapshot#readSnapshot}, which Flink calls on the TaskManager while it restores keyed
 * state: the task fails and the restart strategy restarts it, again and again (deploy/local and
 * deploy/k8s: fixed-delay, 1000 attempts), while the submission reported success. This takes a
 * savepoint with layout 'job-progress' v1, rewrites its recorded version to one this build does not
 * know (what a savepoint of a newer privagg holds), restores it with deploy/local's restart
 * strategy (shorter delay) and expects the job to be refused: FAILED, not restarting.
 */
class NewerStateLayoutRestoreIT {
  @Test
  void aSavepointWithANewerLayout_isRefused_notRestartedOverAndOver(@TempDir Path dir)
      throws Exception {
    Path savepoints = dir.resolve("savepoints");
    JobClient first = job(new Configuration()).executeAsync("layout v1");
    awaitRunning(first);
    Thread.sleep(2000);
    String savepoint =
        first
            .stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
            .get();
    assertThat(bumpJobProgressVersion(Path.of(java.net.URI.create(savepoint))))
        .as("layout 'job-progress' version 1 found in the savepoint")
        .isPositive();

    Configuration restore = new Configuration();
    restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    restore.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    restore.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1000);
    restore.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    JobClient second = job(restore).executeAsync("layout v2 restored");
    try {
      second.getJobExecutionResult().get(20, TimeUnit.SECONDS);
      fail("the job restored from a newer layout finished");
    } catch (ExecutionException refused) {
      assertThat(ExceptionUtils.stringifyException(refused))
          .contains("state 'job-progress' in layout version 2");
    } catch (TimeoutException stillGoing) {
      JobStatus status = second.getJobStatus().get();
      second.cancel().get();
      fail(
          "a savepoint of a newer layout is refused (docs/operations.md), but 20 s after the"
              + " restore the job is %s: its tasks fail on the layout and restart, over and over",
          status);
    }
  }

  private static StreamExecutionEnvironment job(Configuration conf) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    env.fromSequence(0, Long.MAX_VALUE)
        .uid("numbers")
        .map(
            n -> {
              Thread.sleep(5);
              return n;
            })
        .uid("slow")
        .keyBy(n -> Long.toString(n % 3), Types.STRING)
        .process(new Progress())
        .uid("progress")
        .sinkTo(new DiscardingSink<>())
        .uid("discard");
    return env;
  }

  /** Keeps a JobProgress per key, as the decider does. */
  static final class Progress extends KeyedProcessFunction<String, Long, Long> {
    private transient ValueState<JobProgress> progress;

    @Override
    public void open(OpenContext context) {
      progress =
          getRuntimeContext()
              .getState(new ValueStateDescriptor<>("probe", StateSerializers.JOB_PROGRESS));
    }

    @Override
    public void processElement(Long n, Context ctx, Collector<Long> out) throws Exception {
      JobProgress p = progress.value();
      if (p == null) {
        p = new JobProgress();
      }
      p.currentRound = n;
      progress.update(p);
      out.collect(n);
    }
  }

  /** Rewrites "job-progress" v1 to v2 in every file of the savepoint; returns how many. */
  private static int bumpJobProgressVersion(Path savepoint) throws Exception {
    byte[] id = "job-progress".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] needle = new byte[2 + id.length + 4];
    needle[1] = (byte) id.length;
    System.arraycopy(id, 0, needle, 2, id.length);
    needle[needle.length - 1] = 1;
    int found = 0;
    try (Stream<Path> files = Files.walk(savepoint)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        byte[] bytes = Files.readAllBytes(f);
        for (int i = 0; i + needle.length <= bytes.length; i++) {
          if (java.util.Arrays.equals(bytes, i, i + needle.length, needle, 0, needle.length)) {
            bytes[i + needle.length - 1] = 2;
            found++;
          }
        }
        Files.write(f, bytes);
      }
    }
    return found;
  }

  private static void awaitRunning(JobClient job) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (job.getJobStatus().get() != JobStatus.RUNNING) {
      assertThat(System.currentTimeMillis()).isLessThan(deadline);
      Thread.sleep(100);
    }
  }
}
