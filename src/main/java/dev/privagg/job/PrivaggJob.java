package dev.privagg.job;

import dev.privagg.io.KafkaAccess;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.ProducerSizing;
import dev.privagg.io.TopicAdmin;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.kafka.Heartbeat;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.LedgerReconciler;
import dev.privagg.job.publish.PublishFunction;
import dev.privagg.spec.InitFiles;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.record.TimestampType;
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

  /**
   * How many readers the updates source runs: the job's parallelism, but no more than the updates
   * topic has partitions, so that every reader owns at least one partition.
   */
  public record SourcePlan(String topic, int partitions, int jobParallelism) {
    public SourcePlan {
      if (!(partitions >= 1 && jobParallelism >= 1)) {
        throw new IllegalArgumentException(
            "partitions and jobParallelism must be >= 1, were "
                + partitions
                + " and "
                + jobParallelism);
      }
    }

    public int parallelism() {
      return Math.min(jobParallelism, partitions);
    }

    /** One line for logs and the CLI: what the source runs at, and why. */
    public String describe() {
      if (parallelism() < jobParallelism) {
        return ("updates source runs at %d subtasks, the rest of the job at %d: topic %s has %d"
                + " partitions, and a reader without a partition would hold event time back so no"
                + " round could close")
            .formatted(parallelism(), jobParallelism, topic, partitions);
      }
      return "updates source runs at %d subtasks (topic %s has %d partitions)"
          .formatted(parallelism(), topic, partitions);
    }
  }

  /** Reads the updates topic's partition count now (the topic must exist). */
  public static SourcePlan sourcePlan(
      KafkaConnection kafka, String updatesTopic, int jobParallelism) {
    return new SourcePlan(
        updatesTopic, TopicAdmin.partitionCount(kafka, updatesTopic), jobParallelism);
  }

  private PrivaggJob() {}

  public static void main(String[] args) throws Exception {
    List<String[]> specArgs = new ArrayList<>();
    Map<String, byte[]> sentInits = new HashMap<>();
    String bootstrap = null;
    Path kafkaProperties = null;
    long interval = 1000;
    for (int i = 0; i < args.length; i += 2) {
      String value = require(args[i], i + 1 < args.length ? args[i + 1] : null);
      switch (args[i]) {
        case "--spec", "--spec-base64" -> specArgs.add(new String[] {args[i], value});
        case "--init-base64" -> sentInit(sentInits, value);
        case "--bootstrap-servers" -> bootstrap = value;
        case "--kafka-properties" -> kafkaProperties = Path.of(value);
        case "--checkpoint-interval-ms" -> interval = Long.parseLong(value);
        default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; " + USAGE);
      }
    }
    List<JobSpec> specs = readSpecs(specArgs, sentInits);
    if (specs.isEmpty() || bootstrap == null) {
      throw new IllegalArgumentException(USAGE);
    }
    JobSpecReader.checkTogether(specs);
    KafkaConnection kafka = KafkaConnection.of(bootstrap, kafkaProperties);
    // Under flink run or privagg submit this main runs on the client or JobManager, which can
    // reach Kafka: create missing topics here so the source never starts on an absent topic.
    try {
      prepareKafka(kafka, specs, DEFAULT_UPDATE_PARTITIONS);
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
   * Room above the largest update for what an output record adds to it (a reject's reason, detail
   * and position; a model's privacy statement): topic limits and the sink's request size include
   * it.
   */
  static final long OUTPUT_HEADROOM_BYTES = 1 << 20;

  /** Partitions of the updates topic when the job creates it. */
  public static final int DEFAULT_UPDATE_PARTITIONS = 2;

  private static final String USAGE =
      "use --spec FILE (or --spec-base64 YAML [--init-base64 JOBID=SAFETENSORS], repeatable)"
          + " --bootstrap-servers HOST:PORT [--kafka-properties FILE] [--checkpoint-interval-ms N]";

  /**
   * The specs of {@code --spec FILE} (its init file read beside it) and {@code --spec-base64 YAML}
   * arguments, in order. A base64 spec's init values come from {@code --init-base64
   * JOBID=SAFETENSORS} (sent by {@code privagg submit}, which read the file on its own machine),
   * else from its initFile relative to the working directory of this main().
   */
  static List<JobSpec> readSpecs(List<String[]> specArgs, Map<String, byte[]> sentInits) {
    List<JobSpec> specs = new ArrayList<>();
    InitFiles initFiles = InitFiles.sent(sentInits, InitFiles.relativeTo(Path.of("")));
    for (String[] arg : specArgs) {
      specs.add(
          arg[0].equals("--spec")
              ? JobSpecReader.read(Path.of(arg[1]))
              : JobSpecReader.parse(
                  "--spec-base64 #" + (specs.size() + 1), decode(arg[1]), initFiles));
    }
    for (String jobId : sentInits.keySet()) {
      if (specs.stream()
          .noneMatch(s -> s.jobId().equals(jobId) && s.model().init().equals("file"))) {
        throw new IllegalArgumentException(
            "--init-base64 sends an initial model for job "
                + jobId
                + ", which no spec given here starts from a file (model.init: file)");
      }
    }
    return specs;
  }

  private static void sentInit(Map<String, byte[]> sentInits, String value) {
    int eq = value.indexOf('=');
    if (eq < 1) {
      throw new IllegalArgumentException(
          "--init-base64 must be JOBID=BASE64 (a job's initial model as safetensors), was "
              + value.substring(0, Math.min(value.length(), 40)));
    }
    try {
      sentInits.put(
          value.substring(0, eq), java.util.Base64.getDecoder().decode(value.substring(eq + 1)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--init-base64 " + value.substring(0, eq) + "=...: not base64 (" + e.getMessage() + ")");
    }
  }

  private static String decode(String base64) {
    return new String(
        java.util.Base64.getDecoder().decode(base64), java.nio.charset.StandardCharsets.UTF_8);
  }

  private static String require(String flag, String value) {
    if (value == null) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return value;
  }

  /**
   * Before anything is defined: checks that the brokers answer and accept the job's credentials,
   * creates or checks its topics ({@link #ensureTopics}), and checks that the job's principal may
   * do on each topic what the job will do there, so that a missing ACL refuses the start in one
   * line instead of failing the running job's tasks over and over.
   *
   * @throws IllegalStateException one line naming the brokers, the principal, what was refused and
   *     the fix
   */
  public static List<String> prepareKafka(
      KafkaConnection kafka, List<JobSpec> specs, int updatePartitions) {
    // Before creating or checking topics (their failures do not name the topic), and again after.
    KafkaAccess.Needs needs = jobAccess(specs);
    KafkaAccess.require(kafka, needs);
    List<String> created;
    try {
      created = ensureTopics(kafka, specs, updatePartitions);
    } catch (IllegalStateException e) {
      throw e;
    } catch (Exception e) {
      throw KafkaAccess.explain(e, kafka, "create or check the job's topics");
    }
    KafkaAccess.require(kafka, needs);
    return created;
  }

  /**
   * What the job's principal does: on each topic, reads updates and writes heartbeat ticks to them;
   * writes releases, ledger and rejects; reads the ledger, releases and public topics at start;
   * checks every topic's configs. It commits its sources' offsets in its consumer groups and writes
   * with transactional ids, both named after {@link #clientPrefix}.
   */
  static KafkaAccess.Needs jobAccess(List<JobSpec> specs) {
    JobSpec.Topics t = specs.get(0).topics();
    Set<AclOperation> readWrite =
        Set.of(AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS);
    Map<String, Set<AclOperation>> topics = new java.util.LinkedHashMap<>();
    for (String topic : List.of(t.updates(), t.models(), t.rounds(), t.ledger(), t.releases())) {
      topics.put(topic, readWrite);
    }
    topics.put(t.rejects(), Set.of(AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS));
    String prefix = clientPrefix(specs);
    List<String> names = List.of(prefix, prefix + "-publisher");
    return new KafkaAccess.Needs(topics, names, names);
  }

  /**
   * The name of the job's consumer groups and transactional id prefixes ({@code privagg-} and a
   * hash of the served job ids), the same for every run of the same jobs.
   */
  static String clientPrefix(List<JobSpec> specs) {
    return "privagg-" + Integer.toHexString(jobIds(specs).hashCode());
  }

  /**
   * Creates missing topics sized for the jobs' models, and refuses topics that exist with settings
   * a client or a restart could exploit (see {@link TopicAdmin#ensure}).
   */
  public static List<String> ensureTopics(
      KafkaConnection kafka, List<JobSpec> specs, int updatePartitions) throws Exception {
    JobSpec.Topics t = specs.get(0).topics();
    long maxUpdate = specs.stream().mapToLong(JobSpec::maxRecordBytes).max().orElseThrow();
    long maxModel = specs.stream().mapToLong(JobSpec::maxModelRecordBytes).max().orElseThrow();
    List<TopicAdmin.Requirement> updates =
        List.of(
            TopicAdmin.Requirement.exactly(
                "message.timestamp.type",
                "LogAppendTime",
                "round membership is the broker's append time; with CreateTime clients set it"),
            TopicAdmin.Requirement.exactly(
                "compression.type",
                "uncompressed",
                "a compressed batch may carry a record far above max.message.bytes"),
            // Above the job's limit, so oversize records reach the job and get a reject reason.
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes",
                maxUpdate + OUTPUT_HEADROOM_BYTES,
                "records over the job's limit must reach it to be rejected with a reason"));
    // The models and the internal releases topic are compacted by key (job id; topic/job id):
    // each job's latest model (and announcement) stays, and a restart reads them in time
    // proportional to the jobs, not to the rounds ever released.
    List<TopicAdmin.Requirement> latestModels =
        List.of(
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes", maxModel, "a model record over it fails every release"),
            TopicAdmin.Requirement.exactly(
                "cleanup.policy",
                "compact",
                "a restart continues from each job's latest model, which must never expire"));
    List<TopicAdmin.Requirement> ledger =
        List.of(
            TopicAdmin.Requirement.exactly(
                "cleanup.policy", "delete", "compaction would forget spent budget"),
            TopicAdmin.Requirement.exactly(
                "retention.ms", "-1", "expiry would forget spent budget"),
            TopicAdmin.Requirement.exactly(
                "retention.bytes", "-1", "deletion by size would forget spent budget"));
    List<TopicAdmin.Requirement> rejects =
        List.of(
            TopicAdmin.Requirement.atLeast(
                "max.message.bytes",
                maxUpdate + OUTPUT_HEADROOM_BYTES,
                "a reject carries the update's bytes; one the topic refuses fails the job"));
    return TopicAdmin.ensure(
        kafka,
        List.of(
            new TopicAdmin.TopicPlan(t.updates(), updatePartitions, updates),
            new TopicAdmin.TopicPlan(t.models(), 1, latestModels),
            new TopicAdmin.TopicPlan(t.rounds(), 1, List.of()),
            new TopicAdmin.TopicPlan(t.ledger(), 1, ledger),
            new TopicAdmin.TopicPlan(t.rejects(), 1, rejects),
            new TopicAdmin.TopicPlan(t.releases(), 1, latestModels)));
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
    String name = clientPrefix(specs);
    long maxRecord =
        specs.stream()
            .mapToLong(s -> Math.max(s.maxRecordBytes(), s.maxModelRecordBytes()))
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
    SourcePlan plan = sourcePlan(settings.kafka(), topics.updates(), settings.parallelism());
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
    ProducerSizing.forRecordsUpTo(maxRecord + OUTPUT_HEADROOM_BYTES)
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
    ProducerSizing.forRecordsUpTo(maxModel + OUTPUT_HEADROOM_BYTES)
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

  /** Keeps each record's position so rejects can point back to it. */
  static final class RawUpdateDeserializer implements KafkaRecordDeserializationSchema<RawUpdate> {
    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<RawUpdate> out) {
      RawUpdate raw =
          new RawUpdate(record.topic(), record.partition(), record.offset(), record.value());
      raw.tick = Heartbeat.isTick(record.key(), record.value());
      raw.producerTime = record.timestampType() != TimestampType.LOG_APPEND_TIME;
      out.collect(raw);
    }

    @Override
    public TypeInformation<RawUpdate> getProducedType() {
      return TypeInformation.of(RawUpdate.class);
    }
  }

  /**
   * Each output record names its own topic; releases (records for a public topic) go to the
   * internal releases topic instead, where only their committed copies are read.
   */
  static final class OutboundSerializer implements KafkaRecordSerializationSchema<OutboundRecord> {
    private final String releasesTopic;
    private final Set<String> publicTopics;
    private final PublicRounds.Run run;

    OutboundSerializer(JobSpec.Topics topics, PublicRounds.Run run) {
      this.releasesTopic = topics.releases();
      this.publicTopics = Set.copyOf(topics.publicTopics());
      this.run = run;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(
        OutboundRecord element, KafkaSinkContext context, Long timestamp) {
      if (publicTopics.contains(element.topic)) {
        return InternalRelease.toInternal(releasesTopic, element, run);
      }
      return new ProducerRecord<>(element.topic, element.key, element.value);
    }
  }

  /** Reads the internal releases topic; records this version did not write are skipped. */
  static final class InternalReleaseDeserializer
      implements KafkaRecordDeserializationSchema<InternalRelease> {
    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<InternalRelease> out) {
      InternalRelease release = InternalRelease.fromInternal(record);
      if (release != null) {
        out.collect(release);
      }
    }

    @Override
    public TypeInformation<InternalRelease> getProducedType() {
      return TypeInformation.of(InternalRelease.class);
    }
  }
}
