package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.PublicRounds.Position;
import dev.privagg.job.PublicRounds.Run;
import dev.privagg.job.PublicRounds.Verdict;
import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review: two Flink jobs for one job id (an operator mistake the threat model says is made safe).
 * Job B is defined (LedgerReconciler reads the floor) while job A still runs; A commits one more
 * round before B's first release stops it. B skips A's announced round without charging it, so the
 * public topics end up with more charged mechanisms than B's budget gate counted: the budget is
 * exceeded although every single gate said "fits".
 */
class TwoRunsBudgetReviewTest {
  private static final int K = 3; // rounds the budget allows

  private static JobSpec spec(String budget) {
    return JobFixtures.spec(
        "noiseMultiplier: 1.0\nbudgetEpsilon: " + budget + "\nnoise: {source: seeded, seed: 7}",
        "");
  }

  @Test
  void olderRunClosesItsAnnouncedRoundWhileTheNewerStarts_publicMechanismsExceedTheGate() {
    JobSpec probe = spec(".inf");
    PrivacyEvent perRound = probe.roundCharge().event(probe.privacy().noiseMultiplier(), 1);
    Accountant accountant = Accountant.named(probe.privacy().accountant());
    double delta = probe.privacy().delta();
    double budget =
        accountant.epsilon(PrivacyLedger.of(perRound.times(K)), delta).epsilon() * 1.0001;
    JobSpec spec = spec(Double.toString(budget));

    // Run A: rounds 1 and 2 released, round 3 announced.
    ReviewStores.Store storeA = new ReviewStores.Store();
    ReviewStores.Recorder a = new ReviewStores.Recorder();
    RoundLifecycle runA = new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    runA.start(storeA, 0, a);
    a.advance(runA, storeA, 1999);
    assertThat(a.released).containsExactly(1L, 2L);
    assertThat(a.announced).last().asString().startsWith("3 until");

    // Run B is defined now: its floor is what the ledger and releases topics hold.
    LedgerFloor floor =
        new LedgerFloor(
            storeA.progress().ledger.clone(), 3, false, 2, storeA.progress().model.clone());
    ReviewStores.Store storeB = new ReviewStores.Store();
    ReviewStores.Recorder b = new ReviewStores.Recorder();
    RoundLifecycle runB = new RoundLifecycle(spec, NoiseSources.forSpec(spec), floor);
    runB.start(storeB, 2500, b);
    assertThat(b.announced).containsExactly("4 until 3500"); // round 3 skipped, not charged

    // A closes round 3 before B's first release has stopped it; then B closes round 4.
    a.advance(runA, storeA, 2999);
    assertThat(a.released).containsExactly(1L, 2L, 3L);
    b.advance(runB, storeB, 3499);
    assertThat(b.released).containsExactly(4L);

    // B's publisher (what the public models topic held at B's definition: round 2).
    Run runIdA = new Run(1_000, "a");
    Run runIdB = new Run(2_000, "b");
    Position models = new Position(2, new byte[] {2});
    List<Long> published = new ArrayList<>(List.of(1L, 2L));
    if (PublicRounds.decide(models, runIdB, runIdA, 3, new byte[] {3}) == Verdict.PUBLISH) {
      published.add(3L);
    }
    if (PublicRounds.decide(models, runIdB, runIdB, 4, new byte[] {4}) == Verdict.PUBLISH) {
      published.add(4L);
    }
    assertThat(published).containsExactly(1L, 2L, 3L, 4L);

    // Every public model is a separately noised release of the updates log (rounds 1-2 and A's 3
    // on A's gate, 4 on B's): K + 1 mechanisms are public, but the latest gate counted K.
    long gateB = LedgerCodec.read(storeB.progress().ledger).totalCount();
    double publicEpsilon =
        accountant.epsilon(PrivacyLedger.of(perRound.times(published.size())), delta).epsilon();
    assertThat(publicEpsilon)
        .as(
            "epsilon of what is public (%d releases) vs budget %s; B's gate counted %d rounds",
            published.size(), budget, gateB)
        .isLessThanOrEqualTo(budget);
  }
}
