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
      BudgetCalcCommand.class,
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
    // The error and where to look, not the whole usage text that would bury it.
    cli.setParameterExceptionHandler(
        (ex, given) -> {
          CommandLine c = ex.getCommandLine();
          c.getErr().println(ex.getMessage());
          CommandLine.UnmatchedArgumentException.printSuggestions(ex, c.getErr());
          c.getErr()
              .println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for the options.");
          return c.getCommandSpec().exitCodeOnInvalidInput();
        });
    return cli.execute(args);
  }

  /** Reports the project's version (the build writes it into privagg-version.properties). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws java.io.IOException {
      java.util.Properties p = new java.util.Properties();
      try (java.io.InputStream in = Main.class.getResourceAsStream("/privagg-version.properties")) {
        if (in != null) {
          p.load(in);
        }
      }
      return new String[] {"privagg " + p.getProperty("version", "dev")};
    }
  }
}
