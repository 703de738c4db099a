package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found in review: a zero dimension before a dimension above int range passes the element count.
 */
class ModelFileDimensionOverflowTest {
  @TempDir Path dir;

  @Test
  void safetensors_zeroThenHugeDimension_isAModelFileException() {
    byte[] json =
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[0,1000000000000],\"data_offsets\":[0,0]}}"
            .getBytes(StandardCharsets.UTF_8);
    byte[] file =
        ByteBuffer.allocate(8 + json.length)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putLong(json.length)
            .put(json)
            .array();
    assertThatThrownBy(() -> Safetensors.read("x.safetensors", ByteBuffer.wrap(file), 10))
        .isInstanceOf(ModelFileException.class);
  }

  @Test
  void npz_zeroThenHugeDimension_isAModelFileException() throws Exception {
    byte[] header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 10000000000), }\n"
            .getBytes(StandardCharsets.ISO_8859_1);
    ByteBuffer npy = ByteBuffer.allocate(10 + header.length).order(ByteOrder.LITTLE_ENDIAN);
    npy.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0})
        .putShort((short) header.length)
        .put(header);
    Path file = dir.resolve("m.npz");
    try (OutputStream os = Files.newOutputStream(file);
        ZipOutputStream zip = new ZipOutputStream(os)) {
      zip.putNextEntry(new ZipEntry("w.npy"));
      zip.write(npy.array());
      zip.closeEntry();
    }
    assertThatThrownBy(() -> ModelFile.read(file, 10)).isInstanceOf(ModelFileException.class);
  }
}
