package dev.privagg.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs privagg commands in-process, for tests outside this package. */
public final class CliTestAccess {
  private CliTestAccess() {}

  public static double epsilon(double z, double q, long rounds, double delta) throws Exception {
    StringWriter out = new StringWriter();
    int code =
        Main.execute(
            new String[] {
              "epsilon",
              "--noise-multiplier",
              Double.toString(z),
              "--sampling-rate",
              Double.toString(q),
              "--rounds",
              Long.toString(rounds),
              "--delta",
              Double.toString(delta),
              "--json"
            },
            new PrintWriter(out),
            new PrintWriter(new StringWriter()));
    if (code != 0) {
      throw new IllegalStateException("privagg epsilon exited " + code);
    }
    return new ObjectMapper().readTree(out.toString()).get("epsilon").asDouble();
  }

  /** What a command printed and its exit code. */
  public record Result(int exitCode, String out, String err) {}

  /** Runs any privagg command in-process, failing or not. */
  public static Result execute(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out), new PrintWriter(err));
    return new Result(code, out.toString(), err.toString());
  }

  /** Runs any privagg command in-process; throws with its error output when it fails. */
  public static String run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.execute(args, new PrintWriter(out), new PrintWriter(err));
    if (code != 0) {
      throw new IllegalStateException("privagg " + args[0] + " exited " + code + ": " + err);
    }
    return out.toString();
  }
}
