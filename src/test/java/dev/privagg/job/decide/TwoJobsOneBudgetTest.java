package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.JobFixtures;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.PublicRounds.Position;
import dev.privagg.job.PublicRounds.Run;
import dev.privagg.job.PublicRounds.Verdict;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.publish.PublishFunction;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Found in review: two Flink jobs for one job id (an operator mistake the threat model says is made
 * safe). Job B is defined (LedgerReconciler reads the floor) while job A still runs and has round 3
 * announced. Whether B starts inside round 3's window (it takes the round over with the same
 * window) or after it (it charges round 3 as SKIPPED), what is public never exceeds the budget: B's
 * gate counts every round number A may release.
 */
class TwoJobsOneBudgetTest {
  private static final int K = 3; // rounds the budget allows

  private static JobSpec spec(String budget) {
    return JobFixtures.spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: " + budget + "\nnoise: {source: seeded, seed: 7}",
        "");
  }

  @Test
  void newerRunStartingInsideTheAnnouncedWindow_releasesTheSameRound_andNothingBeyondTheBudget() {
    check(2500);
  }

  @Test
  void newerRunStartingAfterTheAnnouncedDeadline_chargesTheRound_andNothingBeyondTheBudget() {
    check(3200);
  }

  private static void check(long bStartsAt) {
    JobSpec probe = spec(".inf");
    PrivacyEvent perRound = probe.roundCharge().event(probe.privacy().noiseMultiplier(), 1);
    Accountant accountant = Accountant.named(probe.privacy().accountant());
    double delta = probe.privacy().delta();
    double budget =
        accountant.epsilon(PrivacyLedger.of(perRound.times(K)), delta).epsilon() * 1.0001;
    JobSpec spec = spec(Double.toString(budget));

    // Run A: rounds 1 and 2 released, round 3 announced for [2000, 3000).
    LifecycleFakes.Store storeA = new LifecycleFakes.Store();
    LifecycleFakes.Recorder a =
        LifecycleFakes.Recorder.releasing(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    RoundLifecycle runA = new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    runA.start(storeA, 0, a);
    a.advance(runA, storeA, 1999);
    assertThat(a.released).containsExactly(1L, 2L);
    assertThat(a.announced).last().asString().startsWith("3 until 3000");

    // Run B is defined now: its floor is what the ledger and releases topics hold.
    LedgerFloor floor =
        new LedgerFloor(
            storeA.progress().ledger.clone(),
            3,
            false,
            2,
            a.models.get(1).clone(),
            2,
            new LedgerFloor.Announced(3, 2000, 3000),
            null);
    LifecycleFakes.Store storeB = new LifecycleFakes.Store();
    LifecycleFakes.Recorder b =
        LifecycleFakes.Recorder.releasing(spec, NoiseSources.forSpec(spec), floor);
    RoundLifecycle runB = new RoundLifecycle(spec, NoiseSources.forSpec(spec), floor);
    runB.start(storeB, bStartsAt, b);

    // A closes round 3 before B's first release has stopped it; B goes on as far as it can.
    a.advance(runA, storeA, 2999);
    assertThat(a.released).containsExactly(1L, 2L, 3L);
    b.advance(runB, storeB, 10_000);

    // The publisher: rounds while they grow, identical bytes deduplicated.
    Run runIdA = new Run(1_000, "a");
    Run runIdB = new Run(2_000, "b");
    Position models = new Position(2, digest(a.models.get(1)));
    List<Long> published = new ArrayList<>(List.of(1L, 2L));
    if (PublicRounds.decide(models, runIdB, runIdA, 3, digest(a.models.get(2)))
        == Verdict.PUBLISH) {
      published.add(3L);
    }
    for (int i = 0; i < b.released.size(); i++) {
      Verdict v =
          PublicRounds.decide(models, runIdB, runIdB, b.released.get(i), digest(b.models.get(i)));
      assertThat(v).isNotEqualTo(Verdict.CONFLICT);
      if (v == Verdict.PUBLISH) {
        published.add(b.released.get(i));
      }
    }
    long gateB = LedgerCodec.read(storeB.progress().ledger).totalCount();
    assertThat(gateB)
        .as("B's gate counts every public round")
        .isGreaterThanOrEqualTo(published.size());
    double publicEpsilon =
        accountant.epsilon(PrivacyLedger.of(perRound.times(published.size())), delta).epsilon();
    assertThat(publicEpsilon)
        .as("epsilon of what is public (%d releases) vs budget %s", published.size(), budget)
        .isLessThanOrEqualTo(budget);
  }

  private static byte[] digest(float[] model) {
    java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(model.length * 4);
    bytes.asFloatBuffer().put(model);
    return PublishFunction.digest(bytes.array());
  }
}
