package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.rejects;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.spec.JobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A round that reaches {@code rounds.maxClients} admits whichever clients were processed first, and
 * the order across partitions is a race: a replay may admit others. With keyed noise the two
 * releases must then not share their noise, or their difference would be the members' updates
 * without noise. The same members in any order still give the same bytes.
 */
class FullRoundTest {
  private static final float[] A = {0.1f, 0f, 0f};
  private static final float[] B = {0f, 0.6f, 0f};
  private static final float[] C = {0f, 0f, 0.8f};

  @Test
  void fullRoundsWithOtherMembers_getOtherNoise_sameMembersInAnyOrder_theSameBytes(
      @TempDir Path dir) throws Exception {
    Path key = dir.resolve("noise.key");
    Files.writeString(key, "ab".repeat(32) + "\n");
    JobSpec spec =
        JobFixtures.spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: keyed, keyFile: "
                + key
                + "}",
            "maxClients: 2");

    float[] ab = release(spec, List.of("a", "b", "c")); // c turned away
    float[] ba = release(spec, List.of("b", "a", "c")); // same members, other order
    float[] ca = release(spec, List.of("c", "a", "b")); // b turned away

    assertThat(ba).containsExactly(ab);
    // Shared noise would make ab - ca exactly (B - C) / m = (0, 0.3, -0.4).
    float[] diff = new float[3];
    for (int i = 0; i < 3; i++) {
      diff[i] = ab[i] - ca[i];
    }
    assertThat(Math.abs(diff[1] - 0.3f) + Math.abs(diff[2] + 0.4f) + Math.abs(diff[0]))
        .as("difference %s of two full rounds with other members", java.util.Arrays.toString(diff))
        .isGreaterThan(0.01f);
  }

  private static float[] release(JobSpec spec, List<String> order) throws Exception {
    var harness =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new RoundAggregator(List.of(spec), java.util.Map.of())),
            (DecodedUpdate u) -> u.jobId,
            (String id) -> id,
            Types.STRING);
    harness.setProcessingTime(JobFixtures.T0);
    harness.open();
    harness.processElement2(JOB, 0);
    long time = 1;
    for (String client : order) {
      float[] v = client.equals("a") ? A : client.equals("b") ? B : C;
      harness.processElement1(update(client, 1, v[0], v[1], v[2]), time++);
    }
    harness.processBothWatermarks(new Watermark(TIMEOUT));
    List<OutboundRecord> out = new ArrayList<>(harness.extractOutputValues());
    harness.close();
    assertThat(rejects(out))
        .singleElement()
        .satisfies(r -> assertThat(r.getClientId()).isEqualTo(order.get(2)));
    return weights(models(out).get(1));
  }
}
