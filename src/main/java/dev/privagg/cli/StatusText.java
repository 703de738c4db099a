package dev.privagg.cli;

import dev.privagg.spec.JobSpec;
import dev.privagg.status.JobStatus;
import dev.privagg.status.RoundRecord;
import dev.privagg.status.StatusTracker;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A running job's status and its per-round progress, as lines for people and fields for JSON. */
final class StatusText {
  private StatusText() {}

  /** Rounds a text status lists; JSON carries every round the tracker keeps. */
  static final int ROUNDS_SHOWN = 10;

  /** A round of {@code spec}'s job just read into {@code tracker}, as the followers print it. */
  static String round(JobSpec spec, StatusTracker tracker, RoundRecord r) {
    return round(spec.jobId(), r, spec.privacy().budgetEpsilon(), tracker.finalModelRound());
  }

  /** One round as {@code privagg run} and {@code privagg status --follow} print it. */
  static String round(String jobId, RoundRecord r, double budgetEpsilon, long finalModelRound) {
    String head = "job " + jobId + " round " + r.round() + ": ";
    String budget =
        "epsilon " + Text.number(r.epsilonSpent()) + " of " + Text.number(budgetEpsilon);
    return switch (r.outcome()) {
      case "RELEASED" ->
          head + "released, " + r.contributions() + " updates, " + budget + timing(r);
      case "NOT_RELEASED_MIN_COHORT" ->
          head
              + "not released (noisy count under the minimum cohort), charged, "
              + budget
              + timing(r);
      case "SKIPPED" ->
          head
              + "skipped (an earlier run announced it and its deadline passed), charged, "
              + budget;
      case "BUDGET_EXHAUSTED" ->
          "job "
              + jobId
              + ": privacy budget spent ("
              + budget
              + "): round "
              + r.round()
              + " and later never open; the final model is round "
              + finalModelRound
              + ". A new budget needs a new job id.";
      default -> head + r.outcome() + ", " + budget;
    };
  }

  private static String timing(RoundRecord r) {
    Long after = r.millisAfterDeadline();
    if (after == null) {
      return "";
    }
    return after >= 0
        ? ", written " + seconds(after) + " after its deadline"
        : ", closed early, " + seconds(-after) + " before its deadline";
  }

  /** A round's fields for a JSON line ({@code "type": "round"}). */
  static Map<String, Object> roundFields(String jobId, RoundRecord r) {
    return Output.fields(
        "type", "round",
        "jobId", jobId,
        "round", r.round(),
        "outcome", r.outcome(),
        "contributions", r.contributions(),
        "epsilonSpent", Output.number(r.epsilonSpent()),
        "writtenMillis", r.writtenMillis(),
        "deadlineMillis", r.deadlineMillis());
  }

  /** The status as lines for people; {@code timeoutMillis} paces the forecast in wall time. */
  static String text(JobStatus s, long timeoutMillis, long nowMillis) {
    StringBuilder b = new StringBuilder();
    b.append(
        "job %s: %d rounds charged (%d released, %d withheld by the minimum cohort, %d skipped)%n"
            .formatted(
                s.jobId(),
                s.roundsCharged(),
                s.roundsReleased(),
                s.roundsWithheld(),
                s.roundsSkipped()));
    if (s.duplicateCharges() > 0) {
      b.append(
          ("  %d charges are for rounds charged already: a second Flink job served this job id;"
                  + " epsilon counts every charge%n")
              .formatted(s.duplicateCharges()));
    }
    b.append(
        "  epsilon %s of %s spent (delta %s, %s), %s remaining%n"
            .formatted(
                Text.number(s.epsilonSpent()),
                Text.number(s.budgetEpsilon()),
                Text.number(s.delta()),
                s.accountant(),
                Text.number(s.epsilonRemaining())));
    if (s.exhausted()) {
      b.append(
          "  budget spent: no round opens any more; the final model is round %d%n"
              .formatted(s.finalModelRound()));
    } else {
      b.append("  " + lasting(s.roundsRemaining(), timeoutMillis, "") + "\n");
    }
    if (s.openRound() >= 0) {
      long left = s.openDeadlineMillis() - nowMillis;
      b.append(
          "  open round %d, deadline %s (%s)%n"
              .formatted(
                  s.openRound(),
                  Instant.ofEpochMilli(s.openDeadlineMillis()).truncatedTo(ChronoUnit.SECONDS),
                  left >= 0
                      ? "in " + seconds(left)
                      : "passed " + seconds(-left) + " ago, closing"));
    } else if (s.scheduledStartMillis() > nowMillis) {
      b.append(
          "  round 1 opens at %s (rounds.startAt), in %s%n"
              .formatted(
                  Instant.ofEpochMilli(s.scheduledStartMillis()),
                  duration(Duration.ofMillis(s.scheduledStartMillis() - nowMillis))));
    } else if (!s.exhausted()) {
      b.append("  no round open\n");
    }
    List<RoundRecord> rounds = s.rounds();
    if (!rounds.isEmpty()) {
      b.append("  latest rounds:\n");
      for (RoundRecord r :
          rounds.subList(Math.max(0, rounds.size() - ROUNDS_SHOWN), rounds.size())) {
        b.append(
            "    %6d  %-24s %6d updates  epsilon %s%n"
                .formatted(
                    r.round(), r.outcome(), r.contributions(), Text.number(r.epsilonSpent())));
      }
    }
    b.append("  rejected updates");
    if (s.rejectsWindow() > 0) {
      b.append(" (the latest " + s.rejectsWindow() + " per partition of the rejects topic)");
    }
    b.append(": ");
    if (s.rejects().isEmpty()) {
      b.append("none");
    } else {
      List<String> parts = new ArrayList<>();
      s.rejects().entrySet().stream()
          .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
          .forEach(e -> parts.add(e.getKey() + " " + e.getValue()));
      b.append(String.join(", ", parts));
    }
    return b.toString();
  }

