package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.LedgerEntry;
import dev.privagg.avro.LedgerOutcome;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Budget never forgets: a job id started again from scratch continues from the ledger topic. */
class ReconcileIT extends KafkaFlinkTestBase {
  @Test
  void restartWithoutState_continuesTheLedger_andNeverRepublishesRoundZero() throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds:
              timeout: 500ms
              startGrace: 1s
              expectedClients: 2
            privacy:
              clipNorm: 1.0
              noiseMultiplier: 2.0
              delta: 1.0e-5
              budgetEpsilon: 100
            """);
    startJob(spec, 1);
    ledgerUntil(spec, l -> l.size() >= 3, Duration.ofSeconds(60));
    stopJobs();
    Thread.sleep(1000);
    long before =
        ledgerUntil(spec, l -> true, Duration.ofSeconds(5)).stream()
            .filter(e -> e.getOutcome() == LedgerOutcome.RELEASED)
            .count();

    startJob(spec, 1); // same job id and topics, no state
    List<LedgerEntry> ledger =
        ledgerUntil(spec, l -> l.size() >= before + 2, Duration.ofSeconds(60));
    // Round before+1 was announced (committed with round before's release) and its 500 ms window
    // passed while no job ran: its number is public, and a live run could have released it, so
    // the fresh run charges it as SKIPPED and goes on with the next number. Rounds charged keep
    // equal to the round number.
    LedgerEntry skipped = ledger.get((int) before);
    assertThat(skipped.getRound()).isEqualTo(before + 1);
    assertThat(skipped.getOutcome()).isEqualTo(LedgerOutcome.SKIPPED);
    LedgerEntry next = ledger.get((int) before + 1);
    assertThat(next.getRound()).isEqualTo(before + 2);
    assertThat(next.getOutcome()).isEqualTo(LedgerOutcome.RELEASED);
    PrivacyEvent round = spec.roundCharge().event(2.0, 1);
    assertThat(next.getEpsilonSpent())
        .isEqualTo(
            Accountant.named("rdp")
                .epsilon(PrivacyLedger.of(round.times(before + 2)), 1e-5)
                .epsilon());
    List<GlobalModel> models =
        modelsUntil(spec, l -> l.size() >= before + 2, Duration.ofSeconds(30));
    assertThat(models.stream().filter(m -> m.getRound() == 0)).hasSize(1);
    assertThat(models.stream().map(GlobalModel::getRound).distinct().count())
        .isEqualTo(models.size());
  }

  @Test
  void ledgerWithReleasesButNoModel_refusesToStart_insteadOfRestartingFromInitialWeights()
      throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds: {timeout: 5s, expectedClients: 2}
            privacy: {clipNorm: 1.0, noiseMultiplier: 2.0, delta: 1.0e-5, budgetEpsilon: 100}
            """);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
    // The ledger shows round 3 released; the models topic lost every model of the job.
    produceReleasedEntry(spec, 3);
    assertThatThrownBy(() -> startJob(spec, 1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("records round 3 as released, but the latest model of this job")
        .hasMessageContaining("is missing; refusing to continue from an older model");
  }

  @Test
  void upgradeFromAVersionThatPublishedModelsDirectly_continuesFromThePublicModel()
      throws Exception {
    JobSpec spec =
        spec(
            """
            model:
              tensors:
                - {name: w, shape: [3]}
            rounds: {timeout: 2s, startGrace: 1s, expectedClients: 2}
            privacy: {clipNorm: 1.0, noiseMultiplier: 2.0, delta: 1.0e-5, budgetEpsilon: 100}
            """);
    KafkaPreflight.ensureTopics(kafka.connection(), List.of(spec), 2);
    // What an earlier version left: round 3 charged and its model on the public topic, nothing
    // on the releases topic (it did not exist).
    for (long r = 1; r <= 3; r++) {
      produceReleasedEntry(spec, r);
    }
    float[] roundThree = {0.25f, -0.5f, 1f};
    produce(
        spec.topics().models(),
        spec.jobId(),
        Records.model(
                spec,
                3,
                roundThree,
                1.0,
                spec.privacy().clipNorm(),
                PrivacyLedger.of(spec.roundCharge().event(2.0, 3)),
                spec.roundCharge().event(2.0, 1),
                "secure",
                null)
            .value);

    startJob(spec, 1);
    assertThat(awaitRound(spec, 4).getBaseModelRound()).isEqualTo(3);
    GlobalModel next = awaitModel(spec, 4);
    assertThat(next.getPrivacy().getEpsilon())
        .isEqualTo(
            Accountant.named("rdp")
                .epsilon(PrivacyLedger.of(spec.roundCharge().event(2.0, 1).times(4)), 1e-5)
                .epsilon());
  }

  /** A ledger entry for round {@code round} released at z = 2, as an earlier run would write. */
  private void produceReleasedEntry(JobSpec spec, long round) {
    produce(
        spec.topics().ledger(),
        spec.jobId(),
        Records.ledger(
                spec,
                round,
                LedgerOutcome.RELEASED,
                spec.roundCharge().event(2.0, 1),
                1.0,
                2,
                null,
                new ClosedRound.Clipping(spec.privacy().clipNorm(), null, null),
                System.currentTimeMillis(),
                null)
            .value);
  }
}
