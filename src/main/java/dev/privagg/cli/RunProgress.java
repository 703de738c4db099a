package dev.privagg.cli;

import dev.privagg.spec.JobSpec;
import dev.privagg.status.JobStatus;
import dev.privagg.status.RoundRecord;
import dev.privagg.status.StatusFollower;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;

/**
 * {@code privagg run}'s progress: a line per round of each job as the job decides it (read from the
 * ledger, read_committed), on a thread of its own until closed.
 */
final class RunProgress implements AutoCloseable {
  private final PrintWriter out;
  private final List<JobSpec> jobs;
  private final List<StatusFollower> followers;
  private final Thread thread;
  private volatile boolean running = true;

  RunProgress(PrintWriter out, List<JobSpec> jobs, List<StatusFollower> followers) {
    this.out = out;
    this.jobs = List.copyOf(jobs);
    this.followers = List.copyOf(followers);
    this.thread = new Thread(this::follow, "privagg-run-progress");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * What a start finds: how long the budget lasts (and that an idle job spends it), or that it is
   * already spent.
   */
  static String startLine(JobSpec spec, JobStatus s) {
    String job = "job " + spec.jobId() + ": ";
    if (s.exhausted()) {
      return job
          + "the privacy budget is already spent (epsilon "
          + Text.number(s.epsilonSpent())
          + " of "
          + Text.number(s.budgetEpsilon())
          + "): no round will open and the final model is round "
          + s.finalModelRound()
          + ". A new budget needs a new job id.";
    }
    String from =
        s.roundsCharged() == 0
            ? ""
            : " (after "
                + s.roundsCharged()
                + " rounds charged, epsilon "
                + Text.number(s.epsilonSpent())
                + " of "
                + Text.number(s.budgetEpsilon())
                + ")";
    String start =
        s.scheduledStartMillis() > System.currentTimeMillis()
            ? "round 1 opens at "
                + java.time.Instant.ofEpochMilli(s.scheduledStartMillis())
                + " (rounds.startAt); then "
            : "";
    return job
        + start
        + StatusText.lasting(s.roundsRemaining(), spec.rounds().timeoutMillis(), from)
        + (s.roundsRemaining() == Long.MAX_VALUE
            ? ""
            : "; a job without clients spends its budget too");
  }

  private void follow() {
    try {
      followAll();
    } finally {
      closeFollowers();
    }
  }

  private void followAll() {
    while (running) {
      for (int i = 0; i < followers.size() && running; i++) {
        JobSpec spec = jobs.get(i);
        StatusFollower follower = followers.get(i);
        try {
          follower.poll(Duration.ofMillis(200), r -> print(spec, follower, r));
        } catch (RuntimeException e) {
          if (running) {
            out.println("progress of job " + spec.jobId() + " stopped: " + e.getMessage());
            out.flush();
            return;
          }
        }
      }
    }
  }

  private void print(JobSpec spec, StatusFollower follower, RoundRecord r) {
    out.println(StatusText.round(spec, follower.tracker(), r));
    out.flush();
  }

  /**
   * Stops the thread and closes the followers' consumers (before an embedded broker stops). A
   * consumer is closed by the thread that polls it, once woken; here only if that thread never ran.
   */
  @Override
  public void close() {
    running = false;
    if (!thread.isAlive()) {
      closeFollowers();
      return;
    }
    followers.forEach(StatusFollower::wakeup);
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeFollowers() {
    for (StatusFollower f : followers) {
      try {
        f.close();
      } catch (RuntimeException e) {
        // Closing anyway, the broker may be gone: nothing left to do with this consumer.
      }
    }
  }
}
