package dev.privagg.cli;

import dev.privagg.io.KafkaAccess;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Entry point of the {@code privagg} command-line tool. */
@Command(
    name = "privagg",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Differentially private federated aggregation: privacy math and job tools.",
    subcommands = {
      EpsilonCommand.class,
      PlanCommand.class,
      MechanismCommand.class,
      SigmaCommand.class,
      StatusCommand.class,
      RunCommand.class,
      SimulateCommand.class,
      DemoCommand.class,
      EvaluateCommand.class,
      EvaluateStatisticsCommand.class,
      ProduceCommand.class,
      ConsumeCommand.class,
      CanariesCommand.class,
      AuditCommand.class,
      ClusterCommands.Submit.class,
      ClusterCommands.Jobs.class,
      ClusterCommands.Cancel.class,
      ClusterCommands.Savepoint.class,
      BenchCommand.class,
      SecAggCostCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  public static void main(String[] args) {
    System.exit(
        execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs the tool with the given streams and returns its exit code (0 ok, 1 failed, 2 usage). */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new Main());
    cli.setOut(out);
    cli.setErr(err);
    cli.setExecutionExceptionHandler(
        (ex, commandLine, parseResult) -> {
          // A Kafka failure first: kafka() reads the properties file, which may be what failed.
          if (commandLine.getCommand() instanceof KafkaCommand command
              && KafkaAccess.isKafkaFailure(ex)
              && command.kafka() != null) {
            commandLine
                .getErr()
                .println(
                    "error: "
                        + KafkaAccess.explain(ex, command.kafka(), command.attempt()).getMessage());
            return 1;
          }
          if (ex instanceof IllegalArgumentException
              || ex instanceof IllegalStateException
              || ex instanceof java.util.concurrent.TimeoutException) {
            commandLine.getErr().println("error: " + ex.getMessage());
            return 1;
          }
          throw ex;
        });
    return cli.execute(args);
  }

  /** Reports the version from the jar manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = Main.class.getPackage().getImplementationVersion();
      return new String[] {"privagg " + (version == null ? "dev" : version)};
    }
  }
}
