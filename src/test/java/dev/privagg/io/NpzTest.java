package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpzTest {
  @TempDir Path dir;

  /** A .npy of version {@code major}.0 with the given header dict and data. */
  private static byte[] npy(int major, String dict, byte[] data) {
    byte[] header = (dict + "\n").getBytes(StandardCharsets.ISO_8859_1);
    int lengthBytes = major == 1 ? 2 : 4;
    ByteBuffer out =
        ByteBuffer.allocate(8 + lengthBytes + header.length + data.length)
            .order(ByteOrder.LITTLE_ENDIAN);
    out.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
    if (major == 1) {
      out.putShort((short) header.length);
    } else {
      out.putInt(header.length);
    }
    return out.put(header).put(data).array();
  }

  private Path npz(Map<String, byte[]> entries, int method) throws Exception {
    Path file = dir.resolve("m.npz");
    try (OutputStream os = Files.newOutputStream(file);
        ZipOutputStream zip = new ZipOutputStream(os)) {
      zip.setMethod(method);
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        zip.putNextEntry(new ZipEntry(e.getKey()));
        zip.write(e.getValue());
        zip.closeEntry();
      }
    }
    return file;
  }

  private static byte[] floats(ByteOrder order, float... values) {
    ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(order);
    b.asFloatBuffer().put(values);
    return b.array();
  }

  @Test
  void writtenFile_readsBackTheSameTensors() throws Exception {
    Path file = dir.resolve("m.npz");
    FloatTensor w = new FloatTensor("w", new int[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6});
    FloatTensor s = new FloatTensor("scalar", new int[] {}, new float[] {-1.5f});
    FloatTensor b = new FloatTensor("b", new int[] {3}, new float[] {7, 8, 9});
    ModelFile.write(file, ModelFile.Format.NPZ, List.of(w, s, b), Map.of());

    ModelFile read = ModelFile.read(file, 100);

    assertThat(read.tensors()).extracting(FloatTensor::name).containsExactly("w", "scalar", "b");
    assertThat(read.tensors().get(0).shape()).containsExactly(2, 3);
    assertThat(read.tensors().get(0).values()).containsExactly(1, 2, 3, 4, 5, 6);
    assertThat(read.tensors().get(1).shape()).isEmpty();
    assertThat(read.tensors().get(1).values()).containsExactly(-1.5f);
    assertThat(read.tensors().get(2).values()).containsExactly(7, 8, 9);
  }

  @Test
  void formats2And3_bigEndianAndFloat64_areRead() throws Exception {
    ByteBuffer f8 =
        ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putDouble(0.1).putDouble(-2);
    Path file =
        npz(
            Map.of(
                "a.npy",
                npy(
                    2,
                    "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                    floats(ByteOrder.BIG_ENDIAN, 1, 2)),
                "b.npy",
                npy(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f8.array())),
            ZipEntry.DEFLATED);

    ModelFile read = ModelFile.read(file, 10);

    assertThat(
            read.tensors().stream()
                .filter(t -> t.name().equals("a"))
                .findFirst()
                .orElseThrow()
                .values())
        .containsExactly(1f, 2f);
    assertThat(
            read.tensors().stream()
                .filter(t -> t.name().equals("b"))
                .findFirst()
                .orElseThrow()
                .values())
        .containsExactly(0.1f, -2f);
  }

  @Test
  void fortranOrder_isTransposedToRowMajor() throws Exception {
    // The 2x3 matrix [[1, 2, 3], [4, 5, 6]] in column-major order: 1 4 2 5 3 6.
    Path file =
        npz(
            Map.of(
                "m.npy",
                npy(
                    1,
                    "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                    floats(ByteOrder.LITTLE_ENDIAN, 1, 4, 2, 5, 3, 6))),
            ZipEntry.DEFLATED);

    FloatTensor m = ModelFile.read(file, 10).tensors().get(0);

    assertThat(m.values()).containsExactly(1, 2, 3, 4, 5, 6);
  }

  @Test
  void otherDtypes_areRefusedNamingTheArrayAndTheFix() throws Exception {
    Path file =
        npz(
            Map.of(
                "ids.npy",
                npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", new byte[8])),
            ZipEntry.DEFLATED);

    assertThatThrownBy(() -> ModelFile.read(file, 10))
        .isInstanceOf(ModelFileException.class)
        .hasMessageContaining("array 'ids' has dtype '<i8'")
        .hasMessageContaining("astype(numpy.float32)");
  }

  @Test
  void zipBomb_stopsAtTheCapBeforeInflating() throws Exception {
    // Declares 2^26 values (256 MiB) of zeros, which deflate to a few hundred KiB.
    Path file = dir.resolve("bomb.npz");
    try (OutputStream os = Files.newOutputStream(file);
        ZipOutputStream zip = new ZipOutputStream(os)) {
      zip.putNextEntry(new ZipEntry("w.npy"));
      zip.write(
          npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (67108864,), }", new byte[0]));
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i < 256; i++) {
        zip.write(zeros);
      }
      zip.closeEntry();
    }

    assertThatThrownBy(() -> ModelFile.read(file, 1000))
        .hasMessageContaining("array 'w' has shape [67108864], more values than the 1000 expected");
  }

  @Test
  void truncatedData_andTrailingBytes_andStrayEntries_areRefused() throws Exception {
    Path truncated =
        npz(
            Map.of(
                "w.npy",
                npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", new byte[8])),
            ZipEntry.DEFLATED);
    assertThatThrownBy(() -> ModelFile.read(truncated, 10))
        .hasMessageContaining("data is cut off (8 of 12 bytes)");

    Path trailing =
        npz(
            Map.of(
                "w.npy",
                npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new byte[8])),
            ZipEntry.DEFLATED);
    assertThatThrownBy(() -> ModelFile.read(trailing, 10))
        .hasMessageContaining("has data after its 1 values");

    Path stray = npz(Map.of("readme.txt", new byte[1]), ZipEntry.DEFLATED);
    assertThatThrownBy(() -> ModelFile.read(stray, 10))
        .hasMessageContaining("entry 'readme.txt' is not a .npy");
  }

  @Test
  void totalAcrossArrays_isCapped() throws Exception {
    Path file = dir.resolve("m.npz");
    ModelFile.write(
        file,
        ModelFile.Format.NPZ,
        List.of(
            new FloatTensor("a", new int[] {4}, new float[4]),
            new FloatTensor("b", new int[] {4}, new float[4])),
        Map.of());

    assertThatThrownBy(() -> ModelFile.read(file, 6))
        .hasMessageContaining("more values than the 2 expected");
  }
}
