package dev.privagg.bench;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.PrivacyCharge;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.avro.Tensor;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import dev.privagg.io.UpdateReader;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decode of a client update as the decode step does it (bounded read, then check every value is
 * finite in place; the values travel on as bytes), next to Avro's own decoder on the same bytes,
 * the aggregator's copy of those bytes into float32 values, and encode of a released model, for
 * {@code dimension} float32 parameters.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx2g"})
public class CodecBenchmark {
  @Param({"1000000"})
  int dimension;

  private static final UpdateReader.Limits LIMITS = new UpdateReader.Limits(256, 4096, 1, 1, 64);

  private byte[] updateBytes;
  private byte[] tensorBytes;
  private float[] values;
  private GlobalModel model;

  @Setup
  public void setUp() {
    values = new float[dimension];
    SplittableRandom random = new SplittableRandom(1);
    for (int i = 0; i < dimension; i++) {
      values[i] = (float) random.nextGaussian();
    }
    Tensor tensor = new Tensor("w", List.of(dimension), Float32.write(values, 0, dimension));
    tensorBytes = Float32.write(values, 0, dimension).array();
    updateBytes =
        AvroCodec.encode(new ClientUpdate("bench", 1L, "client-1", List.of(tensor), null));
    PrivacyStatement privacy =
        new PrivacyStatement(
            1.0,
            1e-5,
            "rdp",
            1.0,
            1.0,
            0.2,
            "server-poisson",
            "keyed",
            "add-remove-one",
            8.0,
            1.0,
            List.of(new PrivacyCharge("POISSON_SAMPLED_GAUSSIAN", 1.0, 0.2, 1L)),
            null,
            null);
    model = new GlobalModel("bench", 1L, List.of(tensor), privacy, null);
  }

  /** The job's decode: every declared length checked before allocation (UpdateReader). */
  @Benchmark
  public int decodeUpdate() throws Exception {
    ClientUpdate update = UpdateReader.read(updateBytes, job -> LIMITS);
    return Float32.firstNonFinite(Float32.bytes(update.getTensors().get(0).getData()));
  }

  /**
   * The decode of a job with adaptive clipping: the same, plus the update's L2 norm for the round
   * decider's count of unclipped updates (one more pass over the bytes).
   */
  @Benchmark
  public double decodeUpdateWithNorm() throws Exception {
    ClientUpdate update = UpdateReader.read(updateBytes, job -> LIMITS);
    byte[] data = Float32.bytes(update.getTensors().get(0).getData());
    return Float32.firstNonFinite(data) + Math.sqrt(Float32.sumOfSquares(data));
  }

  /** Avro's own decoder on the same bytes, for comparison (unsafe on client input). */
  @Benchmark
  public int decodeUpdateAvro() throws Exception {
    ClientUpdate update = ClientUpdate.getDecoder().decode(updateBytes);
    return Float32.firstNonFinite(Float32.bytes(update.getTensors().get(0).getData()));
  }

  @Benchmark
  public float bytesToValues() {
    Float32.read(java.nio.ByteBuffer.wrap(tensorBytes), values, 0, dimension);
    return values[dimension - 1];
  }

  @Benchmark
  public int encodeModel() {
    return AvroCodec.encode(model).length;
  }
}
