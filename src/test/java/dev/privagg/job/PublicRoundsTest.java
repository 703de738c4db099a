package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.PublicRounds.Position;
import dev.privagg.job.PublicRounds.Run;
import dev.privagg.job.PublicRounds.Verdict;
import org.junit.jupiter.api.Test;

class PublicRoundsTest {
  private static final Run OLD = new Run(1_000, "a");
  private static final Run NEW = new Run(2_000, "b");
  private static final byte[] X = {1};
  private static final byte[] Y = {2};

  @Test
  void roundsArePublishedOnlyWhileTheyGrow_andTheSameRoundWithOtherBytesIsAConflict() {
    Position at = new Position();
    assertThat(PublicRounds.decide(at, OLD, OLD, 1, X)).isEqualTo(Verdict.PUBLISH);
    assertThat(PublicRounds.decide(at, OLD, OLD, 1, X)).isEqualTo(Verdict.DUPLICATE);
    assertThat(PublicRounds.decide(at, OLD, OLD, 0, Y)).isEqualTo(Verdict.OLDER_ROUND);
    assertThat(PublicRounds.decide(at, OLD, OLD, 3, Y)).isEqualTo(Verdict.PUBLISH); // gaps are fine
    assertThat(PublicRounds.decide(at, OLD, OLD, 3, X)).isEqualTo(Verdict.CONFLICT);
    assertThat(at.round).isEqualTo(3);
    assertThat(at.digest).isEqualTo(Y);
  }

  @Test
  void whatThePublicTopicAlreadyHolds_isTheFloorOfAFreshPublisher() {
    Position at = new Position(5, X);
    assertThat(PublicRounds.decide(at, NEW, OLD, 4, Y)).isEqualTo(Verdict.OLDER_ROUND);
    assertThat(PublicRounds.decide(at, NEW, OLD, 5, X)).isEqualTo(Verdict.DUPLICATE);
    assertThat(PublicRounds.decide(at, NEW, OLD, 5, Y)).isEqualTo(Verdict.CONFLICT);
    assertThat(PublicRounds.decide(at, NEW, NEW, 6, Y)).isEqualTo(Verdict.PUBLISH);
  }

  @Test
  void onceANewerRunWrote_olderRunsAreWithheld_andAnOlderPublisherIsSuperseded() {
    Position newerView = new Position();
    assertThat(PublicRounds.decide(newerView, NEW, OLD, 1, X)).isEqualTo(Verdict.PUBLISH);
    assertThat(PublicRounds.decide(newerView, NEW, NEW, 2, X)).isEqualTo(Verdict.PUBLISH);
    // The older job still runs and commits a round the newer one has not reached: withheld.
    assertThat(PublicRounds.decide(newerView, NEW, OLD, 3, Y)).isEqualTo(Verdict.OLDER_RUN);
    assertThat(newerView.round).isEqualTo(2);

    Position olderView = new Position();
    assertThat(PublicRounds.decide(olderView, OLD, OLD, 1, X)).isEqualTo(Verdict.PUBLISH);
    assertThat(PublicRounds.decide(olderView, OLD, NEW, 2, X)).isEqualTo(Verdict.SUPERSEDED);
    assertThat(PublicRounds.decide(olderView, OLD, OLD, 3, Y)).isEqualTo(Verdict.SUPERSEDED);
  }

  @Test
  void aRunThatConflictedWithAPublicRound_isWithheldFromThenOn() {
    Position at = new Position(3, X);
    assertThat(PublicRounds.decide(at, NEW, NEW, 3, Y)).isEqualTo(Verdict.CONFLICT);
    // Its round 4 builds on its withheld round 3: not a release anyone's gate counted.
    assertThat(PublicRounds.decide(at, NEW, NEW, 4, Y)).isEqualTo(Verdict.TAINTED_RUN);
    assertThat(at.round).isEqualTo(3);
  }

  @Test
  void aRunStartsAfterEveryRunSeen_evenWhenItsClockIsBehind() {
    assertThat(Run.after(5_000, 9_000, "x").startMillis()).isEqualTo(9_001);
    assertThat(Run.after(9_500, 9_000, "x").startMillis()).isEqualTo(9_500);
    assertThat(Run.after(9_500, Long.MIN_VALUE, "x").startMillis()).isEqualTo(9_500);
  }

  @Test
  void runsOrderByStartThenId_andSurviveTheirHeaderEncoding() {
    assertThat(new Run(5, "b").isNewerThan(new Run(5, "a"))).isTrue();
    assertThat(new Run(4, "z").isNewerThan(new Run(5, "a"))).isFalse();
    assertThat(Run.parse(NEW.encode())).isEqualTo(NEW);
    assertThat(Run.parse("nonsense")).isNull();
    assertThat(Run.parse("12@")).isNull();
    assertThat(Run.parse(null)).isNull();
    assertThatThrownBy(() -> new Run(1, "a@b")).hasMessageContaining("without '@'");
  }
}
