package dev.privagg.bench;

import dev.privagg.io.KafkaConnection;
import dev.privagg.io.ProducerSizing;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.job.kafka.SourcePlan;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Runs one benchmark setting against a real broker and the real job in its own JVM:
 *
 * <ol>
 *   <li>preloads warm-up rounds (JIT compilation takes seconds) and the measured rounds of
 *       synthetic updates into an updates topic of as many partitions as the job's parallelism,
 *       keyed by client id as clients send them;
 *   <li>reads them back with plain consumers, one per reader of the job's source, before and after
 *       the job: the faster read is the ceiling;
 *   <li>starts the job on them; throughput is the measured rounds' bytes over the time between the
 *       last warm-up round's model and the last round's model, as stamped by the job's sink;
 *   <li>runs live rounds: waits for each announcement, sends m updates as fast as the producer can,
 *       and times the last acknowledged update to the model becoming visible to a {@code
 *       read_committed} consumer, and sums the bytes of the checkpoints taken meanwhile.
 * </ol>
 *
 * Every round must release exactly its m updates with none rejected, or the run fails.
 */
final class BenchRunner {
  /** What the runner needs besides the plan. */
  record Options(
      String bootstrapServers,
      Path workDir,
      String jobHeap,
      List<String> jobJvmOptions,
      boolean profile,
      PrintWriter out) {}

  private final Options options;

  BenchRunner(Options options) {
    this.options = options;
  }

  BenchResult run(BenchPlan plan) throws Exception {
    BenchSetting setting = plan.setting();
    Path dir = options.workDir().resolve(setting.name());
    Files.createDirectories(dir);
    JobSpec spec = writeSpec(setting, dir.resolve("spec.yaml"));
    KafkaPreflight.ensureTopics(
        KafkaConnection.to(options.bootstrapServers()), List.of(spec), setting.parallelism());
    int readers =
        SourcePlan.read(
                KafkaConnection.to(options.bootstrapServers()),
                spec.topics().updates(),
                setting.parallelism())
            .parallelism();
    float[] values = syntheticUpdate(setting.dimension());
    try (KafkaProducer<byte[], byte[]> producer = producer(spec)) {
      progress(
          "%s: preloading %d rounds x %d updates of %.2f MB (%.2f GB)",
          setting.name(),
          plan.preloadedRounds(),
          setting.clients(),
          plan.recordBytes() / 1e6,
          plan.preloadedRounds() * plan.roundBytes() / 1e9);
      long preloadStarted = System.currentTimeMillis();
      for (int r = 1; r <= plan.preloadedRounds(); r++) {
        UpdateTemplate template = new UpdateTemplate(spec.jobId(), r, values);
        for (int c = 0; c < setting.clients(); c++) {
          producer.send(record(spec, template, c));
        }
        // The job takes updates in (LogAppendTime, partition, offset) order: a round's updates
        // must all be stamped before the next round's, or an update of round r + 1 on a lower
        // partition in the same millisecond would come before r closed (FUTURE_ROUND).
        producer.flush();
        nextMillisecond();
      }
      KafkaCeiling.Read ceiling =
          KafkaCeiling.read(
              options.bootstrapServers(), spec.topics().updates(), readers, spec.maxRecordBytes());
      progress(
          "%s: ceiling (%d plain consumer%s, raw bytes) %.0f MB/s over %d records",
          setting.name(),
          readers,
          readers == 1 ? "" : "s",
          ceiling.megabytesPerSecond(),
          ceiling.records());

      try (JobProcess job =
              JobProcess.start(
                  dir.resolve("spec.yaml"),
                  options.bootstrapServers(),
                  preloadStarted - 1000,
                  dir,
                  options.jobHeap(),
                  setting,
                  options.jobJvmOptions(),
                  options.profile());
          TopicWatcher watcher = new TopicWatcher(spec, options.bootstrapServers())) {
        long cpuAtStart = job.cpuNanos(); // JVM and Flink start-up are behind us
        TopicWatcher.SeenModel warm = watcher.awaitModel(plan.warmupRounds(), job);
        int last = plan.preloadedRounds();
        TopicWatcher.SeenModel end = watcher.awaitModel(last, job);
        long cpu = job.cpuNanos() - cpuAtStart;
        watcher.checkRounds(1, last, setting.clients(), job);
        Map<String, Long> stages = job.settledStageNanos();
        // The ceiling once more, after the job: the faster of the two reads is the ceiling.
        KafkaCeiling.Read again =
            KafkaCeiling.read(
                options.bootstrapServers(),
                spec.topics().updates(),
                readers,
                spec.maxRecordBytes());
        double ceilingMbPerSecond =
            Math.max(ceiling.megabytesPerSecond(), again.megabytesPerSecond());
        double seconds = Math.max(1, end.createMillis() - warm.createMillis()) / 1e3;
        long updates = (long) plan.measuredRounds() * setting.clients();
        double updatesPerSecond = updates / seconds;
        double mbPerSecond = updates * plan.recordBytes() / 1e6 / seconds;
        progress(
            "%s: pipeline %.0f updates/s, %.0f MB/s = %.2f x ceiling (%.0f and %.0f MB/s)",
            setting.name(),
            updatesPerSecond,
            mbPerSecond,
            mbPerSecond / ceilingMbPerSecond,
            ceiling.megabytesPerSecond(),
            again.megabytesPerSecond());
        Map<String, Double> shares = new HashMap<>();
        for (String stage : BenchResult.STAGES) {
          shares.put(stage, (double) stages.getOrDefault(stage, 0L) / Math.max(1, cpu));
        }

        double[] latencies = new double[plan.latencyRounds()];
        long liveStarted = System.currentTimeMillis();
        for (int i = 0; i < latencies.length; i++) {
          long round = last + 1 + i;
          watcher.awaitAnnouncement(round, job);
          UpdateTemplate template = new UpdateTemplate(spec.jobId(), round, values);
          AtomicLong lastAck = new AtomicLong();
          AtomicReference<Exception> failed = new AtomicReference<>();
          for (int c = 0; c < setting.clients(); c++) {
            producer.send(
                record(spec, template, c),
                (metadata, e) -> {
                  lastAck.accumulateAndGet(System.nanoTime(), Math::max);
                  if (e != null) {
                    failed.set(e);
                  }
                });
          }
          producer.flush();
          if (failed.get() != null) {
            throw new IllegalStateException("sending updates failed: " + failed.get());
          }
          TopicWatcher.SeenModel model = watcher.awaitModel(round, job);
          latencies[i] = (model.visibleNanos() - lastAck.get()) / 1e6;
          progress(
              "%s: live round %d/%d closed, %.0f ms after its last update",
              setting.name(), i + 1, latencies.length, latencies[i]);
        }
        long liveEnded = System.currentTimeMillis();
        watcher.checkRounds(last + 1, last + latencies.length, setting.clients(), job);
        JobProcess.CheckpointBytes checkpoints = settledCheckpoints(job, liveStarted, liveEnded);
        double liveSeconds = Math.max(1, liveEnded - liveStarted) / 1e3;
        progress(
            "%s: %d checkpoints in %.1f s of live rounds (%d failed): %.1f MB/s, %.1f MB per round,"
                + " %.1f MB of state each",
            setting.name(),
            checkpoints.completed(),
            liveSeconds,
            checkpoints.failed(),
            checkpoints.checkpointedBytes() / 1e6 / liveSeconds,
            checkpoints.checkpointedBytes() / 1e6 / latencies.length,
            checkpoints.stateBytes() / 1e6 / Math.max(1, checkpoints.completed()));
        JobProcess.HeapPeaks heap = job.heapPeaks();
        return new BenchResult(
            setting,
            plan.recordBytes(),
            plan.measuredRounds(),
            updatesPerSecond,
            mbPerSecond,
            ceilingMbPerSecond,
            latencies.length,
            Percentiles.of(latencies, 50),
            Percentiles.of(latencies, 99),
            heap.usedMb(),
            heap.liveMb(),
            job.peakRssBytes() >> 20,
            shares,
            new BenchResult.Checkpoints(
                checkpoints.completed(),
                checkpoints.checkpointedBytes() / 1e6 / liveSeconds,
                checkpoints.checkpointedBytes() / 1e6 / latencies.length,
                checkpoints.stateBytes() / 1e6 / Math.max(1, checkpoints.completed())),
            null);
      }
    } finally {
      deleteTopics(spec);
    }
  }

