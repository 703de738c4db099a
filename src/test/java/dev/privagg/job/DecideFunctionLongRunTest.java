package dev.privagg.job;

import static dev.privagg.job.JobFixtures.JOB;
import static dev.privagg.job.JobFixtures.TIMEOUT;
import static dev.privagg.job.JobFixtures.announcements;
import static dev.privagg.job.JobFixtures.ledger;
import static dev.privagg.job.JobFixtures.models;
import static dev.privagg.job.JobFixtures.spec;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A job that runs for thousands of rounds: the accounting at each round close and open must not
 * grow with the round number, or a long job falls behind its deadlines. 5,000 rounds run in a few
 * seconds only if the ledger stays composed by count and epsilon does not recompute the RDP series.
 */
class DecideFunctionLongRunTest {
  private static final int ROUNDS = 5000;

  private RoundsHarness harness;

  @AfterEach
  void close() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

  @Test
  void fiveThousandRounds_areEachReleasedOnce_inOrder_withTheComposedEpsilon() throws Exception {
    // Sampled rounds (q = 0.5) are the accountant's costly case: fractional orders need a series.
    JobSpec spec =
        spec(
            "noiseMultiplier: 1.0\n"
                + "budgetEpsilon: .inf\n"
                + "sampling: {mode: server-poisson, rate: 0.5}\n"
                + "noise: {source: seeded, seed: 7}",
            "");
    harness = new RoundsHarness(List.of(spec), Map.of());
    harness.setProcessingTime(JobFixtures.T0);
    harness.open();
    harness.processElement2(JOB, 0);

    List<Long> modelRounds = new ArrayList<>();
    List<Long> announcedRounds = new ArrayList<>();
    List<LedgerEntry> entries = new ArrayList<>();
    collect(modelRounds, announcedRounds, entries);
    for (long r = 1; r <= ROUNDS; r++) {
      long opened = (r - 1) * TIMEOUT;
      if (r % 50 == 0) { // a few updates in some rounds; the sampling drops about half
        for (int c = 0; c < 3; c++) {
          harness.processElement1(update("c" + c, r, 0.1f, 0f, 0f), opened + 1 + c);
        }
      }
      harness.processBothWatermarks(new Watermark(r * TIMEOUT)); // round r's deadline passes
      collect(modelRounds, announcedRounds, entries);
    }

    assertThat(modelRounds).hasSize(ROUNDS + 1);
    for (int r = 0; r <= ROUNDS; r++) {
      assertThat(modelRounds.get(r)).isEqualTo(r); // round 0 is the initial model
    }
    assertThat(entries).hasSize(ROUNDS);
    double previous = 0;
    for (int i = 0; i < ROUNDS; i++) {
      LedgerEntry entry = entries.get(i);
      assertThat(entry.getRound()).isEqualTo(i + 1);
      assertThat(entry.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
      assertThat(entry.getEpsilonSpent()).isGreaterThan(previous);
      previous = entry.getEpsilonSpent();
    }
    assertThat(announcedRounds).hasSize(ROUNDS + 1);
    assertThat(announcedRounds.get(0)).isEqualTo(1);
    assertThat(announcedRounds.get(ROUNDS)).isEqualTo(ROUNDS + 1);
    PrivacyEvent round = spec.roundCharge().event(1.0, 1);
    double allRounds =
        Accountant.named("rdp").epsilon(PrivacyLedger.of(round.times(ROUNDS)), 1e-5).epsilon();
    assertThat(entries.get(ROUNDS - 1).getEpsilonSpent()).isEqualTo(allRounds);
    assertThat(harness.numEventTimeTimers()).isEqualTo(1); // only round 5,001's deadline
  }

  private void collect(List<Long> modelRounds, List<Long> announcedRounds, List<LedgerEntry> out) {
    List<OutboundRecord> records = new ArrayList<>(harness.extractOutputValues());
    harness.getOutput().clear();
    models(records).forEach(m -> modelRounds.add(m.getRound()));
    announcements(records).forEach(a -> announcedRounds.add(a.getRound()));
    out.addAll(ledger(records));
  }
}
