package dev.privagg.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guard against masking one update into two sessions of a round, kept in a file so that it
 * survives the client's restart (issue 32: it lived in memory only).
 */
class MaskedRoundsTest {
  @TempDir Path dir;

  @Test
  void aRoundMaskedInOneSession_isRefusedInAnother_evenByAClientStartedAfresh() throws Exception {
    Path file = dir.resolve("masked-rounds");
    new MaskedRounds(file).claim("job", 7, "aa11");

    MaskedRounds afterRestart = new MaskedRounds(file);
    afterRestart.claim("job", 7, "aa11"); // the same session again: a retry
    assertThatThrownBy(() -> afterRestart.claim("job", 7, "bb22"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "this client already masked an update for round 7 of job job in session aa11")
        .hasMessageEndingWith("join the next round");
    afterRestart.claim("job", 8, "bb22");
    afterRestart.claim("other-job", 7, "bb22");

    assertThat(Files.readAllLines(file))
        .containsExactly("job\t7\taa11", "job\t8\tbb22", "other-job\t7\tbb22");
  }

  @Test
  void anUnreadableFile_isAnErrorNamingIt_notAGuardSilentlyOff() throws Exception {
    Path directory = dir.resolve("a-directory");
    Files.createDirectory(directory);

    assertThatThrownBy(() -> new MaskedRounds(directory).claim("job", 1, "aa"))
        .hasMessageContaining(directory.toString());
  }
}
