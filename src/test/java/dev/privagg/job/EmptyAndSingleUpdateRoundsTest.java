package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.announcements;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.job.decide.DecideFunction;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.junit.jupiter.api.Test;

/**
 * A round with no update and the same round with one: the zero-sized batch of "Common Pitfalls in
 * DP Training" (jax_privacy). Both rounds must be released the same way, with the same public
 * shape, the same statement and the same denominator m; only the noisy values may differ, and only
 * by the one update's clipped contribution over m. The exact count is in the ledger alone.
 */
class EmptyAndSingleUpdateRoundsTest {
  private static final JobSpec SPEC =
      spec("noiseMultiplier: 1.0\nbudgetEpsilon: 100\nnoise: {source: seeded, seed: 7}", "");

  /** Round 1 of a fresh job, with the given updates; everything it outputs. */
  private static List<OutboundRecord> roundOne(DecodedUpdate... updates) throws Exception {
    Map<String, LedgerFloor> floors = Map.of();
    try (RoundsHarness harness =
        new RoundsHarness(new DecideFunction(List.of(SPEC), floors), List.of(SPEC), floors)) {
      harness.setProcessingTime(JobFixtures.T0);
      harness.open();
      harness.processElement2(JOB, 0);
      harness.getOutput().clear(); // round 0's model and round 1's announcement
      long at = 10;
      for (DecodedUpdate u : updates) {
        harness.processElement1(u, at++);
      }
      harness.processBothWatermarks(new Watermark(TIMEOUT));
      return new ArrayList<>(harness.extractOutputValues());
    }
  }

  private static OutboundRecord modelRecord(List<OutboundRecord> out) {
    return out.stream().filter(r -> r.topic.equals("privagg.models")).findFirst().orElseThrow();
  }

  @Test
  void noUpdateOrOne_releaseTheSameShapeAndStatement_andDifferOnlyByTheUpdateOverM()
      throws Exception {
    List<OutboundRecord> empty = roundOne();
    List<OutboundRecord> one = roundOne(update("only", 1, 0.3f, 0.4f, 0f)); // norm 0.5 < C = 1

    // Both rounds are released: one model each, one announcement of round 2 on model 1.
    assertThat(models(empty)).hasSize(1);
    assertThat(models(one)).hasSize(1);
    assertThat(announcements(one)).isEqualTo(announcements(empty));
    assertThat(announcements(one).get(0).getBaseModelRound()).isEqualTo(1);

    // The public record has the same size and the same privacy statement: nothing in it carries
    // the count.
    GlobalModel withNone = models(empty).get(0);
    GlobalModel withOne = models(one).get(0);
    assertThat(modelRecord(one).value).hasSameSizeAs(modelRecord(empty).value);
    assertThat(withOne.getPrivacy()).isEqualTo(withNone.getPrivacy());

    // The same noise (seeded) and the denominator m = 2, not the one update received.
    float[] a = weights(withNone);
    float[] b = weights(withOne);
    assertThat(b[0] - a[0]).isCloseTo(0.3f / 2, within(1e-5f));
    assertThat(b[1] - a[1]).isCloseTo(0.4f / 2, within(1e-5f));
    assertThat(b[2] - a[2]).isCloseTo(0f, within(1e-5f));

    // The exact count lives in the operator-internal ledger only.
    assertThat(ledger(empty).get(0).getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
    assertThat(ledger(empty).get(0).getContributions()).isZero();
    assertThat(ledger(one).get(0).getContributions()).isEqualTo(1);
    assertThat(ledger(one).get(0).getEpsilonSpent())
        .isEqualTo(ledger(empty).get(0).getEpsilonSpent());
    // The model states the epsilon the ledger charged for its round, and the charge behind it.
    assertThat(withOne.getPrivacy().getEpsilon()).isEqualTo(ledger(one).get(0).getEpsilonSpent());
    assertThat(withOne.getPrivacy().getChargedNoiseMultiplier())
        .isEqualTo(ledger(one).get(0).getChargedNoiseMultiplier());
  }
}
