package dev.privagg.io;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One NumPy {@code .npy} array (NEP 1, "A Simple File Format for NumPy Arrays"): the magic {@code
 * \x93NUMPY}, a version (1.0, 2.0 or 3.0), a little-endian header length (2 bytes in 1.0, 4 after),
 * a Python dict literal with {@code descr}, {@code fortran_order} and {@code shape}, then the raw
 * data.
 *
 * <p>Reads float32 ({@code <f4}, {@code >f4}) as it is and converts float64 and float16 (either
 * byte order); Fortran-ordered arrays are transposed to row-major. Declared sizes are checked
 * against the caller's cap before allocation, and the data is read in chunks, so a stream that ends
 * early costs only what it delivered.
 */
final class Npy {
  /** numpy's own default cap on the header it reads ({@code max_header_size}). */
  static final int MAX_HEADER_BYTES = 10_000;

  private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
  private static final Pattern HEADER =
      Pattern.compile(
          "\\{\\s*(?:(?:'descr'\\s*:\\s*'(?<descr>[^']*)'|'fortran_order'\\s*:\\s*(?<fortran>True|False)"
              + "|'shape'\\s*:\\s*\\((?<shape>[0-9,\\s]*)\\))\\s*(?:,\\s*)?){3}\\}\\s*");
  private static final Pattern DESCR = Pattern.compile("(?<order>[<>|=])f(?<size>[248])");
  private static final int CHUNK = 1 << 20;

  private Npy() {}

  /** The file and array a message is about. */
  private record Where(String source, String name) {
    ModelFileException fail(String problem) {
      return new ModelFileException(source, "array '" + name + "' " + problem);
    }
  }