  /**
   * The checkpoints triggered in the window, once none of them is still running (a checkpoint of a
   * large state may finish seconds after the last live round).
   */
  private static JobProcess.CheckpointBytes settledCheckpoints(
      JobProcess job, long fromMillis, long toMillis) throws Exception {
    JobProcess.CheckpointBytes bytes = job.checkpointBytes(fromMillis, toMillis);
    for (int attempt = 0; attempt < 120 && bytes.inProgress() > 0; attempt++) {
      Thread.sleep(500);
      bytes = job.checkpointBytes(fromMillis, toMillis);
    }
    return bytes;
  }

  /** Waits until the wall clock (and so the broker's LogAppendTime) has moved to a new ms. */
  private static void nextMillisecond() throws InterruptedException {
    long now = System.currentTimeMillis();
    while (System.currentTimeMillis() <= now) {
      Thread.sleep(1);
    }
  }

  /** Encoded size of one update of {@code setting}, for planning. */
  static long recordBytes(BenchSetting setting) {
    return new UpdateTemplate("bench-" + setting.name(), 1, new float[setting.dimension()]).size();
  }

  private static ProducerRecord<byte[], byte[]> record(
      JobSpec spec, UpdateTemplate template, int client) {
    // Keyed by client id, as clients send them: one client always lands on one partition.
    return new ProducerRecord<>(
        spec.topics().updates(),
        UpdateTemplate.clientId(client).getBytes(StandardCharsets.US_ASCII),
        template.forClient(client));
  }

