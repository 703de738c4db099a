package dev.privagg.job;

import static dev.privagg.job.JobFixtures.weights;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.cli.CliTestAccess;
import dev.privagg.client.ClientUpdates;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NoiseAndBudgetIT extends KafkaFlinkTestBase {

  /**
   * (b) With seeded noise and all-zero updates, each coordinate of the released model is pure noise
   * / m, so its std over 4000 coordinates must be z * C / m. The sample std's relative standard
   * error is 1/sqrt(2 * 4000) = 1.1%; the test allows 5 standard errors (5.6%), a false-failure
   * probability below 1e-6 for a random seed (this one is fixed).
   */
  @Test
  void seededNoise_residualStd_isNoiseMultiplierTimesClipNormOverM() throws Exception {
    double z = 1.5;
    double c = 2.0;
    int m = 4;
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [4000]}
            rounds:
              timeout: 3s
              expectedClients: %d
            privacy:
              clipNorm: %s
              noiseMultiplier: %s
              delta: 1.0e-5
              budgetEpsilon: 1000
              noise: {source: seeded, seed: 20261122}
            """
                .formatted(m, c, z));
    startJob(spec, 2);
    awaitRound(spec, 1);
    byte[][] zeros = new byte[3][];
    for (int i = 0; i < 3; i++) {
      zeros[i] = ClientUpdates.encode(spec, 1, "c" + i, new float[][] {new float[4000]});
    }
    produce(spec.topics().updates(), null, zeros);
    GlobalModel model = awaitModel(spec, 1);
    float[] w = weights(model);
    double mean = 0;
    for (float v : w) {
      mean += v / (double) w.length;
    }
    double var = 0;
    for (float v : w) {
      var += (v - mean) * (v - mean) / (w.length - 1);
    }
    double expectedStd = z * c / m;
    assertThat(Math.sqrt(var) / expectedStd - 1).isBetween(-0.056, 0.056);
    assertThat(Math.abs(mean)).isLessThan(5 * expectedStd / Math.sqrt(w.length));
    assertThat(model.getPrivacy().getNoiseSource()).isEqualTo("seeded");
  }

  /**
   * (d) The number of rounds released before the budget stops them equals what {@code privagg
   * epsilon} says fits: epsilon(k rounds) <= budget < epsilon(k + 1 rounds).
   */
  @Test
  void roundsReleasedBeforeTheBudgetStops_matchPrivaggEpsilon() throws Exception {
    double z = 3.0;
    double budget = 3.0;
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds:
              timeout: 400ms
              expectedClients: 2
            privacy:
              clipNorm: 1.0
              noiseMultiplier: %s
              delta: 1.0e-5
              budgetEpsilon: %s
            """
                .formatted(z, budget));
    startJob(spec, 1);
    List<LedgerEntry> ledger =
        ledgerUntil(
            spec,
            l -> l.stream().anyMatch(e -> e.getOutcome() == LedgerOutcome.BUDGET_EXHAUSTED),
            Duration.ofSeconds(90));
    long released = ledger.stream().filter(e -> e.getOutcome() == LedgerOutcome.RELEASED).count();
    double epsK = CliTestAccess.epsilon(z, 1.0, released, 1e-5);
    double epsNext = CliTestAccess.epsilon(z, 1.0, released + 1, 1e-5);
    assertThat(released).isGreaterThan(1);
    assertThat(epsK).isLessThanOrEqualTo(budget);
    assertThat(epsNext).isGreaterThan(budget);
    // The ledger's last released epsilon is the accountant's for that many rounds.
    LedgerEntry last =
        ledger.stream()
            .filter(e -> e.getOutcome() == LedgerOutcome.RELEASED)
            .reduce((a, b) -> b)
            .orElseThrow();
    assertThat(last.getEpsilonSpent()).isEqualTo(epsK);
    List<GlobalModel> models =
        modelsUntil(spec, l -> l.size() >= released + 1, Duration.ofSeconds(10));
    assertThat(models).hasSize((int) released + 1);
  }
}
