package dev.privagg.job;

import dev.privagg.io.KafkaAccess;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.ProducerSizing;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.kafka.InternalReleaseDeserializer;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.job.kafka.OutboundSerializer;
import dev.privagg.job.kafka.RawUpdateDeserializer;
import dev.privagg.job.kafka.SourcePlan;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.LedgerReconciler;
import dev.privagg.job.publish.PublishFunction;
import dev.privagg.spec.JobSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The privagg Flink job on Kafka: exactly-once from the updates topic to the output topics.
 *
 * <p>Entry point for {@code flink run}: {@code --spec FILE [--spec FILE...] --bootstrap-servers
 * HOST:PORT [--checkpoint-interval-ms N]}.
 */
public final class PrivaggJob {
  /** How the job connects to Kafka and checkpoints. */
  public record Settings(
      KafkaConnection kafka, long checkpointIntervalMillis, int parallelism, long startMillis) {}

  private static final long START_MARGIN_MILLIS = 5_000;

  /** How often the source emits watermarks: rounds decide at most about this late. */
  static final long WATERMARK_INTERVAL_MILLIS = 50;

  /**
   * How far (in broker time) one updates partition may be read ahead of the slowest one. Short: a
   * backlog (after a restart, or preloaded) packs far more than this much live traffic into each
   * second of broker time, and what a reader reads ahead waits in state for event time (5 s held
   * gigabytes of million-parameter updates and halved throughput at parallelism 2).
   */
  static final Duration MAX_PARTITION_DRIFT = Duration.ofSeconds(1);

  private static final Logger LOG = LoggerFactory.getLogger(PrivaggJob.class);

  private PrivaggJob() {}