  /** Values whose L2 norm is about 2: every update is clipped to the bound 1, the costly case. */
  private static float[] syntheticUpdate(int dimension) {
    SplittableRandom random = new SplittableRandom(42);
    double std = 2.0 / Math.sqrt(dimension);
    float[] values = new float[dimension];
    for (int i = 0; i < dimension; i++) {
      values[i] = (float) (std * random.nextGaussian());
    }
    return values;
  }

  private KafkaProducer<byte[], byte[]> producer(JobSpec spec) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrapServers());
    // Idempotent (so acks=all; one broker here, so no slower than acks=1): a send retried after a
    // slow ack of a record of tens of MB would otherwise land twice, and the job rejects the copy
    // as DUPLICATE_CLIENT, failing the setting (seen at d = 16M).
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
    p.putAll(ProducerSizing.forRecordsUpTo(spec.maxRecordBytes()));
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * The setting's job: one tensor of d parameters, rounds that close at m updates and open the next
   * at once (long timeout, so only the count moves them: a throughput run, not a private one, so
   * its rounds state epsilon Infinity), an infinite budget so every round is released, and the
   * setting's noise: independent from the secure source, or BLT correlated noise from a keyed
   * source whose key is written next to the spec.
   */
  static JobSpec writeSpec(BenchSetting setting, Path file) throws IOException {
    String id = "bench-" + setting.name();
    List<String> lines = new ArrayList<>();
    lines.addAll(
        List.of(
            "jobId: " + id,
            "model:",
            "  tensors:",
            "    - name: w",
            "      shape: [" + setting.dimension() + "]",
            "rounds:",
            "  timeout: 30m",
            "  expectedClients: " + setting.clients(),
            "  closeEarly: true",
            "  nextRoundAtEarlyClose: true",
            "privacy:",
            "  clipNorm: 1.0",
            "  noiseMultiplier: 1.0",
            "  delta: 1.0e-5",
            "  budgetEpsilon: .inf"));
    if (setting.mechanism() == NoiseMechanismKind.BLT) {
      Path key = file.resolveSibling(NOISE_KEY_FILE);
      writeNoiseKey(key);
      lines.addAll(
          List.of(
              "  accountant: rdp",
              "  mechanism: blt",
              // k as large as n: the bench's clients send every round. Explicit theta and omega:
              // optimizing a BLT for n = 1e6 takes about 25 s at every spec read, and the cost of
              // the noise depends only on the buffer count.
              "  blt:",
              "    minSeparation: 1",
              "    maxParticipations: " + BLT_PLANNED_ROUNDS,
              "    buffers: " + BLT_THETA.length,
              "    theta: " + yamlList(BLT_THETA),
              "    omega: " + yamlList(BLT_OMEGA),
              "    noiseBlocks: " + BLT_NOISE_BLOCKS,
              "  plannedRounds: " + BLT_PLANNED_ROUNDS,
              "  noise:",
              "    source: keyed",
              "    keyFile: " + key.toAbsolutePath()));
    } else {
      lines.addAll(List.of("  noise:", "    source: secure"));
    }
    lines.addAll(
        List.of(
            "topics:",
            "  updates: " + id + ".updates",
            "  models: " + id + ".models",
            "  rounds: " + id + ".rounds",
            "  ledger: " + id + ".ledger",
            "  rejects: " + id + ".rejects",
            ""));
    Files.writeString(file, String.join("\n", lines));
    return JobSpecReader.read(file);
  }

  /** The keyed noise source's secret of a BLT setting, beside its spec. */
  static final String NOISE_KEY_FILE = "noise.key";

  /** Rounds the BLT is planned for, and each client's participations: more than a bench runs. */
  static final long BLT_PLANNED_ROUNDS = 1_000_000;

  /** A usable two-buffer BLT; any theta and omega of this length cost the same per round. */
  static final double[] BLT_THETA = {0.99, 0.6};

  static final double[] BLT_OMEGA = {0.05, 0.3};

  /** The job's default block count. */
  static final int BLT_NOISE_BLOCKS = 16;

  /** 32 random bytes as hex, readable by the owner only; a throughput run's key is never reused. */
  private static void writeNoiseKey(Path key) throws IOException {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    Files.deleteIfExists(key);
    Files.createFile(
        key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(key, HexFormat.of().formatHex(bytes) + "\n");
  }

  private static String yamlList(double[] values) {
    return Arrays.stream(values)
        .mapToObj(Double::toString)
        .collect(Collectors.joining(", ", "[", "]"));
  }

  private void deleteTopics(JobSpec spec) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrapServers());
    try (Admin admin = Admin.create(p)) {
      admin.deleteTopics(new ArrayList<>(spec.topics().all())).all().get();
    } catch (Exception e) {
      progress("could not delete the topics of %s: %s", spec.jobId(), e.getMessage());
    }
  }

  private void progress(String format, Object... args) {
    options.out().printf(format + "%n", args);
    options.out().flush();
  }
}
