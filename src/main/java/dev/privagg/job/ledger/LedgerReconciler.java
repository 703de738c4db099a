package dev.privagg.job.ledger;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.KafkaConnection;
import dev.privagg.io.Tensors;
import dev.privagg.job.InternalRelease;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.publish.PublishFunction;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the committed ledger and releases topics from the beginning to their current end and
 * derives each job's {@link LedgerFloor}. Run when the Flink job is defined, before any state is
 * restored, so that neither a fresh start nor an older savepoint can forget published spending.
 */
public final class LedgerReconciler {
  private LedgerReconciler() {}

  /**
   * What a start continues from: each job's floor, and the latest start time of any run that wrote
   * to the releases topic ({@code Long.MIN_VALUE} if none), which the new run must exceed.
   */
  public record Reconciled(Map<String, LedgerFloor> floors, long latestRunStart) {
    /**
     * Decides the take-overs once, by one clock: a round whose deadline is not ahead at {@code
     * nowMillis} is never taken over (it is charged as SKIPPED), so the updates source, which
     * starts at the opening of every round still taken over, covers any round the job takes over.
     */
    public Reconciled decidedAt(long nowMillis) {
      Map<String, LedgerFloor> decided = new HashMap<>();
      floors.forEach(
          (job, floor) -> {
            LedgerFloor.Announced open = floor.openAnnouncement();
            decided.put(
                job,
                open != null && open.deadlineMillis() <= nowMillis
                    ? floor.withoutTakeOver()
                    : floor);
          });
      return new Reconciled(decided, latestRunStart);
    }
  }

