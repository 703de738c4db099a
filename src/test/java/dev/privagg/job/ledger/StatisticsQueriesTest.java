package dev.privagg.job.ledger;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.GlobalModel;
import dev.privagg.io.AvroCodec;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.Records;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import org.junit.jupiter.api.Test;

/** A start refuses to go on under another statistics query than its releases were charged for. */
class StatisticsQueriesTest {
  private static JobSpec spec(String feature, String weights) {
    return JobSpecReader.parse(
        "t",
        """
        jobId: stats
        statistics:
          maxRows: 3
          budgetWeights: %s
          features:
            - %s
        rounds: {timeout: 10s, expectedClients: 5}
        privacy: {noiseMultiplier: 1, delta: 1e-5, budgetEpsilon: 10}
        """
            .formatted(weights, feature));
  }

  private static final String X =
      "{name: x, bounds: [0, 10], statistics: [mean, quantiles], bins: 5, quantiles: [0.5]}";

  private static GlobalModel released(JobSpec spec, long round) {
    return AvroCodec.decodeModel(
        Records.model(
                spec,
                round,
                new float[spec.model().dimension()],
                1,
                1,
                round == 0
                    ? PrivacyLedger.EMPTY
                    : PrivacyLedger.of(PrivacyEvent.gaussian(1, round)),
                PrivacyEvent.gaussian(1, 1),
                "secure",
                "d")
            .value);
  }

  @Test
  void theSameQuery_goesOn_andAnyChangeIsRefusedNamingBoth() {
    JobSpec first = spec(X, "{}");
    GlobalModel latest = released(first, 4);
    assertThatCode(() -> LedgerReconciler.requireSameQuery(first, latest))
        .doesNotThrowAnyException();
    // More bins (the histogram block's sensitivity and share do not change, its size does).
    assertThatThrownBy(
            () ->
                LedgerReconciler.requireSameQuery(
                    spec(X.replace("bins: 5", "bins: 6"), "{}"), latest))
        .hasMessageContaining("its released rounds were charged as statistics (maxRows 3")
        .hasMessageContaining("bins [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]")
        .hasMessageContaining("give the new query another jobId");
    // Other weights: other shares, so each statistic's epsilon alone would be misstated.
    assertThatThrownBy(() -> LedgerReconciler.requireSameQuery(spec(X, "{histogram: 3}"), latest))
        .hasMessageContaining("a job's query cannot change mid-run");
    // A training job's model history under a statistics spec, and the other way round.
    GlobalModel trained = released(JobFixtures.exactSpec(""), 2);
    assertThatThrownBy(() -> LedgerReconciler.requireSameQuery(first, trained))
        .hasMessageContaining("charged as model training");
    assertThatThrownBy(() -> LedgerReconciler.requireSameQuery(JobFixtures.exactSpec(""), latest))
        .hasMessageContaining("this spec asks for model training");
    // Round 0 (the initial zeros) charged nothing.
    assertThatCode(
            () -> LedgerReconciler.requireSameQuery(spec(X, "{count: 2}"), released(first, 0)))
        .doesNotThrowAnyException();
  }
}
