package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * Pins {@code src/test/resources/secagg/vectors-v1.json}, the vectors other implementations test
 * against: Java must still compute exactly the published file. A change here is a change of the
 * wire protocol (or of the file's format, which is kept stable). To regenerate after a deliberate
 * change, run {@link SecAggVectors#main}.
 */
class SecAggVectorsTest {
  @Test
  void publishedVectors_areWhatJavaComputesToday() throws IOException {
    assertThat(Files.readString(SecAggVectors.FILE)).isEqualTo(SecAggVectors.json());
  }
}