  public static Reconciled read(KafkaConnection kafka, List<JobSpec> specs) {
    JobSpec.Topics topics = specs.get(0).topics();
    Set<String> jobIds = specs.stream().map(JobSpec::jobId).collect(Collectors.toSet());
    ChargedRounds charged = new ChargedRounds();
    Map<String, long[]> lastRound = new HashMap<>();
    Map<String, Long> lastReleased = new HashMap<>();
    Map<String, Boolean> exhausted = new HashMap<>();
    Map<String, PrivacyEvent> lastCharge = new HashMap<>();
    Map<String, Double> nextClipNorm = new HashMap<>();
    Map<String, GlobalModel> models = new HashMap<>();
    // Each job's deployment nonce: the ledger's latest, else the releases topic's latest.
    Map<String, String> ledgerDeployment = new HashMap<>();
    Map<String, String> releasedDeployment = new HashMap<>();
    readAll(
        kafka,
        topics.ledger(),
        (key, value) -> {
          LedgerEntry e = AvroCodec.decodeLedgerEntry(value);
          String job = e.getJobId();
          if (Deployment.isNonce(e.getDeployment())) {
            ledgerDeployment.put(job, e.getDeployment());
          }
          lastRound.computeIfAbsent(job, k -> new long[1])[0] =
              Math.max(lastRound.get(job)[0], e.getRound());
          if (e.getOutcome() == LedgerOutcome.RELEASED) {
            lastReleased.merge(job, e.getRound(), Math::max);
          }
          if (e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED) {
            exhausted.put(job, true);
          } else if (RoundCharges.charged(e) != null) {
            PrivacyEvent event = RoundCharges.charged(e);
            charged.add(job, event);
            lastCharge.put(job, event);
            // The latest charged round's says what C comes next; none (0) when it clipped fixed.
            nextClipNorm.put(job, e.getNextClipNorm() == null ? 0.0 : e.getNextClipNorm());
          }
        });
    // The internal releases topic, not the public one: a release is there once committed, even
    // if the publishing step has not copied it yet.
    Map<String, LedgerFloor.Announced> announced = new HashMap<>();
    long[] latestRun = {Long.MIN_VALUE};
    readRecords(
        kafka,
        topics.releases(),
        record -> {
          InternalRelease release = InternalRelease.fromInternal(record);
          if (release == null) {
            return;
          }
          latestRun[0] = Math.max(latestRun[0], PublicRounds.Run.parse(release.run).startMillis());
          if (!jobIds.contains(release.jobId)) {
            return;
          }
          String deployment = InternalRelease.textHeader(record, InternalRelease.DEPLOYMENT_HEADER);
          if (Deployment.isNonce(deployment)) {
            releasedDeployment.put(release.jobId, deployment);
          }
          if (release.publicTopic.equals(topics.models())) {
            keepLatest(models, AvroCodec.decodeModel(release.value));
          } else if (release.publicTopic.equals(topics.rounds())) {
            RoundAnnouncement a = AvroCodec.decodeAnnouncement(release.value);
            LedgerFloor.Announced previous = announced.get(release.jobId);
            // The first committed announcement of a round wins: a later one (another job's) was
            // withheld from the public topic. A budget-spent record opens nothing: the ledger's
            // BUDGET_EXHAUSTED entry is what a start reads the exhaustion from.
            if (!a.getBudgetSpent() && (previous == null || a.getRound() > previous.round())) {
              announced.put(
                  release.jobId,
                  new LedgerFloor.Announced(
                      a.getRound(),
                      InternalRelease.longHeader(record, InternalRelease.OPENED_HEADER),
                      a.getDeadlineMillis(),
                      InternalRelease.FIXED_SCHEDULE.equals(
                          InternalRelease.textHeader(record, InternalRelease.SCHEDULE_HEADER))));
            }
          }
        });
    // The public rounds topic too (earlier versions announced there directly): a round number
    // public there is taken, even when its window is unknown.
    Map<String, Long> announcedPublicly = new HashMap<>();
    readAll(
        kafka,
        topics.rounds(),
        (key, value) -> {
          if (key != null && jobIds.contains(key)) {
            RoundAnnouncement a = AvroCodec.decodeAnnouncement(value);
            if (!a.getBudgetSpent()) {
              announcedPublicly.merge(key, a.getRound(), Math::max);
            }
          }
        });
    // The public models topic too: versions before the releases topic published there directly,
    // so after an upgrade a job's latest model may be only there.
    readAll(
        kafka,
        topics.models(),
        (key, value) -> {
          if (key != null && specs.stream().anyMatch(s -> s.jobId().equals(key))) {
            keepLatest(models, AvroCodec.decodeModel(value));
          }
        });
    Map<String, LedgerFloor> floors = new HashMap<>();
    for (JobSpec spec : specs) {
      String job = spec.jobId();
      GlobalModel m = models.get(job);
      long modelRound = m == null ? -1 : m.getRound();
      long released = lastReleased.getOrDefault(job, -1L);
      // An exhausted job never uses its model again: nothing to guess.
      if (released > modelRound && !exhausted.getOrDefault(job, false)) {
        // Going on from an older model (or the initial weights) would be a guess: refuse.
        throw new IllegalStateException(
            "job "
                + job
                + ": the ledger topic "
                + topics.ledger()
                + " records round "
                + released
                + " as released, but the latest model of this job on "
                + topics.releases()
                + " (where committed releases wait to be published) and on "
                + topics.models()
                + " is "
                + (m == null ? "missing" : "of round " + modelRound)
                + "; refusing to continue from an older model. Restore that topic (it must be"
                + " compacted, never expire), or start the training under a new jobId");
      }
      requireCharged(job, released, modelRound, topics);
      requireSameQuery(spec, m);
      long chargedThrough = lastRound.containsKey(job) ? lastRound.get(job)[0] : 0;
      LedgerFloor.Announced latest = announced.get(job);
      floors.put(
          job,
          new LedgerFloor(
              LedgerCodec.write(charged.ledger(job)),
              Math.max(
                  chargedThrough,
                  Math.max(
                      latest == null ? 0 : latest.round(),
                      announcedPublicly.getOrDefault(job, 0L))),
              exhausted.getOrDefault(job, false),
              m == null ? -1 : m.getRound(),
              m == null ? null : Tensors.flatten(m.getTensors()),
              chargedThrough,
              latest == null || latest.openedMillis() < 0 ? null : latest,
              lastCharge.get(job),
              nextClipNorm.getOrDefault(job, 0.0),
              deployment(job, ledgerDeployment, releasedDeployment)));
    }
    return new Reconciled(floors, latestRun[0]);
  }

  /**
   * A job's released rounds were charged for one query: its blocks' shares and sensitivities fix
   * each statistic's noise and its epsilon alone, and each model's tensors are that query's sums.
   * Going on under another query (blocks added, bounds, rows or weights changed), or switching
   * between training and statistics, would state per-statistic epsilons the charges do not bear and
   * scale a round's sums by another query's factors: refused, naming what differs.
   */
  static void requireSameQuery(JobSpec spec, GlobalModel latest) {
    if (latest == null || latest.getRound() == 0) {
      return;
    }
    String released = StatisticsQueries.describe(latest.getStatistics());
    String ours = StatisticsQueries.describe(spec);
    if (!released.equals(ours)) {
      throw new IllegalStateException(
          "job "
              + spec.jobId()
              + ": its released rounds were charged as "
              + released
              + ", but this spec asks for "
              + ours
              + "; a job's query cannot change mid-run (each statistic's noise and epsilon"
              + " alone follow from it). Keep the spec the job started with, or give the new"
              + " query another jobId");
    }
  }

