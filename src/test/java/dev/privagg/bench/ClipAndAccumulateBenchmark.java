package dev.privagg.bench;

import dev.privagg.privacy.ClippedSum;
import dev.privagg.privacy.ClippingPolicy;
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
 * Clip-and-accumulate of one client update of {@code dimension} float32 values into the fixed-point
 * round sum: the per-update hot path of a round. GB/s of payload = 4 * dimension / (time per op).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx2g"})
public class ClipAndAccumulateBenchmark {
  @Param({"1000000"})
  int dimension;

  @Param({"flat", "perLayer"})
  String clipping;

  private float[][] update;
  private ClippedSum sum;

  @Setup
  public void setUp() {
    SplittableRandom random = new SplittableRandom(1);
    int[] sizes = {dimension / 2, dimension / 4, dimension - dimension / 2 - dimension / 4};
    update = new float[sizes.length][];
    for (int t = 0; t < sizes.length; t++) {
      update[t] = new float[sizes[t]];
      for (int i = 0; i < sizes[t]; i++) {
        update[t][i] = (float) random.nextGaussian();
      }
    }
    ClippingPolicy policy =
        clipping.equals("flat")
            ? ClippingPolicy.flat(1.0)
            : ClippingPolicy.perLayer(1.0, sizes, ClippingPolicy.LayerSplit.EQUAL);
    sum = new ClippedSum(policy, sizes);
  }

  @Benchmark
  public long clipAndAccumulate() {
    if (sum.contributions() == ClippedSum.MAX_CONTRIBUTIONS - 1) {
      setUp();
    }
    sum.add(update);
    return sum.contributions();
  }
}
