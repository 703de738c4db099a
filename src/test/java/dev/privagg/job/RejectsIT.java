package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RejectedUpdate;
import dev.privagg.avro.RoundAnnouncement;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.Tensor;
import dev.privagg.client.ClientUpdates;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.spec.JobSpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * (c) One bad record of every reject category reaches the rejects topic with the right reason, the
 * job keeps running, and the released model is exactly the mean of the good updates.
 */
class RejectsIT extends KafkaFlinkTestBase {
  private static final String MODEL =
      """
      model:
        tensors:
          - {name: w, shape: [3]}
      rounds:
        timeout: 5s
        expectedClients: 2
      maxRecordBytes: 1024
      maxClientIdBytes: 16
      maxMetadataBytes: 64
      """;

  @Test
  void everyRejectCategory_goesToRejects_andTheModelIsUnchanged() throws Exception {
    JobSpec a =
        spec(
            MODEL
                + "privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}");
    // Job b's budget cannot pay for one round, so it is exhausted from the start.
    JobSpec b =
        siblingSpec(
            a,
            a.jobId() + "-b",
            MODEL
                + "privacy: {clipNorm: 1.0, noiseMultiplier: 0.5, delta: 1.0e-5, budgetEpsilon: 0.1}");
    startJob(List.of(a, b), 2);
    awaitRound(a, 1);
    String topic = a.topics().updates();

    byte[] garbage = "hello, not avro".getBytes(StandardCharsets.UTF_8);
    produce(topic, "x", garbage);
    produce(
        topic,
        "x",
        AvroCodec.encode(new RoundAnnouncement("x", 1L, 0L, 0L, false))); // other schema
    produce(
        topic,
        "x",
        ClientUpdates.encode(
            siblingSpec(
                a,
                "no-such-job",
                MODEL
                    + "privacy: {clipNorm: 1, noiseMultiplier: 1, delta: 1.0e-5, budgetEpsilon: 1}"),
            1,
            "c9",
            new float[][] {{0f, 0f, 0f}}));
    produce(topic, "x", wrongShape(a));
    produce(topic, "x", ClientUpdates.encode(a, 1, "c8", new float[][] {{0f, Float.NaN, 0f}}));
    produce(
        topic,
        "c1",
        ClientUpdates.encode(a, 1, "c1", new float[][] {{0.3f, 0.4f, 0f}}),
        ClientUpdates.encode(a, 1, "c1", new float[][] {{0.9f, 0.9f, 0.9f}})); // duplicate
    produce(topic, "x", ClientUpdates.encode(a, 0, "c7", new float[][] {{1f, 1f, 1f}})); // stale
    produce(topic, "x", ClientUpdates.encode(a, 7, "c6", new float[][] {{1f, 1f, 1f}})); // future
    produce(
        topic, "x", ClientUpdates.encode(b, 1, "c5", new float[][] {{1f, 1f, 1f}})); // b: no budget
    produce(topic, "x", tooLarge(a));
    produce(
        topic,
        "x",
        ClientUpdates.encode(a, 1, "c".repeat(17), new float[][] {{1f, 1f, 1f}})); // id cap 16
    produce(topic, "x", withMetadata(a, "c12", "m".repeat(100))); // metadata cap 64
    produce(
        topic,
        "c2",
        ClientUpdates.encode(a, 1, "c2", new float[][] {{0f, 0f, 3f}})); // clipped to 1

    // A secure-aggregation message to a job that aggregates in plaintext.
    byte[] key = new byte[32];
    key[0] = 9; // X25519's base point: a valid public key
    produce(
        topic,
        "c13",
        AvroCodec.encode(
            new SecureMessage(
                a.jobId(),
                1L,
                ByteBuffer.wrap(new byte[16]),
                "c13",
                new AdvertiseKeys(
                    ByteBuffer.wrap(key),
                    ByteBuffer.wrap(key),
                    ByteBuffer.wrap(new byte[32]),
                    ByteBuffer.wrap(new byte[32])))));

    // ROUND_FULL is covered by DecideFunctionTest, CLIENT_TIMESTAMP by ProducerTimestampIT,
    // correlated noise's PARTICIPATION_LIMIT, TOO_SOON and (bandmf's) NOT_IN_GROUP by
    // CorrelatedNoiseIT, and a secure job's SECURE_PROTOCOL by SecureMessageValidatorTest and
    // SecurePhasesTest.
    EnumSet<RejectReason> expected =
        EnumSet.complementOf(
            EnumSet.of(
                RejectReason.ROUND_FULL,
                RejectReason.CLIENT_TIMESTAMP,
                RejectReason.PARTICIPATION_LIMIT,
                RejectReason.TOO_SOON,
                RejectReason.NOT_IN_GROUP,
                RejectReason.SECURE_PROTOCOL));
    List<RejectedUpdate> rejects =
        rejectsUntil(
            a,
            l ->
                l.stream().map(RejectedUpdate::getReason).collect(Collectors.toSet()).size()
                    == expected.size(),
            Duration.ofSeconds(60));
    Map<RejectReason, RejectedUpdate> byReason =
        rejects.stream().collect(Collectors.toMap(RejectedUpdate::getReason, r -> r, (x, y) -> x));
    assertThat(byReason.keySet()).isEqualTo(expected);
    assertThat(rejects).hasSize(expected.size()); // exactly one each
    assertThat(byReason.get(RejectReason.CLIENT_ID_TOO_LONG).getClientId()).isNull();
    assertThat(byReason.get(RejectReason.METADATA_TOO_LARGE).getClientId()).isEqualTo("c12");
    assertThat(byReason.get(RejectReason.UNDECODABLE).getOriginalBytes().array())
        .isEqualTo(garbage);
    assertThat(byReason.get(RejectReason.RECORD_TOO_LARGE).getOriginalBytes()).isNull();
    assertThat(byReason.get(RejectReason.DUPLICATE_CLIENT).getClientId()).isEqualTo("c1");
    assertThat(byReason.get(RejectReason.BUDGET_EXHAUSTED).getJobId()).isEqualTo(b.jobId());
    assertThat(rejects)
        .allSatisfy(
            r -> {
              assertThat(r.getSourceTopic()).isEqualTo(topic);
              assertThat(r.getDetail()).isNotBlank();
            });

    float[] w = weights(awaitModel(a, 1));
    // (0.3, 0.4, 0) + (0, 0, 1 - 2^-20), over m = 2.
    assertThat((double) w[0]).isCloseTo(0.15, within(1e-6));
    assertThat((double) w[1]).isCloseTo(0.2, within(1e-6));
    assertThat((double) w[2]).isCloseTo(0.5, within(1e-6));
    awaitRound(a, 2); // the job keeps going
  }

  private static byte[] wrongShape(JobSpec spec) {
    Tensor t = new Tensor("w", List.of(4), Float32.write(new float[4], 0, 4));
    return AvroCodec.encode(new ClientUpdate(spec.jobId(), 1L, "c10", List.of(t), null));
  }

  private static byte[] withMetadata(JobSpec spec, String client, String note) {
    Tensor t = new Tensor("w", List.of(3), Float32.write(new float[3], 0, 3));
    return AvroCodec.encode(
        new ClientUpdate(spec.jobId(), 1L, client, List.of(t), Map.of("note", note)));
  }

  private static byte[] tooLarge(JobSpec spec) {
    char[] filler = new char[2000];
    Arrays.fill(filler, 'x');
    Tensor t = new Tensor("w", List.of(3), Float32.write(new float[3], 0, 3));
    return AvroCodec.encode(
        new ClientUpdate(spec.jobId(), 1L, "c11", List.of(t), Map.of("pad", new String(filler))));
  }
}