  public static void main(String[] args) throws Exception {
    JobArguments arguments = JobArguments.parse(args);
    List<JobSpec> specs = arguments.specs();
    KafkaConnection kafka = arguments.kafka();
    long interval = arguments.checkpointIntervalMillis();
    // Under flink run or privagg submit this main runs on the client or JobManager, which can
    // reach Kafka: create missing topics here so the source never starts on an absent topic.
    try {
      KafkaPreflight.prepareKafka(kafka, specs, KafkaPreflight.DEFAULT_UPDATE_PARTITIONS);
    } catch (RuntimeException e) {
      // As privagg run says it: Flink relays this message to privagg submit, and Kafka's own
      // (a JAAS parse error) may quote a password.
      throw KafkaAccess.isKafkaFailure(e) ? KafkaAccess.explain(e, kafka, "start the job") : e;
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    define(
        env,
        specs,
        new Settings(kafka, interval, env.getParallelism(), System.currentTimeMillis()));
    env.execute("privagg " + jobIds(specs));
  }

  /**
   * Consecutive failed checkpoints the job tolerates before it fails (and restarts from its last
   * completed checkpoint): releases are only visible once a checkpoint commits them, so a job whose
   * checkpoints keep failing must not go on computing releases nobody can read.
   */
  public static final int TOLERABLE_CHECKPOINT_FAILURES = 5;

  /** How long a checkpoint may take before it counts as failed. */
  static final long CHECKPOINT_TIMEOUT_MILLIS = 300_000;

  /**
   * An embedded (MiniCluster) environment whose checkpoints go to files under {@code stateDir},
   * kept when the job is cancelled, instead of JobManager memory (capped at 5 MiB: a model of 440k
   * parameters no longer fits, and no release would ever commit).
   */
  public static StreamExecutionEnvironment localEnvironment(Path stateDir) {
    Configuration conf = new Configuration();
    conf.set(
        CheckpointingOptions.CHECKPOINTS_DIRECTORY,
        stateDir.toAbsolutePath().resolve("checkpoints").toUri().toString());
    conf.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    return StreamExecutionEnvironment.getExecutionEnvironment(conf);
  }

  /** Defines source, pipeline and sink on {@code env}. */
  public static void define(
      StreamExecutionEnvironment env, List<JobSpec> specs, Settings settings) {
    NoiseSources.checkVisibleSecrets(specs);
    env.enableCheckpointing(settings.checkpointIntervalMillis());
    env.getCheckpointConfig().setTolerableCheckpointFailureNumber(TOLERABLE_CHECKPOINT_FAILURES);
    // Well below the sink's transaction timeout (10 min): a checkpoint that cannot complete fails
    // before the broker aborts the transaction it would commit.
    env.getCheckpointConfig().setCheckpointTimeout(CHECKPOINT_TIMEOUT_MILLIS);
    // Kept on cancel and after a JobManager loss: the recovery README prescribes resubmits from
    // the latest retained checkpoint.
    env.getCheckpointConfig()
        .setExternalizedCheckpointRetention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    // Aligned checkpoints only: a round's ledger entry (decider) and its model (combiner, after
    // the shards' partial sums) then land in one checkpoint's transactions, and a restored
    // combiner never holds a round the restored decider has not sealed.
    env.getCheckpointConfig().enableUnalignedCheckpoints(false);
    // Event time moves every 50 ms (Flink's default is 200): an early close waits for it.
    env.getConfig().setAutoWatermarkInterval(WATERMARK_INTERVAL_MILLIS);
    env.setParallelism(settings.parallelism());
    JobSpec.Topics topics = specs.get(0).topics();
    String name = KafkaPreflight.clientPrefix(specs);
    long maxRecord =
        specs.stream()
            .mapToLong(
                s ->
                    Math.max(
                        Math.max(s.maxRecordBytes(), s.maxModelRecordBytes()),
                        s.maxSecureRecordBytes()))
            .max()
            .orElseThrow();

    // Budget never forgets: what the ledger and releases topics already show bounds any restored
    // state below.
    // Which open rounds are taken over is decided here, once: the source must start at the
    // opening of each (the TaskManager's clock may disagree near a deadline).
    LedgerReconciler.Reconciled reconciled =
        LedgerReconciler.read(settings.kafka(), specs).decidedAt(System.currentTimeMillis());
    KafkaSource<RawUpdate> source =
        KafkaSource.<RawUpdate>builder()
            .setProperties(settings.kafka().clientProperties())
            .setTopics(topics.updates())
            .setGroupId(name)
            // A fresh job reads from its own start time (a restore uses checkpointed offsets), or
            // from the opening of a round it takes over from an earlier run: older updates
            // belong to earlier rounds, and nothing sent after an announcement is missed however
            // long partition discovery takes.
            .setStartingOffsets(
                OffsetsInitializer.timestamp(
                    firstUpdateMillis(reconciled, settings.startMillis() - START_MARGIN_MILLIS)))
            .setDeserializer(new RawUpdateDeserializer())
            .setProperty("isolation.level", "read_committed")
            .setProperty("max.partition.fetch.bytes", Long.toString(Math.max(maxRecord, 1 << 20)))
            .setProperty("fetch.max.bytes", Long.toString(Math.max(maxRecord, 50L << 20)))
            .build();
    // At most one reader per partition: a reader without a partition emits no watermark, and the
    // watermark downstream (the minimum over all readers) would never pass a deadline. Partitions
    // added later are shared among the readers. Not idleness (withIdleness) instead: it skips a
    // reader after wall-clock silence, so a reader that is merely behind (back-pressure, a slow
    // fetch, a late tick) would let the watermark pass a deadline before its partition's earlier
    // updates are read, and a round could close without members that the log holds (design.md
    // invariant 10). Heartbeat ticks already move every partition, so none needs to be idle. On a
    // restore at another count the uid keeps the state: Flink redistributes the readers' splits.
    // Decode then runs at the job's parallelism behind a rebalance: every reader's watermark
    // reaches every decode subtask, which takes the minimum, so rounds close as before.
    SourcePlan plan = SourcePlan.read(settings.kafka(), topics.updates(), settings.parallelism());
    LOG.info("{} ({})", plan.describe(), name);
    DataStream<RawUpdate> updates =
        env.fromSource(
                // Event time is the broker's LogAppendTime: monotonic per partition. A record with
                // a producer's time (the topic was switched to CreateTime, or holds batches from
                // before it was fixed) gets the lowest time, so it cannot move event time.
                source,
                WatermarkStrategy.<RawUpdate>forMonotonousTimestamps()
                    .withTimestampAssigner(
                        (raw, kafkaTime) -> raw.producerTime ? Long.MIN_VALUE : kafkaTime)
                    // A partition read far ahead of the others is paused: the aggregator holds
                    // updates until event time (the slowest partition) reaches them, and this
                    // caps what it holds at about MAX_PARTITION_DRIFT of traffic.
                    .withWatermarkAlignment(
                        name + "-updates", MAX_PARTITION_DRIFT, Duration.ofMillis(250)),
                "updates-source")
            .setParallelism(plan.parallelism())
            .uid("updates-source");

    KafkaSinkBuilder<OutboundRecord> sinkBuilder =
        KafkaSink.<OutboundRecord>builder()
            .setKafkaProducerConfig(settings.kafka().clientProperties())
            .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .setTransactionalIdPrefix(name)
            // At or below the broker's transaction.max.timeout.ms (15 min by default).
            .setProperty("transaction.timeout.ms", "600000");
    // A reject carries a whole update of up to maxRecord bytes plus its reason and position.
    ProducerSizing.forRecordsUpTo(maxRecord + KafkaPreflight.OUTPUT_HEADROOM_BYTES)
        .forEach(sinkBuilder::setProperty);
    // Later than every run the releases topic has seen, whatever this machine's clock says: an
    // earlier run must never look newer and stop this one.
    PublicRounds.Run run =
        PublicRounds.Run.after(
            settings.startMillis(), reconciled.latestRunStart(), UUID.randomUUID().toString());
    sinkBuilder.setRecordSerializer(new OutboundSerializer(topics, run));
    KafkaSink<OutboundRecord> sink = sinkBuilder.build();
    Pipeline.build(
            env, specs, updates, reconciled.floors(), settings.kafka(), settings.startMillis())
        .sinkTo(sink)
        .name("kafka-sink")
        .uid("kafka-sink");
    definePublisher(env, specs, settings, run, name);
    LOG.info("run {} serves job ids {}", run.encode(), jobIds(specs));
  }

  /**
   * Copies committed releases (read_committed) from the internal releases topic to the public
   * topics, in transactions of their own: a public topic never holds two payloads for one round
   * (design.md invariant 9), and a read_committed reader sees each round once.
   */
  private static void definePublisher(
      StreamExecutionEnvironment env,
      List<JobSpec> specs,
      Settings settings,
      PublicRounds.Run run,
      String name) {
    JobSpec.Topics topics = specs.get(0).topics();
    long maxModel = specs.stream().mapToLong(JobSpec::maxModelRecordBytes).max().orElseThrow();
    KafkaSource<InternalRelease> releases =
        KafkaSource.<InternalRelease>builder()
            .setProperties(settings.kafka().clientProperties())
            .setTopics(topics.releases())
            .setGroupId(name + "-publisher")
            // A fresh job reads the compacted topic from its start; the published positions
            // below keep it from publishing anything twice.
            .setStartingOffsets(OffsetsInitializer.earliest())
            .setDeserializer(new InternalReleaseDeserializer())
            .setProperty("isolation.level", "read_committed")
            .setProperty("max.partition.fetch.bytes", Long.toString(Math.max(maxModel, 1 << 20)))
            .setProperty("fetch.max.bytes", Long.toString(Math.max(maxModel, 50L << 20)))
            .build();
    KafkaSinkBuilder<OutboundRecord> publicSink =
        KafkaSink.<OutboundRecord>builder()
            .setKafkaProducerConfig(settings.kafka().clientProperties())
            .setRecordSerializer(
                (element, context, timestamp) ->
                    new ProducerRecord<>(element.topic, element.key, element.value))
            // Transactional too: a read_committed reader sees each round once. A copy aborted by
            // a failure is the same committed bytes, so read_uncommitted readers see no other.
            .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .setTransactionalIdPrefix(name + "-publisher")
            .setProperty("transaction.timeout.ms", "600000");
    ProducerSizing.forRecordsUpTo(maxModel + KafkaPreflight.OUTPUT_HEADROOM_BYTES)
        .forEach(publicSink::setProperty);
    Set<String> jobIds = specs.stream().map(JobSpec::jobId).collect(Collectors.toUnmodifiableSet());
    env.fromSource(releases, WatermarkStrategy.noWatermarks(), "releases-source")
        .setParallelism(1)
        .uid("releases-source")
        .keyBy(InternalRelease::positionKey, Types.STRING)
        .process(
            new PublishFunction(
                Set.copyOf(topics.publicTopics()),
                jobIds,
                LedgerReconciler.readPublished(settings.kafka(), specs),
                run))
        .name("publisher")
        .uid("publisher")
        .sinkTo(publicSink.build())
        .name("public-sink")
        .uid("public-sink");
  }

  /**
   * Where a fresh start reads the updates topic from: {@code fromMillis}, or earlier when a job
   * takes over a round an earlier run announced and whose deadline was still ahead when the job was
   * defined ({@link LedgerReconciler.Reconciled#decidedAt}), so that the round holds every update
   * its window holds.
   */
  public static long firstUpdateMillis(LedgerReconciler.Reconciled reconciled, long fromMillis) {
    return reconciled.floors().values().stream()
        .map(LedgerFloor::openAnnouncement)
        .filter(open -> open != null)
        .mapToLong(LedgerFloor.Announced::openedMillis)
        .reduce(fromMillis, Math::min);
  }

  /** Starts the job without blocking (tests and {@code privagg run}). */
  public static JobClient start(
      StreamExecutionEnvironment env, List<JobSpec> specs, Settings settings) throws Exception {
    define(env, specs, settings);
    return env.executeAsync("privagg " + jobIds(specs));
  }

  private static String jobIds(List<JobSpec> specs) {
    return specs.stream().map(JobSpec::jobId).collect(Collectors.joining(","));
  }
}
