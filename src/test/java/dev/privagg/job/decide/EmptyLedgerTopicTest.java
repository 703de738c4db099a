package dev.privagg.job.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.JobFixtures;
import dev.privagg.job.combine.NoiseSources;
import dev.privagg.job.ledger.LedgerCodec;
import dev.privagg.job.ledger.LedgerFloor;
import dev.privagg.job.ledger.LedgerReconciler;
import dev.privagg.privacy.PrivacyLedger;
import org.junit.jupiter.api.Test;

/**
 * Found in review: a fresh start whose ledger topic is empty (deleted and recreated by
 * ensureTopics, renamed in the spec, or a new topic name) while the releases or models topic shows
 * a released model of round 5: the floor has no charge but hasHistory() is true (an announced
 * round), so the job adopts an EMPTY ledger and continues from model 5 with the whole budget again.
 */
class EmptyLedgerTopicTest {
  @Test
  void freshStartWithAnEmptyLedgerButAReleasedModel_isRefused_notStartedWithTheBudgetReset() {
    var spec = JobFixtures.exactSpec("");
    // What LedgerReconciler.read builds when the ledger is empty: lastReleased -1, model round 5.
    LedgerFloor floor =
        new LedgerFloor(LedgerCodec.write(PrivacyLedger.EMPTY), 6, false, 5, spec.initialWeights());
    LifecycleFakes.Store store = new LifecycleFakes.Store();
    LifecycleFakes.Recorder out = new LifecycleFakes.Recorder();
    new RoundLifecycle(spec, NoiseSources.forSpec(spec), floor).start(store, 0, out);
    // Without the check the lifecycle goes on from round 7 with nothing charged:
    assertThat(out.announced).containsExactly("7 until 1000");
    assertThat(LedgerCodec.read(store.progress().ledger).totalCount()).isZero();
    // The reconciler now refuses such a floor before the job is defined.
    assertThatThrownBy(() -> LedgerReconciler.requireCharged("j", -1, 5, spec.topics()))
        .hasMessageContaining("refusing to start");
    assertThatThrownBy(() -> LedgerReconciler.requireCharged("j", 3, 5, spec.topics()))
        .hasMessageContaining("round 3 as its latest release");
    assertThatCode(() -> LedgerReconciler.requireCharged("j", 5, 5, spec.topics()))
        .doesNotThrowAnyException();
    assertThatCode(() -> LedgerReconciler.requireCharged("j", -1, 0, spec.topics()))
        .doesNotThrowAnyException();
  }
}
