package dev.privagg.job.decode;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import dev.privagg.io.AvroBytes;
import dev.privagg.io.CraftedUpdates;
import dev.privagg.io.Float32;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RawUpdate;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Structure-aware fuzzing of decode and validation (docs/design.md, Releases under failure:
 * per-record work never allocates what a record merely declares). Runs in its own JVM with {@code
 * -Xmx256m} (see the surefire {@code fuzz} execution in pom.xml), so any input that made the
 * decoder allocate what it declares would end the run with an OutOfMemoryError.
 *
 * <p>Inputs come from a seeded generator: valid records written field by field in which any length,
 * count or varint may be replaced by a hostile value (huge, negative, Long.MIN_VALUE, off by one),
 * then byte-level mutations (bit flips, byte overwrites, truncation, splicing of two records,
 * inserted and duplicated runs). Each input must be accepted or rejected with a reason; an accepted
 * one must read exactly as Avro's own decoder reads it.
 */
class UpdateFuzzTest {
  private static final int INPUTS = 120_000;
  private static final long SEED = 0x5EED_F022L;
  private static final String JOB = "fuzz-job";
  private static final long[] HOSTILE = {
    0,
    1,
    -1,
    2,
    3,
    4,
    12,
    13,
    255,
    256,
    257,
    4096,
    1L << 28,
    1L << 30,
    1L << 31,
    (1L << 31) - 1,
    1L << 40,
    Long.MAX_VALUE,
    Long.MIN_VALUE,
    Integer.MIN_VALUE,
    -(1L << 30)
  };

  private final JobSpec spec =
      JobSpecReader.parse(
          "fuzz",
          """
          jobId: %s
          model:
            tensors:
              - {name: w, shape: [2, 2]}
              - {name: b, shape: [3]}
          rounds: {timeout: 1s, expectedClients: 2}
          privacy: {clipNorm: 1.0, noiseMultiplier: 0, delta: 1.0e-5, budgetEpsilon: .inf}
          maxRecordBytes: 4096
          maxClientIdBytes: 32
          maxMetadataBytes: 128
          """
              .formatted(JOB));
  private final UpdateValidator validator = new UpdateValidator(List.of(spec));

  @Test
  void hundredThousandHostileInputs_areEachAcceptedOrRejectedWithAReason_andHeapStaysFlat() {
    SplittableRandom random = new SplittableRandom(SEED);
    Map<RejectReason, Integer> reasons = new EnumMap<>(RejectReason.class);
    int accepted = 0;
    for (CraftedUpdates.Case crafted : CraftedUpdates.all(JOB)) {
      classify(crafted.bytes(), reasons);
    }
    // Warm up, then take the baseline: the heap after the run must be where it was.
    for (int i = 0; i < 2_000; i++) {
      classify(input(random), reasons);
    }
    long before = usedAfterGc();
    for (int i = 0; i < INPUTS; i++) {
      accepted += classify(input(random), reasons) ? 1 : 0;
    }
    long growth = usedAfterGc() - before;

    System.out.printf(
        "fuzz: %d inputs (seed %x), %d accepted, rejects %s, heap growth %d KiB, max heap %d MiB%n",
        INPUTS, SEED, accepted, reasons, growth >> 10, Runtime.getRuntime().maxMemory() >> 20);
    assertThat(growth).as("heap growth in bytes").isLessThan(8L << 20);
    // The generator must reach both sides and the interesting reasons, or it tests nothing.
    assertThat(accepted).isGreaterThan(INPUTS / 100);
    assertThat(reasons.keySet())
        .contains(
            RejectReason.UNDECODABLE,
            RejectReason.UNKNOWN_SCHEMA,
            RejectReason.UNKNOWN_JOB,
            RejectReason.WRONG_TENSORS,
            RejectReason.NON_FINITE_VALUES,
            RejectReason.RECORD_TOO_LARGE,
            RejectReason.CLIENT_ID_TOO_LONG,
            RejectReason.METADATA_TOO_LARGE);
  }

