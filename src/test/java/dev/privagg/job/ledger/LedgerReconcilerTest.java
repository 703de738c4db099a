package dev.privagg.job.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.privacy.PrivacyEvent;
import org.junit.jupiter.api.Test;

/** How reconciliation builds ledgers from charged rounds; reading the topics is in ReconcileIT. */
class LedgerReconcilerTest {
  private final PrivacyEvent sampled = PrivacyEvent.sampledGaussian(1.1, 0.2, 1);
  private final PrivacyEvent earlyClose = PrivacyEvent.gaussian(0.55, 1);

  @Test
  void chargedRounds_composeByCount_perJob_inFirstSeenOrder() {
    LedgerReconciler.ChargedRounds charged = new LedgerReconciler.ChargedRounds();
    for (int r = 0; r < 200_000; r++) {
      charged.add("job-a", r % 1000 == 0 ? earlyClose : sampled);
      if (r < 5) {
        charged.add("job-b", sampled);
      }
    }
    charged.add("job-b", sampled.times(10));
    assertThat(charged.ledger("job-a").events())
        .containsExactly(earlyClose.times(200), sampled.times(199_800));
    assertThat(charged.ledger("job-b").events()).containsExactly(sampled.times(15));
    assertThat(charged.ledger("job-c").isEmpty()).isTrue();
  }
}
