package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.rejects;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.spec.JobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Membership is a pure function of the updates log (design.md invariant 10): one log, read in any
 * order across its partitions and with the watermark advancing at any legal moment, gives the same
 * output records, byte for byte (keyed noise), where processing order used to decide: a deadline
 * with updates on both sides, early close, a full round, two updates under one client id.
 */
class MembershipRaceTest {
  private static final float[] A = {0.1f, 0f, 0f};
  private static final float[] B = {0f, 0.6f, 0f};
  private static final float[] C = {0f, 0f, 0.8f};
  private static final int READ_ORDERS = 30;

  @TempDir Path dir;

  @Test
  void deadlineClose_anyReadOrder_sameBytes() throws Exception {
    Log log =
        new Log()
            .append(0, 100, "a", 1, A)
            .append(0, TIMEOUT + 5, "c", 2, C) // held while partition 1 lags, then round 2's
            .append(1, 300, "e", 2, B) // stamped in round 1: FUTURE_ROUND
            .append(1, TIMEOUT - 1, "b", 1, B) // the deadline's last millisecond
            .append(1, TIMEOUT, "d", 1, A); // at the deadline: STALE_ROUND
    List<OutboundRecord> out = sameBytesInEveryReadOrder(keyedSpec(""), log, 2 * TIMEOUT);
    assertThat(ledger(out)).extracting(e -> e.getContributions()).containsExactly(2L, 1L);
    assertThat(reasons(out)).containsExactly(RejectReason.FUTURE_ROUND, RejectReason.STALE_ROUND);
  }

  @Test
  void earlyClose_anyReadOrder_sameBytes() throws Exception {
    Log log =
        new Log()
            .append(0, 50, "a", 1, A)
            .append(0, 50, "c", 1, C) // second in log order at 50: round 1 closes here (m = 2)
            .append(1, 50, "b", 1, B) // third: STALE_ROUND
            .append(1, 50, "d", 2, A) // after the close, but round 2 opens at 1's deadline: FUTURE
            .append(2, TIMEOUT + 40, "e", 2, B)
            .append(2, TIMEOUT + 60, "f", 2, C); // round 2's second: it closes at TIMEOUT + 60
    List<OutboundRecord> out =
        sameBytesInEveryReadOrder(keyedSpec("closeEarly: true"), log, 2 * TIMEOUT);
    assertThat(ledger(out)).extracting(e -> e.getContributions()).containsExactly(2L, 2L);
    assertThat(ledger(out))
        .extracting(e -> e.getTimestampMillis())
        .containsExactly(50L, TIMEOUT + 60);
    assertThat(reasons(out)).containsExactly(RejectReason.STALE_ROUND, RejectReason.FUTURE_ROUND);
  }

  @Test
  void fullRound_anyReadOrder_sameBytes() throws Exception {
    Log log =
        new Log()
            .append(2, 10, "d", 1, A) // earliest of all
            .append(0, 20, "a", 1, A)
            .append(1, 20, "b", 1, B) // ROUND_FULL: a and d came first
            .append(2, 20, "c", 1, C); // ROUND_FULL
    List<OutboundRecord> out = sameBytesInEveryReadOrder(keyedSpec("maxClients: 2"), log, TIMEOUT);
    assertThat(rejects(out))
        .extracting(RejectedUpdate::getClientId)
        .containsExactlyInAnyOrder("b", "c");
  }

  @Test
  void squattedClientId_anyReadOrder_sameBytes() throws Exception {
    // The victim sends A as "a"; a squatter sends C as "a" too, on another partition, at the same
    // broker millisecond; the first in (partition, offset) order is in, whichever is read first.
    Log log =
        new Log()
            .append(1, 20, "x", 1, B)
            .append(1, 30, "a", 1, C)
            .append(0, 30, "a", 1, A)
            .append(0, 31, "b", 1, B)
            .append(2, 25, "x", 1, C); // later than partition 1's "x": DUPLICATE_CLIENT
    List<OutboundRecord> out = sameBytesInEveryReadOrder(keyedSpec(""), log, TIMEOUT);
    assertThat(rejects(out))
        .extracting(r -> r.getClientId() + "@" + r.getSourcePartition())
        .containsExactly("x@2", "a@1");
  }

