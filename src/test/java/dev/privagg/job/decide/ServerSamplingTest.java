package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.ClosedRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Server-side Poisson sampling against what the ledger charges for it: the accounting must match
 * the selection actually done ("Accounting and batch selection mismatch", jax_privacy's pitfalls).
 */
class ServerSamplingTest {
  private static final int CLIENTS = 4000;
  private static final double RATE = 0.2;

  @Test
  void withFreshDraws_everyRetryIsADuplicate_andTheDroppedCountAgainstTheCap() {
    // The secure source draws afresh each time: a retry would buy a second draw, so every client
    // seen is remembered and takes a place, the dropped ones included.
    JobSpec spec =
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\n"
                + "sampling: {mode: server-poisson, rate: 0.5}",
            "maxClients: 300");
    LifecycleDriver driver = LifecycleDriver.recording();
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
    long offset = 0;
    for (int c = 0; c < 400; c++) {
      driver.read(readFrom(0, offset++, update("c" + c, 1, 0.1f, 0f, 0f)), 1 + c);
    }
    for (int c = 0; c < 300; c++) {
      driver.read(readFrom(1, offset++, update("c" + c, 1, 0.1f, 0f, 0f)), 500 + c);
    }
    driver.advanceTo(TIMEOUT);
    LifecycleFakes.Recorder decided = driver.decided;
    assertThat(decided.rejects.stream().filter(r -> r.endsWith(" ROUND_FULL"))).hasSize(100);
    assertThat(decided.rejects.stream().filter(r -> r.endsWith(" DUPLICATE_CLIENT"))).hasSize(300);
  }

  @Test
  void eachUpdateIsKeptWithTheChargedRate_byItsOwnDraw_andARetryDrawsTheSame() {
    JobSpec spec =
        spec(
            "noiseMultiplier: 1.0\nbudgetEpsilon: 1000\nnoise: {source: seeded, seed: 11}\n"
                + "sampling: {mode: server-poisson, rate: "
                + RATE
                + "}",
            "");
    LifecycleDriver driver = LifecycleDriver.recording();
    driver.start(new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE), 0);
    long offset = 0;
    for (int c = 0; c < CLIENTS; c++) {
      driver.read(readFrom(0, offset++, update("c" + c, 1, 0.1f, 0f, 0f)), 1 + c % 900);
    }
    // Every client tries again in the same round: a retry must not buy a second draw.
    for (int c = 0; c < CLIENTS; c++) {
      driver.read(readFrom(1, offset++, update("c" + c, 1, 0.1f, 0f, 0f)), 901 + c % 90);
    }
    driver.advanceTo(TIMEOUT);
    LifecycleFakes.Recorder decided = driver.decided;

    // Kept: exactly the clients whose own draw for (job, round 1, client) fell below the rate.
    List<String> expected = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      if (DeploymentNoise.sampled(spec, null, "c" + c, 1)) {
        expected.add("c" + c);
      }
    }
    assertThat(decided.admitted).containsExactlyInAnyOrderElementsOf(expected);
    // At the charged rate: within 5 standard errors (sqrt(4000 * 0.2 * 0.8) = 25.3 updates; a
    // correct sampler fails this with probability 6e-7, and the seed is fixed).
    assertThat((double) decided.admitted.size()).isBetween(800 - 5 * 25.3, 800 + 5 * 25.3);

    // A retry of a kept client is a duplicate; a dropped one draws the same again (the seeded
    // draw is a function of job, round and client) and is left out as silently as the first
    // time: it takes no place under maxClients, so a population larger than planned does not fill
    // a round with clients the draw drops. Only the operator-internal rejects topic tells the two
    // apart, and the operator reads the updates themselves.
    assertThat(decided.rejects)
        .hasSize(expected.size())
        .allMatch(r -> r.endsWith(" DUPLICATE_CLIENT"));

    // The round is charged as the Poisson-sampled Gaussian at that rate, with the count kept
    // apart from anything public.
    ClosedRound round = decided.closed.get(0);
    assertThat(round.charge()).isEqualTo(PrivacyEvent.sampledGaussian(1.0, RATE, 1));
    assertThat(round.contributions()).isEqualTo(decided.admitted.size());
  }
}