  /**
   * Reads one array named {@code name} from {@code in}, refusing it when it declares more than
   * {@code maxValues} values; {@code source} names the file in messages.
   */
  static FloatTensor read(String source, String name, InputStream in, long maxValues)
      throws IOException {
    Where where = new Where(source, name);
    byte[] prefix = readFully(in, 8, where, "magic and version");
    for (int i = 0; i < MAGIC.length; i++) {
      if (prefix[i] != MAGIC[i]) {
        throw where.fail("is not a .npy array (no \\x93NUMPY magic)");
      }
    }
    int major = prefix[6];
    if (major < 1 || major > 3 || prefix[7] != 0) {
      throw where.fail(
          "is .npy format " + major + "." + prefix[7] + "; privagg reads 1.0, 2.0 and 3.0");
    }
    ByteBuffer lengthBytes =
        ByteBuffer.wrap(readFully(in, major == 1 ? 2 : 4, where, "header length"))
            .order(ByteOrder.LITTLE_ENDIAN);
    long headerBytes =
        major == 1 ? lengthBytes.getShort() & 0xFFFF : lengthBytes.getInt() & 0xFFFFFFFFL;
    if (headerBytes > MAX_HEADER_BYTES) {
      throw where.fail(
          "declares a " + headerBytes + "-byte header; privagg reads up to " + MAX_HEADER_BYTES);
    }
    byte[] headerData = readFully(in, (int) headerBytes, where, "header");
    String header =
        new String(headerData, major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
    Matcher m = HEADER.matcher(header);
    if (!m.matches()
        || m.group("descr") == null
        || m.group("fortran") == null
        || m.group("shape") == null) {
      throw where.fail(
          "header is not a plain array header (descr, fortran_order, shape): " + header.trim());
    }
    Matcher descr = DESCR.matcher(m.group("descr"));
    if (!descr.matches() || descr.group("order").equals("|")) {
      throw where.fail(
          "has dtype '"
              + m.group("descr")
              + "'; privagg reads float32 ('<f4', and converts '<f8' and '<f2'): save it with"
              + " array.astype(numpy.float32)");
    }
    FloatType type =
        switch (descr.group("size")) {
          case "2" -> FloatType.F16;
          case "4" -> FloatType.F32;
          default -> FloatType.F64;
        };
    // '=' is the writer's native order; numpy writes '<' or '>' itself, so '=' only comes from
    // hand-made files, read here as little-endian like every machine numpy runs on today.
    ByteOrder order =
        descr.group("order").equals(">") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
    long[] shape = shape(where, m.group("shape"));
    long elements = Shapes.elements(shape);
    if (elements == Shapes.TOO_MANY || elements > maxValues) {
      throw where.fail(
          "has shape "
              + java.util.Arrays.toString(shape)
              + ", more values than the "
              + maxValues
              + " expected");
    }
    float[] values = new float[(int) elements];
    type.read(ByteBuffer.wrap(readData(in, elements * type.bytes, where)), order, values);
    if (in.read() != -1) {
      throw where.fail("has data after its " + elements + " values");
    }
    int[] dims = Shapes.narrow(shape);
    boolean fortran = m.group("fortran").equals("True");
    return new FloatTensor(name, dims, fortran ? Layout.fortranToRowMajor(dims, values) : values);
  }

  private static long[] shape(Where where, String tuple) {
    List<Long> dims = new ArrayList<>();
    String[] parts = tuple.split(",", -1);
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i].trim();
      if (part.isEmpty()) {
        if (i == parts.length - 1) {
          continue; // the trailing comma of "(3,)"
        }
        throw where.fail("shape (" + tuple + ") is not a tuple of integers");
      }
      try {
        dims.add(Long.parseLong(part));
      } catch (NumberFormatException e) {
        throw where.fail("shape (" + tuple + ") is not a tuple of integers");
      }
    }
    if (dims.size() > 64) {
      throw where.fail("has more than 64 dimensions");
    }
    return dims.stream().mapToLong(Long::longValue).toArray();
  }

  /**
   * Exactly {@code length} bytes, gathered in chunks of at most 1 MiB: a stream that declares more
   * than it holds (a truncated or crafted entry) allocates only what it delivers before the error.
   */
  private static byte[] readData(InputStream in, long length, Where where) throws IOException {
    if (length <= CHUNK) {
      return readFully(in, (int) length, where, "data");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(CHUNK);
    byte[] chunk = new byte[CHUNK];
    long left = length;
    while (left > 0) {
      int n = in.read(chunk, 0, (int) Math.min(chunk.length, left));
      if (n < 0) {
        throw where.fail("ends after " + (length - left) + " of its " + length + " data bytes");
      }
      out.write(chunk, 0, n);
      left -= n;
    }
    return out.toByteArray();
  }

  private static byte[] readFully(InputStream in, int length, Where where, String part)
      throws IOException {
    byte[] bytes = in.readNBytes(length);
    if (bytes.length != length) {
      throw where.fail(part + " is cut off (" + bytes.length + " of " + length + " bytes)");
    }
    return bytes;
  }

  /** The .npy encoding of {@code tensor}: float32 little-endian, row-major, format 1.0 or 2.0. */
  static byte[] encode(FloatTensor tensor) {
    StringBuilder shape = new StringBuilder("(");
    for (int dim : tensor.shape()) {
      shape.append(dim).append(", ");
    }
    if (tensor.shape().length == 1) {
      shape.setLength(shape.length() - 1); // "(3,)": a one-element tuple keeps its comma
    } else if (tensor.shape().length > 1) {
      shape.setLength(shape.length() - 2);
    }
    shape.append(')');
    String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    // numpy pads the header with spaces and a newline so the data starts 64-byte aligned.
    int prefix = dict.length() + 1 + 10 > 65535 ? 12 : 10;
    int padded = (prefix + dict.length() + 1 + 63) / 64 * 64 - prefix;
    String header = dict + " ".repeat(padded - dict.length() - 1) + "\n";
    ByteBuffer out =
        ByteBuffer.allocate(prefix + padded + 4 * tensor.values().length)
            .order(ByteOrder.LITTLE_ENDIAN);
    out.put(MAGIC).put((byte) (prefix == 10 ? 1 : 2)).put((byte) 0);
    if (prefix == 10) {
      out.putShort((short) padded);
    } else {
      out.putInt(padded);
    }
    out.put(header.getBytes(StandardCharsets.ISO_8859_1));
    out.asFloatBuffer().put(tensor.values());
    return out.array();
  }
}
