package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.JobFixtures;
import dev.privagg.job.JobProgress;
import dev.privagg.job.OpenRound;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerFloor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Found in review: "a resubmitted or restored job never renumbers or re-announces a public round".
 * A fresh start after a run that announced round 2 skips to round 3 and announces it. If the
 * operator then restores the savepoint taken while round 2 was open, the ledger shows no more
 * charges than that state, so the restored job does not adopt: it closes round 2 and announces
 * round 3 again, with another deadline (the publisher withholds it as a conflict, so round 3 runs
 * to a deadline no client was told; the public announcement names the fresh start's deadline).
 */
class RestoreAfterSkippedRoundTest {
  @Test
  void restoreOfASavepointOlderThanAFreshStartsAnnouncement_doesNotAnnounceThatRoundAgain() {
    var spec = JobFixtures.exactSpec("");
    // Run 1: round 1 released, round 2 announced; savepoint S taken then; run 1 cancelled.
    LifecycleFakes.Store store1 = new LifecycleFakes.Store();
    LifecycleFakes.Recorder run1 = new LifecycleFakes.Recorder();
    RoundLifecycle l1 = new RoundLifecycle(spec, NoiseSources.forSpec(spec), LedgerFloor.NONE);
    l1.start(store1, 0, run1);
    run1.advance(l1, store1, 999);
    assertThat(run1.announced).containsExactly("1 until 1000", "2 until 2000");
    JobProgress savepoint = store1.snapshotProgress();
    byte[] ledgerAfterRound1 = store1.progress().ledger.clone();
    float[] model1 = spec.initialWeights();

    // Run 2: fresh start (state lost) at 5000: skips the announced round 2, announces round 3.
    LifecycleFakes.Store store2 = new LifecycleFakes.Store();
    LifecycleFakes.Recorder run2 = new LifecycleFakes.Recorder();
    LedgerFloor afterRun1 = new LedgerFloor(ledgerAfterRound1, 2, false, 1, model1);
    new RoundLifecycle(spec, NoiseSources.forSpec(spec), afterRun1).start(store2, 5000, run2);
    assertThat(run2.announced).containsExactly("3 until 6000");
    List<String> publicAnnouncements = new ArrayList<>(run1.announced);
    publicAnnouncements.addAll(run2.announced);

    // Run 3: run 2 cancelled before closing round 3; the operator restores savepoint S.
    LifecycleFakes.Store store3 = new LifecycleFakes.Store();
    store3.progress = savepoint;
    store3.round = OpenRound.empty();
    LifecycleFakes.Recorder run3 = new LifecycleFakes.Recorder();
    LedgerFloor afterRun2 = new LedgerFloor(ledgerAfterRound1, 3, false, 1, model1);
    RoundLifecycle l3 = new RoundLifecycle(spec, NoiseSources.forSpec(spec), afterRun2);
    run3.timers.add(1999L); // the restored deadline timer
    run3.advance(l3, store3, 9000);

    for (String announcement : run3.announced) {
      String round = announcement.substring(0, announcement.indexOf(' '));
      for (String earlier : publicAnnouncements) {
        if (earlier.startsWith(round + " ")) {
          assertThat(announcement)
              .as("round %s is already public as '%s'", round, earlier)
              .isEqualTo(earlier);
        }
      }
    }
  }
}
