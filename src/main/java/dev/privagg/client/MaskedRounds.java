package dev.privagg.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * A file that remembers, across client restarts, the session each secure round's update was masked
 * in, so that a client never masks one update into two sessions of one round (a job restored to an
 * earlier checkpoint opens the round again with a new session; two sums that differ by one client's
 * update would reveal it). One line per masked round: job id, round, session in hex, tab-separated.
 * The line is written and forced to disk before the masked input is sent.
 */
final class MaskedRounds {
  private final Path file;

  MaskedRounds(Path file) {
    if (file == null) {
      throw new IllegalArgumentException("the masked-rounds file must not be null");
    }
    this.file = file;
  }

  /**
   * Records that this client masks its update of {@code round} in {@code session}; again with the
   * same session is fine (a retry of the same message).
   *
   * @throws IllegalStateException if the file records another session of the round
   */
  synchronized void claim(String jobId, long round, String session) {
    for (String line : lines()) {
      String[] f = line.split("\t", -1);
      if (f.length == 3 && f[0].equals(jobId) && f[1].equals(Long.toString(round))) {
        if (f[2].equals(session)) {
          return;
        }
        throw new IllegalStateException(
            "this client already masked an update for round "
                + round
                + " of job "
                + jobId
                + " in session "
                + f[2]
                + " ("
                + file
                + "); the job opened the round again (session "
                + session
                + ") and a second masked update could be subtracted from the first: join the"
                + " next round");
      }
    }
    try {
      Files.writeString(
          file,
          jobId + "\t" + round + "\t" + session + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND,
          StandardOpenOption.SYNC);
    } catch (IOException e) {
      throw new UncheckedIOException("could not record the masked round in " + file, e);
    }
  }

  private List<String> lines() {
    try {
      return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the masked rounds in " + file, e);
    }
  }
}