  /**
   * The nonce the topics record for {@code job}, or a fresh one when they record none: a new
   * deployment (or one from a version without nonces, whose later records then carry this one).
   * Topics deleted and recreated record none, so their rounds never get an earlier deployment's
   * keyed noise again, whatever state a restored savepoint brings.
   */
  private static String deployment(
      String job, Map<String, String> ledgerDeployment, Map<String, String> releasedDeployment) {
    String recorded = ledgerDeployment.getOrDefault(job, releasedDeployment.get(job));
    return recorded != null ? recorded : Deployment.fresh();
  }

  /**
   * A released model of round r &gt; 0 is written in the same transaction as round r's RELEASED
   * ledger entry. If the ledger lacks it, the ledger topic was deleted, renamed or expired: going
   * on would restart the budget from zero under a model that already spent it. Refuse.
   */
  public static void requireCharged(
      String job, long lastReleasedInLedger, long modelRound, JobSpec.Topics topics) {
    if (modelRound > 0 && lastReleasedInLedger < modelRound) {
      throw new IllegalStateException(
          ("job %s: its latest model (on %s or %s) is of round %d, but the ledger topic %s records"
                  + " %s; refusing to start with a budget that forgets spent rounds. Restore the"
                  + " ledger topic (delete policy, infinite retention) or start the training under a"
                  + " new jobId")
              .formatted(
                  job,
                  topics.releases(),
                  topics.models(),
                  modelRound,
                  topics.ledger(),
                  lastReleasedInLedger < 0
                      ? "no released round"
                      : "round " + lastReleasedInLedger + " as its latest release"));
    }
  }

  private static void keepLatest(Map<String, GlobalModel> models, GlobalModel m) {
    GlobalModel previous = models.get(m.getJobId());
    if (previous == null || m.getRound() >= previous.getRound()) {
      models.put(m.getJobId(), m);
    }
  }

  /**
   * What the public topics hold now, per {@code topic/jobId}: the latest round and its bytes'
   * digest. A publisher that starts without state publishes nothing at or below it.
   */
  public static Map<String, PublicRounds.Position> readPublished(
      KafkaConnection kafka, List<JobSpec> specs) {
    JobSpec.Topics topics = specs.get(0).topics();
    Map<String, PublicRounds.Position> published = new HashMap<>();
    for (String topic : topics.publicTopics()) {
      readAll(
          kafka,
          topic,
          (key, value) -> {
            if (key == null || specs.stream().noneMatch(s -> s.jobId().equals(key))) {
              return;
            }
            long round =
                topic.equals(topics.models())
                    ? AvroCodec.decodeModel(value).getRound()
                    : AvroCodec.decodeAnnouncement(value).getRound();
            PublicRounds.Position at = published.get(topic + "/" + key);
            if (at == null || round >= at.round) {
              published.put(
                  topic + "/" + key,
                  new PublicRounds.Position(round, PublishFunction.digest(value)));
            }
          });
    }
    return published;
  }

  /**
   * The ledger topic's charged rounds per job, counted per mechanism in the order each mechanism
   * first appears. Each job's ledger is built once from the counts: reading n entries costs O(n)
   * time and memory proportional to the number of mechanisms, not O(n^2) as appending to a ledger
   * per entry once did.
   */
  static final class ChargedRounds {
    private final Map<String, Map<PrivacyEvent, Long>> counts = new HashMap<>();

    /** Adds {@code charged}'s rounds to the job's count for its mechanism. */
    void add(String job, PrivacyEvent charged) {
      PrivacyEvent oneRound =
          new PrivacyEvent(charged.kind(), charged.noiseMultiplier(), charged.samplingRate(), 1);
      counts
          .computeIfAbsent(job, k -> new LinkedHashMap<>())
          .merge(oneRound, charged.count(), Math::addExact);
    }

    /** The job's ledger, composed by count; empty for a job with no charged round. */
    PrivacyLedger ledger(String job) {
      Map<PrivacyEvent, Long> byMechanism = counts.getOrDefault(job, Map.of());
      List<PrivacyEvent> events = new ArrayList<>(byMechanism.size());
      byMechanism.forEach((round, count) -> events.add(round.times(count)));
      return new PrivacyLedger(events);
    }
  }

  /** Reads every committed record of {@code topic} that exists now. */
  private static void readAll(
      KafkaConnection kafka, String topic, BiConsumer<String, byte[]> handle) {
    readRecords(
        kafka,
        topic,
        r ->
            handle.accept(
                r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8), r.value()));
  }

  /** Reads every committed record of {@code topic} that exists now, headers included. */
  private static void readRecords(
      KafkaConnection kafka, String topic, Consumer<ConsumerRecord<byte[], byte[]>> handle) {
    Properties props = kafka.clientProperties();
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "privagg-reconcile-" + UUID.randomUUID());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 << 20);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.currentTimeMillis() + 120_000;
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException(
              "could not read "
                  + topic
                  + " to its end within 2 minutes; refusing to start without the ledger");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
          handle.accept(r);
        }
      }
    }
  }
}
