package dev.privagg.bench;

import dev.privagg.privacy.Accountant;
import dev.privagg.privacy.BudgetStatus;
import dev.privagg.privacy.PrivacyEvent;
import dev.privagg.privacy.PrivacyLedger;
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
 * The accounting work of one round as the round aggregator does it, on a ledger that already holds
 * {@code rounds} rounds built by one append per round: closing the round checks that one more round
 * fits, appends the charge and derives epsilon for the released model; opening the next round
 * checks the fit again. The accountant is looked up by name each time, as the operator does. The
 * ledger's checkpoint encoding is left out (it is package-private to the job).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx1g"})
public class AccountingBenchmark {
  private static final double DELTA = 1e-5;

  /** Large enough that every round fits, so the whole close-and-open path runs. */
  private static final double BUDGET_EPSILON = 1e9;

  @Param({"10", "10000"})
  int rounds;

  @Param({"rdp", "pld", "advanced", "basic"})
  String accountant;

  private final PrivacyEvent charge = PrivacyEvent.sampledGaussian(1.1, 0.01, 1);
  private PrivacyLedger ledger;

  @Setup
  public void setUp() {
    PrivacyLedger built = PrivacyLedger.EMPTY;
    for (int r = 0; r < rounds; r++) {
      built = built.append(charge);
    }
    ledger = built;
  }

  @Benchmark
  public double closeAndOpenRound() {
    Accountant closing = Accountant.named(accountant);
    if (!BudgetStatus.fits(closing, ledger, BUDGET_EPSILON, DELTA, charge)) {
      throw new IllegalStateException("the benchmark budget must cover every round");
    }
    PrivacyLedger charged = ledger.append(charge);
    double epsilon = closing.epsilon(charged, DELTA).epsilon();
    Accountant opening = Accountant.named(accountant);
    if (!BudgetStatus.fits(opening, charged, BUDGET_EPSILON, DELTA, charge)) {
      throw new IllegalStateException("the benchmark budget must cover every round");
    }
    return epsilon;
  }
}
