package dev.privagg.cli;

import dev.privagg.io.KafkaAccess;
import dev.privagg.spec.JobSpec;
import dev.privagg.status.JobStatus;
import dev.privagg.status.RoundRecord;
import dev.privagg.status.StatusFollower;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.kafka.common.acl.AclOperation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code privagg status}: where a running job stands, read from its topics. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Where a running job stands, read from its ledger, rounds and rejects topics"
          + " (read_committed): rounds released, withheld, skipped; epsilon spent and remaining;"
          + " how many more rounds the budget pays for; the open round and its deadline; updates"
          + " summed per round; rejected updates by reason.",
      "With --follow it then prints a line per round as the job decides it, until the budget is"
          + " spent or Ctrl-C.",
      "It needs READ on those topics (operator-internal: the ledger holds exact counts). To"
          + " forecast a budget without a job, use privagg budget-calc."
    })
final class StatusCommand implements Callable<Integer>, KafkaCommand {
  @Spec CommandSpec spec;

  @Mixin JobOptions job;

  @Option(
      names = "--follow",
      description =
          "After the status, print each round as the job decides it, until the budget is spent"
              + " or Ctrl-C.")
  boolean follow;

  @Option(
      names = "--timeout",
      defaultValue = "30s",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "How long to wait for the broker and to read the topics to their end (default 30s).")
  Duration timeout;

  @Mixin JsonOption json;

  @Override
  public Integer call() {
    JobSpec jobSpec = job.read();
    JobSpec.Topics t = jobSpec.topics();
    Map<String, Set<AclOperation>> needs = new LinkedHashMap<>();
    for (String topic : new String[] {t.ledger(), t.rounds(), t.rejects()}) {
      needs.put(topic, Set.of(AclOperation.READ));
    }
    KafkaAccess.require(kafka(), KafkaAccess.Needs.topics(needs));
    PrintWriter out = spec.commandLine().getOut();
    try (StatusFollower follower = new StatusFollower(kafka(), jobSpec, timeout)) {
      if (!follower.catchUp(timeout, r -> {})) {
        throw new IllegalStateException(
            "could not read the topics of job "
                + jobSpec.jobId()
                + " to their end within "
                + timeout.toSeconds()
                + " s; fix: check the broker, or give a longer --timeout");
      }
      long now = System.currentTimeMillis();
      JobStatus status = follower.tracker().snapshot();
      Output.print(
          out,
          json.enabled,
          StatusText.fields(status, now),
          StatusText.text(status, jobSpec.rounds().timeoutMillis(), now));
      while (follow && !follower.tracker().exhausted()) {
        follower.poll(Duration.ofMillis(500), r -> printRound(out, jobSpec, follower, r));
      }
    }
    return 0;
  }

  private void printRound(
      PrintWriter out, JobSpec jobSpec, StatusFollower follower, RoundRecord r) {
    if (json.enabled) {
      Output.line(out, StatusText.roundFields(jobSpec.jobId(), r));
    } else {
      out.println(StatusText.round(jobSpec, follower.tracker(), r));
    }
    out.flush();
  }

  @Override
  public dev.privagg.io.KafkaConnection kafka() {
    return job.connection();
  }

  @Override
  public String attempt() {
    return "read the job's topics";
  }
}
