package dev.privagg.job;

import java.util.Arrays;

/**
 * Which committed releases reach a public topic (design.md invariant 9). Per public topic and job,
 * releases are published in the internal releases topic's order and only while their round number
 * grows: a second record for a published round is withheld (a duplicate when its bytes are equal, a
 * conflict otherwise), so every reader, read_uncommitted or not, sees at most one payload per
 * round. Rounds are charged before they are numbered, so however many Flink jobs write, the number
 * of public releases never exceeds the rounds the gate of the latest release counted.
 *
 * <p>Each submission of the Flink job is a {@link Run}; a failover keeps it. Once a newer run's
 * release appears, releases of older runs are withheld, and an older run that sees it learns that
 * another job serves its job id and must stop. A run whose release conflicts with a public round
 * (only possible when two jobs serve one job id) is withheld from then on, since its later models
 * build on the withheld one; the job of that run must stop too. Pure: no Flink or Kafka import.
 */
public final class PublicRounds {
  private PublicRounds() {}

  /** One submission of the Flink job, ordered by start time (ties by id). */
  public record Run(long startMillis, String id) implements Comparable<Run>, java.io.Serializable {
    public Run {
      if (id == null || id.isEmpty() || id.indexOf('@') >= 0) {
        throw new IllegalArgumentException("run id must be non-empty without '@', was " + id);
      }
    }

    /**
     * A new run that starts at {@code nowMillis}, or just after {@code latestSeenStart} (the latest
     * run the releases topic has seen) when the local clock is behind it: an earlier run must never
     * look newer and stop this one.
     */
    public static Run after(long nowMillis, long latestSeenStart, String id) {
      return new Run(
          latestSeenStart == Long.MIN_VALUE ? nowMillis : Math.max(nowMillis, latestSeenStart + 1),
          id);
    }

    /** {@code startMillis@id}: what release headers carry. */
    public String encode() {
      return startMillis + "@" + id;
    }

    /** The inverse of {@link #encode}; null for null or anything malformed. */
    public static Run parse(String encoded) {
      if (encoded == null) {
        return null;
      }
      int at = encoded.indexOf('@');
      try {
        return at <= 0
            ? null
            : new Run(Long.parseLong(encoded.substring(0, at)), encoded.substring(at + 1));
      } catch (IllegalArgumentException e) {
        return null;
      }
    }

    @Override
    public int compareTo(Run other) {
      int byStart = Long.compare(startMillis, other.startMillis);
      return byStart != 0 ? byStart : id.compareTo(other.id);
    }

    public boolean isNewerThan(Run other) {
      return compareTo(other) > 0;
    }
  }

  /** What a release decision found. */
  public enum Verdict {
    /** A newer round: copy it to the public topic. */
    PUBLISH,
    /** The published round again, byte for byte (a replay): nothing to do. */
    DUPLICATE,
    /** A round below the published one (an earlier run's, or read again from the start). */
    OLDER_ROUND,
    /** The published round with other bytes: withheld, and reported loudly. */
    CONFLICT,
    /** A release of a run older than one already seen for this job: withheld. */
    OLDER_RUN,
    /**
     * A release of a run that once conflicted with a public round: withheld, since its later models
     * build on the withheld one.
     */
    TAINTED_RUN,
    /** A newer run serves this job id: the run deciding must stop. */
    SUPERSEDED
  }

  /**
   * The published position of one public topic and job, kept in the publisher's keyed state. {@code
   * round} is -1 before anything is known.
   */
  public static class Position implements java.io.Serializable {
    public long round = -1;
    public byte[] digest;
    public String owner;

    /** Runs that conflicted with a public round here, space-separated. */
    public String tainted = "";

    public Position() {}

    public Position(long round, byte[] digest) {
      this.round = round;
      this.digest = digest;
    }
  }

  /**
   * Decides for one committed release of {@code round} with {@code digest} written by {@code
   * writer}, as seen by the publisher of run {@code self}; updates {@code position}.
   */
  public static Verdict decide(Position position, Run self, Run writer, long round, byte[] digest) {
    Run owner = Run.parse(position.owner);
    if (owner != null && owner.isNewerThan(writer)) {
      return self.compareTo(owner) < 0 ? Verdict.SUPERSEDED : Verdict.OLDER_RUN;
    }
    position.owner = writer.encode();
    if (self.compareTo(writer) < 0) {
      return Verdict.SUPERSEDED;
    }
    if ((" " + position.tainted + " ").contains(" " + writer.encode() + " ")) {
      return Verdict.TAINTED_RUN;
    }
    if (round < position.round) {
      return Verdict.OLDER_ROUND;
    }
    if (round == position.round) {
      if (Arrays.equals(digest, position.digest)) {
        return Verdict.DUPLICATE;
      }
      position.tainted = (position.tainted + " " + writer.encode()).trim();
      return Verdict.CONFLICT;
    }
    position.round = round;
    position.digest = digest;
    return Verdict.PUBLISH;
  }
}