  /** Validates one input; returns true when accepted. Any throwable fails the test. */
  private boolean classify(byte[] bytes, Map<RejectReason, Integer> reasons) {
    UpdateValidator.Result result = validator.validate(new RawUpdate("updates", 0, 0, bytes));
    if (result.update() != null) {
      assertThat(result.rejection()).isNull();
      assertThat(agreesWithAvro(bytes, result.update()))
          .as("accepted input reads as Avro reads it")
          .isTrue();
      return true;
    }
    assertThat(result.rejection()).isNotNull();
    assertThat(result.rejection().reason()).isNotNull();
    assertThat(result.rejection().detail()).isNotBlank();
    reasons.merge(result.rejection().reason(), 1, Integer::sum);
    return false;
  }

  /**
   * Avro's decoder is safe on an accepted input (every length in it was checked against the bytes),
   * so it serves as the oracle for what the bytes mean.
   */
  private static boolean agreesWithAvro(byte[] bytes, DecodedUpdate decoded) {
    ClientUpdate avro;
    try {
      avro = ClientUpdate.getDecoder().decode(bytes);
    } catch (java.io.IOException e) {
      return false;
    }
    if (!avro.getJobId().equals(decoded.jobId)
        || !avro.getClientId().equals(decoded.clientId)
        || avro.getRound() != decoded.round) {
      return false;
    }
    for (int t = 0; t < decoded.tensorData.length; t++) {
      String name = spec0Names.get(t);
      byte[] expected =
          avro.getTensors().stream()
              .filter(x -> x.getName().equals(name))
              .map(x -> Float32.bytes(x.getData()))
              .findFirst()
              .orElse(null);
      if (!java.util.Arrays.equals(expected, decoded.tensorData[t])) {
        return false;
      }
    }
    return true;
  }

  private static final List<String> spec0Names = List.of("w", "b");

  private byte[] input(SplittableRandom random) {
    byte[] record = structured(random);
    int mutations = random.nextInt(4); // 0: the structured record as it is
    for (int i = 0; i < mutations; i++) {
      record = mutate(record, random);
    }
    return record;
  }

  /**
   * A ClientUpdate written field by field; each varint (length, count, value) is replaced by a
   * hostile value with probability 1/40, so most records break in at most one place.
   */
  private static byte[] structured(SplittableRandom random) {
    Writer w = new Writer(random);
    if (random.nextInt(50) == 0) {
      w.out().raw(0xC3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8); // another schema
    } else {
      w.out().raw(AvroBytes.clientUpdateHeader().toByteArray());
    }
    w.string(random.nextInt(30) == 0 ? "other-job" : JOB);
    w.varint(random.nextInt(5) - 1L); // round
    w.string(clientId(random));
    boolean swap = random.nextInt(20) == 0;
    int tensors = random.nextInt(25) == 0 ? random.nextInt(4) : 2;
    w.blocks(
        tensors,
        i -> {
          boolean first = (i == 0) != swap;
          w.string(random.nextInt(40) == 0 ? "x" : first ? "w" : "b");
          int[] shape = first ? new int[] {2, 2} : new int[] {3};
          if (random.nextInt(40) == 0) {
            shape = new int[] {random.nextInt(5)};
          }
          int[] dims = shape;
          w.blocks(dims.length, d -> w.varint(dims[d]));
          int values = first ? 4 : 3;
          if (random.nextInt(40) == 0) {
            values = random.nextInt(6);
          }
          w.bytes(floats(random, values));
        });
    if (random.nextBoolean()) {
      w.varint(0);
    } else {
      w.varint(1);
      int entries = random.nextInt(30) == 0 ? 20 : random.nextInt(3);
      w.blocks(
          entries,
          e -> {
            w.string("k" + e);
            w.string("v".repeat(random.nextInt(10)));
          });
    }
    return w.out().toByteArray();
  }

