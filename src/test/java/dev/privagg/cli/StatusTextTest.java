package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.status.RoundRecord;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The words operators read about a running job. */
class StatusTextTest {
  @Test
  void durations_showTheTwoLargestUnits() {
    assertThat(StatusText.duration(Duration.ofSeconds(6))).isEqualTo("6 s");
    assertThat(StatusText.duration(Duration.ofSeconds(500))).isEqualTo("8 min 20 s");
    assertThat(StatusText.duration(Duration.ofSeconds(3600))).isEqualTo("1 h");
    assertThat(StatusText.duration(Duration.ofSeconds(7500))).isEqualTo("2 h 5 min");
    assertThat(StatusText.duration(Duration.ofHours(76))).isEqualTo("3 d 4 h");
  }

  @Test
  void lasting_paysRoundsOfTheTimeout_andSaysEmptyRoundsAreCharged() {
    assertThat(StatusText.lasting(50, 10_000, ""))
        .isEqualTo(
            "50 more rounds fit the budget: about 8 min 20 s at one round per 10 s, charged"
                + " whether or not any client sends");
    assertThat(StatusText.lasting(1, 2_000, " (after 2 rounds)")).startsWith("1 more round fit");
    assertThat(StatusText.lasting(Long.MAX_VALUE, 10_000, ""))
        .isEqualTo("the budget sets no limit on rounds");
    assertThat(StatusText.lasting(Long.MAX_VALUE / 2, 10_000, "")).contains(" d ");
  }

  @Test
  void roundLines_sayWhatHappened_andWhenAgainstTheDeadline() {
    assertThat(
            StatusText.round("j", new RoundRecord(3, "RELEASED", 18, 1.25, 10_400, 10_000), 4, 3))
        .isEqualTo(
            "job j round 3: released, 18 updates, epsilon 1.25 of 4, written 0.4 s after its deadline");
    assertThat(StatusText.round("j", new RoundRecord(3, "RELEASED", 20, 1.25, 9_000, 10_000), 4, 3))
        .endsWith("closed early, 1.0 s before its deadline");
    assertThat(
            StatusText.round(
                "j", new RoundRecord(4, "NOT_RELEASED_MIN_COHORT", 1, 1.5, 1, -1), 4, 3))
        .isEqualTo(
            "job j round 4: not released (noisy count under the minimum cohort), charged, epsilon"
                + " 1.5 of 4");
    assertThat(
            StatusText.round("j", new RoundRecord(51, "BUDGET_EXHAUSTED", 0, 3.98, 1, -1), 4, 50))
        .isEqualTo(
            "job j: privacy budget spent (epsilon 3.98 of 4): round 51 and later never open; the"
                + " final model is round 50. A new budget needs a new job id.");
  }

  @Test
  void runsStartLine_forAFreshJob_aContinuedOne_andASpentBudget() {
    dev.privagg.spec.JobSpec spec =
        dev.privagg.job.JobFixtures.spec("noiseMultiplier: 2.0\nbudgetEpsilon: 6", "");
    assertThat(RunProgress.startLine(spec, status(0, 0, 9, false)))
        .isEqualTo(
            "job job-a: 9 more rounds fit the budget: about 9 s at one round per 1 s, charged"
                + " whether or not any client sends; a job without clients spends its budget too");
    assertThat(RunProgress.startLine(spec, status(4, 2.5, 5, false)))
        .startsWith(
            "job job-a: 5 more rounds fit the budget (after 4 rounds charged, epsilon 2.5 of 6):"
                + " about 5 s at one round per 1 s");
    assertThat(RunProgress.startLine(spec, status(9, 5.9, 0, true)))
        .isEqualTo(
            "job job-a: the privacy budget is already spent (epsilon 5.9 of 6): no round will open"
                + " and the final model is round 9. A new budget needs a new job id.");
  }

  private static dev.privagg.status.JobStatus status(
      long released, double epsilon, long remaining, boolean exhausted) {
    return new dev.privagg.status.JobStatus(
        "job-a",
        6,
        1e-5,
        "rdp",
        released,
        0,
        0,
        0,
        exhausted,
        epsilon,
        remaining,
        -1,
        -1,
        released,
        java.util.List.of(),
        java.util.Map.of(),
        0,
        0);
  }
}
