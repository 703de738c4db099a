package dev.privagg.bench;

import dev.privagg.privacy.NoiseSource;
import java.util.HexFormat;
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

/** Gaussian noise for one release of {@code coordinates} values, per noise source. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx2g"})
public class NoiseBenchmark {
  @Param({"10000000"})
  int coordinates;

  @Param({"secure", "keyed"})
  String source;

  private NoiseSource noise;
  private double[] target;
  private long round;

  @Setup
  public void setUp() {
    noise =
        source.equals("secure")
            ? NoiseSource.secure()
            : NoiseSource.keyed(
                HexFormat.of()
                    .parseHex("62656e63686d61726b2d6b65792d6e6f742d7365637265742d30303030303030"));
    target = new double[coordinates];
  }

  @Benchmark
  public double addNoise() {
    noise.forRound("bench", round++).addGaussian(target, 0.5);
    return target[0];
  }
}
