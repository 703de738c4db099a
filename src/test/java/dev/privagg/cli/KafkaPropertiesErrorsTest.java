package dev.privagg.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code --kafka-properties} file that cannot be used ends every Kafka command with one line
 * naming the file and the problem, before any broker is contacted (port 1: nothing listens).
 */
class KafkaPropertiesErrorsTest {
  @TempDir Path dir;

  private String[] consume(Path properties) {
    return new String[] {
      "consume",
      "--spec",
      Path.of("jobs/digits-softmax.yaml").toAbsolutePath().toString(),
      "--bootstrap-servers",
      "localhost:1",
      "--kafka-properties",
      properties.toString(),
      "--timeout-seconds",
      "1"
    };
  }

  private static String stderrOf(String[] args) {
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
    assertThat(code).as("exit code; stderr: %s", err).isEqualTo(1);
    return err.toString();
  }

  @Test
  void aMissingFile_endsWithOneLine() {
    String err = stderrOf(consume(dir.resolve("absent.properties")));
    assertThat(err.strip())
        .startsWith("error: --kafka-properties ")
        .endsWith("absent.properties: no such file")
        .doesNotContain("\n");
  }

  @Test
  void aPropertyPrivaggSetsItself_endsWithOneLine() throws Exception {
    Path file = dir.resolve("weakening.properties");
    Files.writeString(file, "isolation.level=read_uncommitted\n");
    String err = stderrOf(consume(file));
    assertThat(err.strip())
        .startsWith("error: --kafka-properties ")
        .contains("isolation.level is not a connection or security property")
        .doesNotContain("\n");
  }
}
