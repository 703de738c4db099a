package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.models;
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
 * Where processing order across partitions decides a round's members (a full round, early close,
 * two updates under one client id), a replay may admit other members than the first run. With keyed
 * noise the two releases must then not share their noise, or their difference would be the members'
 * updates without noise. The same members in any order still give the same bytes.
 */
class MembershipRaceTest {
  private static final float[] A = {0.1f, 0f, 0f};
  private static final float[] B = {0f, 0.6f, 0f};
  private static final float[] C = {0f, 0f, 0.8f};

  @TempDir Path dir;

  @Test
  void fullRound_otherMembersGetOtherNoise_sameMembersTheSameBytes() throws Exception {
    JobSpec spec = keyedSpec("maxClients: 2");
    float[] ab = release(spec, List.of(u("a", A), u("b", B), u("c", C))); // c turned away
    assertThat(release(spec, List.of(u("b", B), u("a", A), u("c", C)))).containsExactly(ab);
    float[] ca = release(spec, List.of(u("c", C), u("a", A), u("b", B))); // b turned away
    assertNoiseDiffers(ab, ca, B, C);
  }

  @Test
  void earlyClose_otherFirstMembersGetOtherNoise() throws Exception {
    JobSpec spec = keyedSpec("closeEarly: true");
    float[] ab = release(spec, List.of(u("a", A), u("b", B), u("c", C))); // closes at a, b
    float[] ca = release(spec, List.of(u("c", C), u("a", A), u("b", B))); // closes at c, a
    assertNoiseDiffers(ab, ca, B, C);
  }

  @Test
  void squattedClientId_whicheverCopyCameFirst_getsItsOwnNoise() throws Exception {
    JobSpec spec = keyedSpec("");
    // The victim sends A as "a"; a squatter sends C as "a" too, on another partition.
    float[] victimFirst = release(spec, List.of(u("a", A), u("b", B), u("a", C)));
    float[] squatterFirst = release(spec, List.of(u("a", C), u("b", B), u("a", A)));
    assertNoiseDiffers(victimFirst, squatterFirst, A, C);
  }

  private JobSpec keyedSpec(String rounds) throws Exception {
    Path key = dir.resolve("noise.key");
    Files.writeString(key, "ab".repeat(32) + "\n");
    return JobFixtures.spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: keyed, keyFile: " + key + "}",
        rounds);
  }

  /** Shared noise would make {@code x - y} exactly {@code (onlyInX - onlyInY) / m}, m = 2. */
  private static void assertNoiseDiffers(float[] x, float[] y, float[] onlyInX, float[] onlyInY) {
    double distance = 0;
    for (int i = 0; i < 3; i++) {
      distance += Math.abs((x[i] - y[i]) - (onlyInX[i] - onlyInY[i]) / 2);
    }
    assertThat(distance).as("distance from a noise-free difference").isGreaterThan(0.01);
  }

  private static DecodedUpdate u(String client, float[] v) {
    return update(client, 1, v[0], v[1], v[2]);
  }

  private static float[] release(JobSpec spec, List<DecodedUpdate> order) throws Exception {
    var harness =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new RoundAggregator(List.of(spec), java.util.Map.of())),
            (DecodedUpdate x) -> x.jobId,
            (String id) -> id,
            Types.STRING);
    harness.setProcessingTime(JobFixtures.T0);
    harness.open();
    harness.processElement2(JOB, 0);
    long time = 1;
    for (DecodedUpdate update : order) {
      harness.processElement1(update, time++);
    }
    harness.processBothWatermarks(new Watermark(TIMEOUT));
    List<OutboundRecord> out = new ArrayList<>(harness.extractOutputValues());
    harness.close();
    return weights(models(out).get(1));
  }
}
