package dev.privagg.cli;

import dev.privagg.bench.SecAggCost;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg secagg-cost}: what secure aggregation costs against plaintext mode. */
@Command(
    name = "secagg-cost",
    mixinStandardHelpOptions = true,
    description = {
      "What secure aggregation costs against plaintext mode, measured side by side in one process.",
      "No Kafka, no Flink: a roster of m clients on the graph the job would choose runs the six"
          + " phases, --dropout-rate of them dropping out after phase 2; the same updates go"
          + " through plaintext mode's encode and the job's clip and sum. Reports the Avro bytes"
          + " each client sends and reads, its CPU per phase, and the job's CPU on the round's"
          + " values (sum, reconstruction, mask correction), each a median over clients and"
          + " --rounds; fails if the unmasked sum differs from the plaintext sum of the"
          + " survivors. Progress goes to stderr."
    })
final class SecAggCostCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--dimension",
      split = ",",
      defaultValue = "10000,1000000",
      paramLabel = "D",
      description = "Model sizes d in float32 parameters (default 10000,1000000).")
  List<Integer> dimensions;

  @Option(names = "--clients", defaultValue = "100", description = "Roster size m (default 100).")
  int clients;

  @Option(
      names = "--dropout-rate",
      defaultValue = "0.1",
      description =
          "Fraction of the roster (rounded down) that drops out after phase 2, so the job"
              + " reconstructs their mask keys; also the spec's aggregation.maxDropoutRate"
              + " (default 0.1).")
  double dropoutRate;

  @Option(
      names = "--adversarial-client-rate",
      defaultValue = "0.1",
      description = "The spec's aggregation.adversarialClientRate (default 0.1).")
  double adversarialClientRate;

  @Option(
      names = {"--rounds", "--repetitions"},
      defaultValue = "3",
      description = "Measured rounds per d; each figure is their median (default 3).")
  int rounds;

  @Option(
      names = "--warmup-rounds",
      defaultValue = "1",
      description =
          "Untimed rounds per d before the measured ones, so that the JIT has compiled the"
              + " hot loops (default 1).")
  int warmupRounds;

  @Option(
      names = "--bits",
      defaultValue = "64",
      description =
          "64 (default): secure rounds whose noise the job adds. 8 to 32: distributed noise, each"
              + " client adding a discrete Gaussian share (noise multiplier 1) on words of this"
              + " many bits (aggregation.bitsPerCoordinate).")
  int bits;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    List<SecAggCost.Settings> settings = settings();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    for (SecAggCost.Settings s : settings) {
      SecAggCost.Result result =
          SecAggCost.run(
              s,
              line -> {
                err.println(line);
                err.flush();
              });
      if (json.enabled) {
        Output.line(out, fields(result));
      } else {
        out.println(text(result));
        out.flush();
      }
    }
    return 0;
  }

  List<SecAggCost.Settings> settings() {
    Flags flags = new Flags(spec);
    dimensions.forEach(d -> flags.atLeastOne("--dimension", d));
    flags.atLeastOne("--clients", clients);
    if (clients < 2) {
      throw flags.fail("--clients must be >= 2, was " + clients);
    }
    flags.atLeastOne("--rounds", rounds);
    if (warmupRounds < 0) {
      throw flags.fail("--warmup-rounds must be >= 0, was " + warmupRounds);
    }
    if (!(dropoutRate >= 0 && dropoutRate < 1)) {
      throw flags.fail("--dropout-rate must be in [0, 1), was " + dropoutRate);
    }
    if (!(adversarialClientRate >= 0 && adversarialClientRate < 1)) {
      throw flags.fail("--adversarial-client-rate must be in [0, 1), was " + adversarialClientRate);
    }
    if (!(dropoutRate + adversarialClientRate <= 0.9)) {
      throw flags.fail(
          "--dropout-rate + --adversarial-client-rate must be <= 0.9, was "
              + (dropoutRate + adversarialClientRate));
    }
    if (bits != 64 && (bits < 8 || bits > 32)) {
      throw flags.fail("--bits must be 64 or in [8, 32], was " + bits);
    }
    List<SecAggCost.Settings> out = new ArrayList<>();
    for (int d : dimensions) {
      out.add(
          new SecAggCost.Settings(
              d, clients, dropoutRate, adversarialClientRate, warmupRounds, rounds, bits));
    }
    return out;
  }

  static Map<String, Object> fields(SecAggCost.Result r) {
    SecAggCost.Bytes b = r.bytes();
    SecAggCost.ClientCpu c = r.clientCpu();
    SecAggCost.ServerCpu s = r.serverCpu();
    return Output.fields(
        "dimension", r.settings().dimension(),
        "bits", r.settings().bits(),
        "clients", r.settings().clients(),
        "dropped", r.settings().dropped(),
        "survivors", r.survivors(),
        "warmupRounds", r.settings().warmupRounds(),
        "rounds", r.settings().repetitions(),
        "neighbourhoodSize", r.neighbourhoodSize(),
        "threshold", r.threshold(),
        "bytesPerClient",
            Output.fields(
                "plaintextUp", b.plaintextUp(),
                "secureUp", b.secureUp(),
                "secureDown", b.secureDown(),
                "advertiseUp", b.advertiseUp(),
                "shareKeysUp", b.shareKeysUp(),
                "maskedInputUp", b.maskedInputUp(),
                "signatureUp", b.signatureUp(),
                "unmaskUp", b.unmaskUp(),
                "openedDown", b.openedDown(),
                "rosterDown", b.rosterDown(),
                "sharesDown", b.sharesDown(),
                "survivorsDown", b.survivorsDown(),
                "consistencyDown", b.consistencyDown(),
                "expansionUp", b.expansionUp(),
                "expansionTotal", b.expansionTotal()),
        "clientCpuMillis",
            Output.fields(
                "plaintextEncode", c.plaintextEncode(),
                "advertise", c.advertise(),
                "onRoster", c.onRoster(),
                "onShares", c.onShares(),
                "quantize", c.quantize(),
                "maskedInput", c.maskedInput(),
                "sign", c.sign(),
                "unmask", c.unmask(),
                "encode", c.encode(),
                "secureTotal", c.secureTotal(),
                "ratio", Output.number(c.ratio())),
        "serverCpuMillis",
            Output.fields(
                "plaintextSum", s.plaintextSum(),
                "maskedSum", s.maskedSum(),
                "signatures", s.signatures(),
                "reconstruct", s.reconstruct(),
                "correction", s.correction(),
                "correctionTerms", s.correctionTerms(),
                "secureTotal", s.secureTotal(),
                "ratio", Output.number(s.ratio())));
  }

  static String text(SecAggCost.Result r) {
    SecAggCost.Bytes b = r.bytes();
    SecAggCost.ClientCpu c = r.clientCpu();
    SecAggCost.ServerCpu s = r.serverCpu();
    StringBuilder t = new StringBuilder();
    t.append(
        String.format(
            "d %d, m %d (%d dropped after phase 2); graph: neighbourhoods of %d (%d neighbours),"
                + " threshold %d; medians of %d rounds%n",
            r.settings().dimension(),
            r.settings().clients(),
            r.settings().dropped(),
            r.neighbourhoodSize(),
            r.neighbourhoodSize() - 1,
            r.threshold(),
            r.settings().repetitions()));
    t.append(
        String.format(
            "  bytes per client: plaintext up %,d; secure up %,d (advertise %,d, share keys %,d,"
                + " masked input %,d, signature %,d, unmask %,d), down %,d (opened %,d, roster %,d,"
                + " shares %,d, survivors %,d, signatures %,d); expansion %.3fx up, %.3fx up +"
                + " down%n",
            b.plaintextUp(),
            b.secureUp(),
            b.advertiseUp(),
            b.shareKeysUp(),
            b.maskedInputUp(),
            b.signatureUp(),
            b.unmaskUp(),
            b.secureDown(),
            b.openedDown(),
            b.rosterDown(),
            b.sharesDown(),
            b.survivorsDown(),
            b.consistencyDown(),
            b.expansionUp(),
            b.expansionTotal()));
    t.append(
        String.format(
            "  client CPU ms: plaintext encode %.3f; secure %.3f (advertise %.3f, onRoster %.3f,"
                + " onShares %.3f, quantize %.3f, maskedInput %.3f, sign %.3f, unmask (signatures"
                + " checked) %.3f, encode %.3f);"
                + " %.1fx%n",
            c.plaintextEncode(),
            c.secureTotal(),
            c.advertise(),
            c.onRoster(),
            c.onShares(),
            c.quantize(),
            c.maskedInput(),
            c.sign(),
            c.unmask(),
            c.encode(),
            c.ratio()));
    t.append(
        String.format(
            "  job CPU ms per round: plaintext clip and sum %.1f; secure %.1f (masked sum %.1f,"
                + " signatures %.1f, reconstruct %.1f, correction of %d masks %.1f); %.1fx",
            s.plaintextSum(),
            s.secureTotal(),
            s.maskedSum(),
            s.signatures(),
            s.reconstruct(),
            s.correctionTerms(),
            s.correction(),
            s.ratio()));
    return t.toString();
  }
}
