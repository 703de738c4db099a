package dev.privagg.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsTest {
  @TempDir Path dir;

  private static final FloatTensor W =
      new FloatTensor("w", new int[] {2, 3}, new float[] {1, 2, 3, 4, 5, -6.5f});
  private static final FloatTensor B =
      new FloatTensor("b", new int[] {3}, new float[] {0, 1e-30f, 7});

  /** A file of the given header text and data bytes, as any writer could lay it out. */
  private static byte[] file(String header, byte[] data) {
    byte[] json = header.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(8 + json.length + data.length)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putLong(json.length)
        .put(json)
        .put(data)
        .array();
  }

  private static ModelFile read(byte[] bytes, long maxValues) {
    return Safetensors.read("test.safetensors", ByteBuffer.wrap(bytes), maxValues);
  }

  @Test
  void writtenFile_readsBackTheSameTensorsAndMetadata() throws Exception {
    Path file = dir.resolve("m.safetensors");
    Safetensors.write(file, List.of(W, B), Map.of("round", "3"));

    ModelFile read = ModelFile.read(file, 100);

    assertThat(read.tensors()).extracting(FloatTensor::name).containsExactly("w", "b");
    assertThat(read.tensors().get(0).shape()).containsExactly(2, 3);
    assertThat(read.tensors().get(0).values()).containsExactly(W.values());
    assertThat(read.tensors().get(1).values()).containsExactly(B.values());
    assertThat(read.metadata()).containsExactly(Map.entry("round", "3"));
    // The header is padded to 8 bytes, so the data starts aligned.
    long headerBytes =
        ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    assertThat(headerBytes % 8).isZero();
  }

  @Test
  void float64Float16AndBfloat16_areConvertedToFloat32() {
    ByteBuffer data = ByteBuffer.allocate(8 + 4 + 4).order(ByteOrder.LITTLE_ENDIAN);
    data.putDouble(0.1);
    data.putShort((short) 0x3C00).putShort((short) 0x0001); // f16 1.0 and the smallest subnormal
    data.putShort((short) 0xC049).putShort((short) 0x7F80); // bf16 -3.140625 and +infinity
    String header =
        "{\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
            + "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[8,12]},"
            + "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[12,16]}}";

    ModelFile read = read(file(header, data.array()), 10);

    assertThat(read.tensors().get(0).values()).containsExactly(0.1f);
    assertThat(read.tensors().get(1).values()).containsExactly(1f, 0x1p-24f);
    assertThat(read.tensors().get(2).values()).containsExactly(-3.140625f, Float.POSITIVE_INFINITY);
  }

  @Test
  void halfPrecision_everyPatternMatchesItsDefinition() {
    for (int bits = 0; bits < 0x10000; bits++) {
      int exponent = (bits >>> 10) & 0x1F;
      int mantissa = bits & 0x3FF;
      double expected =
          exponent == 0
              ? mantissa * Math.pow(2, -24)
              : exponent == 31
                  ? (mantissa == 0 ? Double.POSITIVE_INFINITY : Double.NaN)
                  : (1 + mantissa / 1024.0) * Math.pow(2, exponent - 15);
      if ((bits & 0x8000) != 0) {
        expected = -expected;
      }
      // Boxed, so that NaN equals NaN.
      assertThat(Double.valueOf(FloatType.halfToFloat((short) bits)))
          .as("0x%04x", bits)
          .isEqualTo(Double.valueOf(expected));
    }
  }

  @Test
  void otherDtypes_areRefusedNamingTheTensorAndTheFix() {
    byte[] bytes =
        file("{\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", new byte[8]);

    assertThatThrownBy(() -> read(bytes, 10))
        .isInstanceOf(ModelFileException.class)
        .hasMessageContaining("tensor 'ids' has dtype I64")
        .hasMessageContaining("privagg reads F32");
  }

  @Test
  void hugeDeclaredHeader_isRefusedBeforeAllocating() {
    byte[] bytes = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(1L << 40).array();

    assertThatThrownBy(() -> read(bytes, 10))
        .isInstanceOf(ModelFileException.class)
        .hasMessageContaining("1099511627776-byte header")
        .hasMessageContaining("at most 100000000");
  }

  @Test
  void headerLongerThanTheFile_isRefused() {
    byte[] bytes = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN).putLong(5000).array();

    assertThatThrownBy(() -> read(bytes, 10)).hasMessageContaining("only 12 bytes follow");
  }

  @Test
  void gapsOverlapsAndLeftoverData_areRefused() {
    String gap =
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
    String overlap =
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
    String wrongSize = "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}";
    String leftover = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";

    assertThatThrownBy(() -> read(file(gap, new byte[12]), 10))
        .hasMessageContaining("tensor 'b' data_offsets [8, 12) do not start where the previous");
    assertThatThrownBy(() -> read(file(overlap, new byte[8]), 10))
        .hasMessageContaining("tensor 'b'")
        .hasMessageContaining("contiguous");
    assertThatThrownBy(() -> read(file(wrongSize, new byte[8]), 10))
        .hasMessageContaining("tensor 'a' has shape [3] of F32 but 8 bytes of data");
    assertThatThrownBy(() -> read(file(leftover, new byte[8]), 10))
        .hasMessageContaining("tensors take 4 bytes but the file has 8 bytes");
  }

  @Test
  void malformedHeaders_areRefused() {
    assertThatThrownBy(() -> read(file(" {}", new byte[0]), 10))
        .hasMessageContaining("starting with '{'");
    assertThatThrownBy(
            () ->
                read(
                    file(
                        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                            + "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                        new byte[8]),
                    10))
        .hasMessageContaining("Duplicate field 'a'");
    assertThatThrownBy(
            () ->
                read(
                    file(
                        "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}",
                        new byte[4]),
                    10))
        .hasMessageContaining("not an integer >= 0");
    assertThatThrownBy(
            () -> read(file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", new byte[4]), 10))
        .hasMessageContaining("needs dtype, shape and data_offsets");
    assertThatThrownBy(
            () ->
                read(
                    file(
                        "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}",
                        new byte[4]),
                    10))
        .hasMessageContaining("not an integer >= 0");
  }

  @Test
  void moreValuesThanExpected_isRefusedListingTheTensors() {
    byte[] bytes = Safetensors.encode(List.of(W, B), Map.of());

    assertThatThrownBy(() -> read(bytes, 8))
        .hasMessageContaining("holds 9 values in [w [2, 3], b [3]], more than the 8 expected");
  }

  @Test
  void shapeWhoseProductOverflows_isRefusedWithoutAllocating() {
    String header =
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,0]}}";

    assertThatThrownBy(() -> read(file(header, new byte[0]), 10))
        .hasMessageContaining("tensor 'a' has shape");
  }
}
