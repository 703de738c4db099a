package dev.privagg.job.publish;

import dev.privagg.io.AvroCodec;
import dev.privagg.job.InternalRelease;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.state.StateSerializers;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies committed releases from the internal releases topic to the public models and rounds
 * topics, byte for byte, as {@link PublicRounds} decides. Its input is read with read_committed, so
 * an aborted transaction's copy (a release recomputed after a failure) never reaches a public
 * topic. Keyed by public topic and job.
 */
public final class PublishFunction
    extends KeyedProcessFunction<String, InternalRelease, OutboundRecord> {
  private static final Logger LOG = LoggerFactory.getLogger(PublishFunction.class);

  private final Set<String> publicTopics;
  private final Set<String> jobIds;
  private final Map<String, PublicRounds.Position> published;
  private final PublicRounds.Run run;
  private final String self;
  private transient ValueState<PublicRounds.Position> position;
  private transient PublishMetrics metrics;

  /**
   * @param published what the public topics already held at submission, per {@code topic/jobId}:
   *     the floor of a publisher that starts without state
   * @param run this submission
   */
  public PublishFunction(
      Set<String> publicTopics,
      Set<String> jobIds,
      Map<String, PublicRounds.Position> published,
      PublicRounds.Run run) {
    this.publicTopics = Set.copyOf(publicTopics);
    this.jobIds = Set.copyOf(jobIds);
    this.published = new HashMap<>(published);
    this.run = run;
    this.self = run.encode();
  }

  @Override
  public void open(OpenContext context) {
    position =
        getRuntimeContext()
            .getState(
                new ValueStateDescriptor<>(
                    "published-position", StateSerializers.PUBLISHED_POSITION));
    metrics = new PublishMetrics(getRuntimeContext().getMetricGroup(), jobIds);
  }

  @Override
  public void processElement(InternalRelease release, Context ctx, Collector<OutboundRecord> out)
      throws Exception {
    if (!publicTopics.contains(release.publicTopic) || !jobIds.contains(release.jobId)) {
      return; // another job's, or a topic this spec no longer publishes to
    }
    PublicRounds.Position at = position.value();
    PublicRounds.Position onTopic = published.get(release.positionKey());
    if (at == null) {
      at = onTopic == null ? new PublicRounds.Position() : onTopic;
    } else if (onTopic != null && onTopic.round > at.round) {
      // Restored from an older savepoint: the public topic moved on since.
      at.round = onTopic.round;
      at.digest = onTopic.digest;
    }
    if (at.round >= release.round && AvroCodec.isBudgetSpent(release.value)) {
      // Says only that no later round opens: never worth a conflict over a public round number.
      LOG.info(
          "job {}: budget-spent record for round {} not published: round {} is public already",
          release.jobId,
          release.round,
          at.round);
      return;
    }
    PublicRounds.Run writer = PublicRounds.Run.parse(release.run);
    PublicRounds.Verdict verdict =
        PublicRounds.decide(at, run, writer, release.round, digest(release.value));
    position.update(at);
    switch (verdict) {
      case PUBLISH -> {
        metrics.published(release.jobId);
        out.collect(
            new OutboundRecord(
                release.publicTopic,
                release.jobId.getBytes(StandardCharsets.UTF_8),
                release.value));
      }
      case DUPLICATE, OLDER_ROUND -> {}
      case CONFLICT, OLDER_RUN, TAINTED_RUN -> {
        metrics.withheld(release.jobId);
        if (verdict == PublicRounds.Verdict.CONFLICT && release.run.equals(self)) {
          throw new SuppressRestartsException(
              new IllegalStateException(
                  ("job id %s: this Flink job (run %s) computed round %d again with other bytes"
                          + " than the public release, which another Flink job must have"
                          + " written; this job stops for good. Run one Flink job per job id")
                      .formatted(release.jobId, self, release.round)));
        }
        LOG.error(
            "job {}: withheld a release of round {} for {} written by run {}: {}",
            release.jobId,
            release.round,
            release.publicTopic,
            release.run,
            switch (verdict) {
              case CONFLICT -> "round " + release.round + " is already public with other bytes";
              case TAINTED_RUN -> "that run conflicted with a public round before";
              default -> "a newer run (" + at.owner + ") serves this job id";
            });
      }
      case SUPERSEDED ->
          throw new SuppressRestartsException(
              new IllegalStateException(
                  ("job id %s is now served by another Flink job (run %s); this one (run %s)"
                          + " stops for good, because two jobs serving one job id would each"
                          + " spend its privacy budget. Run one Flink job per job id; to move a"
                          + " job, stop it with a savepoint and submit from that savepoint")
                      .formatted(release.jobId, at.owner, self)));
    }
  }

  public static byte[] digest(byte[] value) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(value);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
    }
  }
}