  private static String clientId(SplittableRandom random) {
    return switch (random.nextInt(30)) {
      case 0 -> "c".repeat(33); // one over the cap
      case 1 -> "é".repeat(16); // 32 UTF-8 bytes: at the cap
      case 2 -> "";
      default -> "client-" + random.nextInt(1000);
    };
  }

  private static byte[] floats(SplittableRandom random, int n) {
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] =
          switch (random.nextInt(60)) {
            case 0 -> Float.NaN;
            case 1 -> Float.POSITIVE_INFINITY;
            case 2 -> Float.MAX_VALUE;
            case 3 -> Float.MIN_VALUE;
            default -> (float) random.nextGaussian();
          };
    }
    return Float32.write(values, 0, n).array();
  }

  private static byte[] mutate(byte[] in, SplittableRandom random) {
    if (in.length == 0) {
      return new byte[] {(byte) random.nextInt(256)};
    }
    byte[] out;
    int at = random.nextInt(in.length);
    switch (random.nextInt(7)) {
      case 0 -> { // flip one to eight bits
        out = in.clone();
        for (int i = random.nextInt(8) + 1; i > 0; i--) {
          int p = random.nextInt(out.length);
          out[p] ^= (byte) (1 << random.nextInt(8));
        }
      }
      case 1 -> { // overwrite a byte with a varint-significant value
        out = in.clone();
        int[] special = {0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x81};
        out[at] = (byte) special[random.nextInt(special.length)];
      }
      case 2 -> out = java.util.Arrays.copyOf(in, at); // truncate
      case 3 -> { // splice: this record's prefix, another position's suffix
        int from = random.nextInt(in.length);
        out =
            concat(
                java.util.Arrays.copyOf(in, at), java.util.Arrays.copyOfRange(in, from, in.length));
      }
      case 4 -> { // insert random bytes
        byte[] noise = new byte[random.nextInt(8) + 1];
        random.nextBytes(noise);
        out =
            concat(
                concat(java.util.Arrays.copyOf(in, at), noise),
                java.util.Arrays.copyOfRange(in, at, in.length));
      }
      case 5 -> { // duplicate a run
        int end = Math.min(in.length, at + random.nextInt(16) + 1);
        byte[] run = java.util.Arrays.copyOfRange(in, at, end);
        out =
            concat(
                concat(java.util.Arrays.copyOf(in, end), run),
                java.util.Arrays.copyOfRange(in, end, in.length));
      }
      default -> { // overwrite with a hostile varint
        byte[] varint =
            new AvroBytes().varint(HOSTILE[random.nextInt(HOSTILE.length)]).toByteArray();
        out =
            concat(
                concat(java.util.Arrays.copyOf(in, at), varint),
                java.util.Arrays.copyOfRange(in, Math.min(in.length, at + 1), in.length));
      }
    }
    return out;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static long usedAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }

  /** Writes fields, replacing a varint by a hostile value now and then. */
  private static final class Writer {
    private final java.util.ArrayDeque<AvroBytes> buffers = new java.util.ArrayDeque<>();
    private final SplittableRandom random;

    Writer(SplittableRandom random) {
      this.random = random;
      buffers.push(new AvroBytes());
    }

    AvroBytes out() {
      return buffers.peek();
    }

    void varint(long value) {
      out().varint(random.nextInt(40) == 0 ? HOSTILE[random.nextInt(HOSTILE.length)] : value);
    }

    void string(String value) {
      bytes(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    void bytes(byte[] value) {
      varint(value.length);
      out().raw(value);
    }

    /** An array or map: one block, or now and then a negative count with the block's size. */
    void blocks(int items, java.util.function.IntConsumer item) {
      if (items > 0 && random.nextInt(10) == 0) {
        buffers.push(new AvroBytes()); // write the items apart to learn their size
        for (int i = 0; i < items; i++) {
          item.accept(i);
        }
        byte[] block = buffers.pop().toByteArray();
        varint(-items);
        varint(block.length);
        out().raw(block);
      } else if (items > 0) {
        varint(items);
        for (int i = 0; i < items; i++) {
          item.accept(i);
        }
      }
      varint(0);
    }
  }
}
