package dev.privagg.io;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The safetensors format (huggingface/safetensors, "Format"): an unsigned 64-bit little-endian
 * header length N, N bytes of UTF-8 JSON mapping each tensor name to {@code dtype}, {@code shape}
 * and {@code data_offsets} [begin, end) into the data that follows (plus an optional {@code
 * __metadata__} map of strings), then the raw little-endian tensor data.
 *
 * <p>Read as the reference implementation validates it: the header starts with '{', is at most 100
 * MB, names each tensor once, and its tensors' byte ranges, ordered by offset, tile the data
 * exactly (contiguous from 0, no gap, no overlap, nothing after) with {@code product(shape) * dtype
 * size} bytes each. Every length is checked against the file's real size before anything of that
 * size is allocated. Float32 tensors ({@code F32}) are read as they are; {@code F64}, {@code F16}
 * and {@code BF16} are converted to float32; any other dtype is refused.
 */
public final class Safetensors {
  /** The reference implementation's limit on the JSON header. */
  public static final long MAX_HEADER_BYTES = 100_000_000;

  private static final int MAX_RANK = 64;
  private static final String METADATA = "__metadata__";
  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private Safetensors() {}

  private record Entry(String name, FloatType type, long[] shape, long begin, long end) {}

  /** Reads a safetensors file; see {@link ModelFile#read}. */
  public static ModelFile read(Path file, long maxValues) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size > Integer.MAX_VALUE) {
        throw new ModelFileException(
            file.toString(), "is " + size + " bytes; privagg reads safetensors files up to 2 GiB");
      }
      // Mapped, not read: only the header and the tensors' data are ever copied to the heap.
      return read(file.toString(), channel.map(FileChannel.MapMode.READ_ONLY, 0, size), maxValues);
    }
  }

  /**
   * Reads safetensors {@code bytes} (named {@code source} in messages), allocating for at most
   * {@code maxValues} values.
   */
  public static ModelFile read(String source, ByteBuffer bytes, long maxValues) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    if (in.remaining() < 8) {
      throw new ModelFileException(
          source, "is " + in.remaining() + " bytes, too short for the 8-byte header length");
    }
    long headerBytes = in.getLong();
    if (headerBytes < 0 || headerBytes > MAX_HEADER_BYTES) {
      throw new ModelFileException(
          source,
          "declares a "
              + Long.toUnsignedString(headerBytes)
              + "-byte header; safetensors headers are at most "
              + MAX_HEADER_BYTES
              + " bytes (is this a safetensors file?)");
    }
    if (headerBytes > in.remaining()) {
      throw new ModelFileException(
          source,
          "declares a "
              + headerBytes
              + "-byte header but only "
              + in.remaining()
              + " bytes follow the header length");
    }
    byte[] header = new byte[(int) headerBytes];
    in.get(header);
    Map<String, String> metadata = new LinkedHashMap<>();
    List<Entry> entries = parseHeader(source, header, metadata);
    ByteBuffer data = in.slice().order(ByteOrder.LITTLE_ENDIAN);
    checkLayout(source, entries, data.remaining(), maxValues);
    List<FloatTensor> tensors = new ArrayList<>();
    for (Entry e : entries) {
      float[] values = new float[(int) Shapes.elements(e.shape())];
      e.type().read(data.position((int) e.begin()), ByteOrder.LITTLE_ENDIAN, values);
      tensors.add(new FloatTensor(e.name(), Shapes.narrow(e.shape()), values));
    }
    return new ModelFile(tensors, metadata);
  }

  private static List<Entry> parseHeader(
      String source, byte[] header, Map<String, String> metadata) {
    if (header.length == 0 || header[0] != '{') {
      throw new ModelFileException(source, "header must be a JSON object starting with '{'");
    }
    if (!Utf8.isValid(header, 0, header.length)) {
      throw new ModelFileException(source, "header is not valid UTF-8");
    }
    List<Entry> entries = new ArrayList<>();
    try (JsonParser p = JSON.createParser(header)) {
      p.nextToken();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        p.nextToken();
        if (name.equals(METADATA)) {
          readMetadata(source, p, metadata);
        } else {
          entries.add(readEntry(source, name, p));
        }
      }
      if (p.nextToken() != null) {
        throw new ModelFileException(source, "header has content after its JSON object");
      }
    } catch (IOException e) {
      // Jackson reports malformed JSON, duplicate names and out-of-range numbers as IOExceptions.
      throw new ModelFileException(
          source, "header is not valid safetensors JSON: " + e.getMessage());
    }
    return entries;
  }

  private static void readMetadata(String source, JsonParser p, Map<String, String> metadata)
      throws IOException {
    if (p.currentToken() == JsonToken.VALUE_NULL) {
      return;
    }
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw new ModelFileException(source, METADATA + " must be an object of strings");
    }
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String key = p.currentName();
      if (p.nextToken() != JsonToken.VALUE_STRING) {
        throw new ModelFileException(
            source, METADATA + " value of '" + key + "' must be a string, was " + p.currentToken());
      }
      metadata.put(key, p.getText());
    }
  }

  private static Entry readEntry(String source, String name, JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw new ModelFileException(
          source, "tensor '" + name + "' must be an object with dtype, shape and data_offsets");
    }
    String dtype = null;
    long[] shape = null;
    long[] offsets = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      switch (field) {
        case "dtype" -> {
          if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw new ModelFileException(source, "tensor '" + name + "' dtype must be a string");
          }
          dtype = p.getText();
        }
        case "shape" -> shape = integers(source, name, "shape", p, MAX_RANK);
        case "data_offsets" -> offsets = integers(source, name, "data_offsets", p, 2);
        default -> p.skipChildren(); // the reference implementation ignores unknown fields too
      }
    }
    if (dtype == null || shape == null || offsets == null || offsets.length != 2) {
      throw new ModelFileException(
          source,
          "tensor '"
              + name
              + "' needs dtype, shape and data_offsets [begin, end], had "
              + (dtype == null ? "no dtype" : "dtype " + dtype)
              + (shape == null ? ", no shape" : "")
              + (offsets == null ? ", no data_offsets" : "")
              + (offsets != null && offsets.length != 2 ? ", " + offsets.length + " offsets" : ""));
    }
    FloatType type;
    try {
      type = FloatType.valueOf(dtype);
    } catch (IllegalArgumentException e) {
      throw new ModelFileException(
          source,
          "tensor '"
              + name
              + "' has dtype "
              + dtype
              + "; privagg reads F32 (and converts F64, F16 and BF16 to float32): convert it,"
              + " e.g. tensor.float() in PyTorch or array.astype(numpy.float32)");
    }
    return new Entry(name, type, shape, offsets[0], offsets[1]);
  }

  private static long[] integers(String source, String tensor, String field, JsonParser p, int max)
      throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      throw new ModelFileException(
          source, "tensor '" + tensor + "' " + field + " must be an array of integers");
    }
    List<Long> values = new ArrayList<>();
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (p.currentToken() != JsonToken.VALUE_NUMBER_INT
          || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
          || p.getLongValue() < 0) {
        throw new ModelFileException(
            source,
            "tensor '" + tensor + "' " + field + " holds " + p.getText() + ", not an integer >= 0");
      }
      if (values.size() == max) {
        throw new ModelFileException(
            source, "tensor '" + tensor + "' " + field + " has more than " + max + " entries");
      }
      values.add(p.getLongValue());
    }
    return values.stream().mapToLong(Long::longValue).toArray();
  }

  /**
   * The reference implementation's layout check: ordered by offset, every tensor starts where the
   * previous ended (the first at 0), its range holds exactly its values, and the last ends at the
   * end of the data. Then the total against {@code maxValues}, before any value is allocated.
   */
  private static void checkLayout(
      String source, List<Entry> entries, long dataBytes, long maxValues) {
    List<Entry> byOffset = new ArrayList<>(entries);
    byOffset.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
    long expectedBegin = 0;
    long total = 0;
    for (Entry e : byOffset) {
      if (e.begin() != expectedBegin || e.end() < e.begin()) {
        throw new ModelFileException(
            source,
            "tensor '"
                + e.name()
                + "' data_offsets ["
                + e.begin()
                + ", "
                + e.end()
                + ") do not start where the previous tensor ends ("
                + expectedBegin
                + "): the data must be contiguous, without gaps or overlaps");
      }
      long elements = Shapes.elements(e.shape());
      if (elements == Shapes.TOO_MANY || elements * e.type().bytes != e.end() - e.begin()) {
        throw new ModelFileException(
            source,
            "tensor '"
                + e.name()
                + "' has shape "
                + java.util.Arrays.toString(e.shape())
                + " of "
                + e.type()
                + " but "
                + (e.end() - e.begin())
                + " bytes of data");
      }
      total += elements;
      expectedBegin = e.end();
    }
    if (expectedBegin != dataBytes) {
      throw new ModelFileException(
          source,
          "tensors take "
              + expectedBegin
              + " bytes but the file has "
              + dataBytes
              + " bytes of data after the header (truncated, or data no tensor covers)");
    }
    if (total > maxValues) {
      throw new ModelFileException(
          source,
          "holds "
              + total
              + " values in "
              + describe(entries)
              + ", more than the "
              + maxValues
              + " expected");
    }
  }

  private static String describe(List<Entry> entries) {
    List<String> parts = new ArrayList<>();
    for (Entry e : entries) {
      parts.add(e.name() + " " + java.util.Arrays.toString(e.shape()));
    }
    return parts.toString();
  }

  /** The safetensors encoding of {@code tensors} (as F32, in order) with {@code metadata}. */
  public static byte[] encode(List<FloatTensor> tensors, Map<String, String> metadata) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      write(out, tensors, metadata);
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory cannot fail", e);
    }
    return out.toByteArray();
  }

  /** Writes {@code tensors} and {@code metadata} to {@code file}. */
  public static void write(Path file, List<FloatTensor> tensors, Map<String, String> metadata)
      throws IOException {
    try (OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(file))) {
      write(out, tensors, metadata);
    }
  }

  private static void write(
      OutputStream out, List<FloatTensor> tensors, Map<String, String> metadata)
      throws IOException {
    byte[] header = header(tensors, metadata);
    ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    out.write(length.putLong(header.length).array());
    out.write(header);
    for (FloatTensor t : tensors) {
      ByteBuffer data = Float32.write(t.values(), 0, t.values().length);
      out.write(data.array(), 0, data.limit());
    }
  }

  /** The JSON header, padded with spaces to a multiple of 8 bytes as the reference writer does. */
  private static byte[] header(List<FloatTensor> tensors, Map<String, String> metadata)
      throws IOException {
    ByteArrayOutputStream json = new ByteArrayOutputStream();
    Set<String> names = new HashSet<>();
    try (JsonGenerator g = JSON.createGenerator(json, JsonEncoding.UTF8)) {
      g.writeStartObject();
      if (!metadata.isEmpty()) {
        g.writeObjectFieldStart(METADATA);
        for (Map.Entry<String, String> e : metadata.entrySet()) {
          g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
      }
      long offset = 0;
      for (FloatTensor t : tensors) {
        if (t.name().equals(METADATA) || !names.add(t.name())) {
          throw new IllegalArgumentException(
              "tensor name '" + t.name() + "' is reserved or used twice");
        }
        g.writeObjectFieldStart(t.name());
        g.writeStringField("dtype", "F32");
        g.writeArrayFieldStart("shape");
        for (int dim : t.shape()) {
          g.writeNumber(dim);
        }
        g.writeEndArray();
        g.writeArrayFieldStart("data_offsets");
        g.writeNumber(offset);
        offset += 4L * t.values().length;
        g.writeNumber(offset);
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndObject();
    }
    while (json.size() % 8 != 0) {
      json.write(' ');
    }
    return json.toByteArray();
  }
}