  @Test
  void otherMembers_onAnotherModelsTopic_getOtherNoise() throws Exception {
    // One job id and key published on two models topics, with other members: the releases must not
    // share their noise, or their difference would be (A - C) / m exactly. (On one models topic
    // only the first release of a round becomes public; see PublicRoundsTest.)
    JobSpec here = keyedSpec("");
    JobSpec elsewhere = keyedSpec("", "elsewhere.models");
    Log victim = new Log().append(0, 30, "a", 1, A);
    Log squatter = new Log().append(1, 30, "a", 1, C);
    float[] x = weights(models(run(here, victim, TIMEOUT, 0)).get(1));
    float[] y = weights(models(run(elsewhere, squatter, TIMEOUT, 0), "elsewhere.models").get(1));
    double distance = 0;
    for (int i = 0; i < 3; i++) {
      distance += Math.abs((x[i] - y[i]) - (A[i] - C[i]) / 2);
    }
    assertThat(distance).as("distance from a noise-free difference").isGreaterThan(0.01);
  }

  private JobSpec keyedSpec(String rounds) throws Exception {
    return keyedSpec(rounds, "privagg.models");
  }

  private JobSpec keyedSpec(String rounds, String modelsTopic) throws Exception {
    Path key = dir.resolve("noise.key");
    Files.writeString(key, "ab".repeat(32) + "\n");
    return JobFixtures.spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: keyed, keyFile: " + key + "}",
        rounds,
        "topics: {models: " + modelsTopic + "}");
  }

  /** Runs {@code log} in many read orders and returns the output all of them produced. */
  private static List<OutboundRecord> sameBytesInEveryReadOrder(JobSpec spec, Log log, long end)
      throws Exception {
    List<OutboundRecord> first = run(spec, log, end, 0);
    assertThat(models(first)).as("a released round").hasSizeGreaterThan(1);
    for (long seed = 1; seed < READ_ORDERS; seed++) {
      assertThat(bytes(run(spec, log, end, seed)))
          .as("output of read order %d", seed)
          .containsExactlyElementsOf(bytes(first));
    }
    return first;
  }

  private static List<RejectReason> reasons(List<OutboundRecord> out) {
    return rejects(out).stream().map(RejectedUpdate::getReason).toList();
  }

  /**
   * Each topic's records in order, topic after topic: the decider and the combiner write on their
   * own channels, so only the order within a topic is the job's.
   */
  private static List<String> bytes(List<OutboundRecord> out) {
    HexFormat hex = HexFormat.of();
    return out.stream()
        .sorted(java.util.Comparator.comparing((OutboundRecord r) -> r.topic))
        .map(r -> r.topic + " " + hex.formatHex(r.key) + " " + hex.formatHex(r.value))
        .toList();
  }

  /**
   * Reads the log's partitions in an order drawn from {@code seed} (each partition in its own
   * order), moving the watermark at random moments as far as is legal: to just before the earliest
   * record not read yet. Then event time reaches {@code end}.
   */
  private static List<OutboundRecord> run(JobSpec spec, Log log, long end, long seed)
      throws Exception {
    var harness = new RoundsHarness(List.of(spec), Map.of());
    harness.setProcessingTime(JobFixtures.T0);
    harness.open();
    harness.processElement2(JOB, 0);
    Random random = new Random(seed);
    List<List<Appended>> unread = new ArrayList<>();
    log.partitions.forEach(p -> unread.add(new ArrayList<>(p)));
    long watermark = Long.MIN_VALUE;
    while (unread.stream().anyMatch(p -> !p.isEmpty())) {
      List<List<Appended>> readable = unread.stream().filter(p -> !p.isEmpty()).toList();
      Appended next = readable.get(random.nextInt(readable.size())).remove(0);
      harness.processElement1(next.update(), next.timestamp());
      long legal =
          unread.stream()
              .filter(p -> !p.isEmpty())
              .mapToLong(p -> p.get(0).timestamp() - 1)
              .min()
              .orElse(end);
      if (random.nextBoolean() && legal > watermark) {
        watermark = legal;
        harness.processBothWatermarks(new Watermark(watermark));
      }
    }
    harness.processBothWatermarks(new Watermark(end));
    List<OutboundRecord> out = new ArrayList<>(harness.extractOutputValues());
    harness.close();
    return out;
  }

  private record Appended(long timestamp, DecodedUpdate update) {}

  /** An updates topic: per partition, records in offset order with non-decreasing broker time. */
  private static final class Log {
    final List<List<Appended>> partitions = new ArrayList<>();

    Log append(int partition, long timestamp, String client, long round, float[] v) {
      while (partitions.size() <= partition) {
        partitions.add(new ArrayList<>());
      }
      List<Appended> records = partitions.get(partition);
      if (!records.isEmpty() && records.get(records.size() - 1).timestamp() > timestamp) {
        throw new IllegalArgumentException("LogAppendTime never decreases within a partition");
      }
      DecodedUpdate update = update(client, round, v[0], v[1], v[2]);
      records.add(new Appended(timestamp, readFrom(partition, records.size(), update)));
      return this;
    }
  }
}
