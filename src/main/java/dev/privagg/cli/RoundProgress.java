package dev.privagg.cli;

import dev.privagg.sim.Simulation;
import java.io.PrintWriter;
import java.util.Map;

/** A simulated round as the simulation commands show it: a line for people, fields for JSON. */
final class RoundProgress {
  private RoundProgress() {}

  /** A round as a JSON line's fields ({@code "type": "round"}). */
  static Map<String, Object> fields(Simulation.RoundResult r) {
    return Output.fields(
        "type", "round",
        "round", r.round(),
        "clientsSent", r.clientsSent(),
        "sentAfterDeadline", r.sentAfterDeadline(),
        "epsilon", Output.number(r.epsilon()),
        "accuracy", Output.number(r.accuracy()),
        "clipNorm", Output.number(r.clipNorm()),
        "millis", r.millis());
  }

  static void print(PrintWriter out, Simulation.RoundResult r) {
    out.printf(
        "round %3d  clients sent %4d%s  epsilon %-9s test accuracy %.4f  (%.1f s)%n",
        r.round(),
        r.clientsSent(),
        r.sentAfterDeadline() ? " (late)" : "",
        Text.number(r.epsilon()),
        r.accuracy(),
        r.millis() / 1000.0);
    out.flush();
  }
}