  /**
   * How long the budget lasts: {@code rounds} more rounds of {@code timeoutMillis} each, since a
   * round runs its whole window, and is charged, whether or not clients send.
   */
  static String lasting(long rounds, long timeoutMillis, String from) {
    if (rounds == Long.MAX_VALUE) {
      return "the budget sets no limit on rounds";
    }
    String span =
        duration(
            Duration.ofMillis(
                rounds > Long.MAX_VALUE / timeoutMillis ? Long.MAX_VALUE : rounds * timeoutMillis));
    return ("%d more round%s fit the budget%s: about %s at one round per %s, charged whether or"
            + " not any client sends")
        .formatted(
            rounds, rounds == 1 ? "" : "s", from, span, duration(Duration.ofMillis(timeoutMillis)));
  }

  /** The status's fields for JSON. */
  static Map<String, Object> fields(JobStatus s, long nowMillis) {
    List<Map<String, Object>> rounds = new ArrayList<>();
    for (RoundRecord r : s.rounds()) {
      rounds.add(roundFields(s.jobId(), r));
    }
    return Output.fields(
        "type", "status",
        "jobId", s.jobId(),
        "budgetEpsilon", Output.number(s.budgetEpsilon()),
        "delta", s.delta(),
        "accountant", s.accountant(),
        "epsilonSpent", Output.number(s.epsilonSpent()),
        "epsilonRemaining", Output.number(s.epsilonRemaining()),
        "roundsReleased", s.roundsReleased(),
        "roundsWithheld", s.roundsWithheld(),
        "roundsSkipped", s.roundsSkipped(),
        "duplicateCharges", s.duplicateCharges(),
        "exhausted", s.exhausted(),
        "roundsRemaining", s.roundsRemaining() == Long.MAX_VALUE ? null : s.roundsRemaining(),
        "finalModelRound", s.exhausted() ? s.finalModelRound() : null,
        "openRound", s.openRound() < 0 ? null : s.openRound(),
        "openDeadlineMillis", s.openRound() < 0 ? null : s.openDeadlineMillis(),
        "scheduledStartMillis", s.scheduledStartMillis() == 0 ? null : s.scheduledStartMillis(),
        "nowMillis", nowMillis,
        "rounds", rounds,
        "rejects", s.rejects(),
        "rejectsWindow", s.rejectsWindow() == 0 ? null : s.rejectsWindow());
  }

  static String seconds(long millis) {
    return String.format(java.util.Locale.ROOT, "%.1f s", millis / 1000.0);
  }

  /** 8 min 20 s, 2 h 5 min, 3 d 4 h: the two largest units. */
  static String duration(Duration d) {
    long s = d.toSeconds();
    if (s < 60) {
      return s + " s";
    }
    if (s < 3600) {
      return (s / 60) + " min" + (s % 60 == 0 ? "" : " " + (s % 60) + " s");
    }
    if (s < 86400) {
      return (s / 3600) + " h" + ((s % 3600) / 60 == 0 ? "" : " " + (s % 3600) / 60 + " min");
    }
    return (s / 86400) + " d" + ((s % 86400) / 3600 == 0 ? "" : " " + (s % 86400) / 3600 + " h");
  }
}
