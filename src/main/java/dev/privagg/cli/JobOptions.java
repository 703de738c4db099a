package dev.privagg.cli;

import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaAccess;
import dev.privagg.io.KafkaConnection;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.acl.AclOperation;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A job and its broker, as a client names them: {@code --spec}, {@code --bootstrap-servers} and
 * {@code --kafka-properties}.
 */
final class JobOptions {
  @Option(
      names = "--spec",
      required = true,
      paramLabel = "FILE",
      description = "The job's spec (YAML).")
  Path specFile;

  @Mixin BrokerOptions brokers;

  /** The connection to the brokers, with the {@code --kafka-properties} settings. */
  KafkaConnection connection() {
    return brokers.connection();
  }

  /**
   * A client of {@code jobSpec} once the brokers answered and allow what it will do: READ on the
   * rounds and models topics, and WRITE on the updates topic when {@code sends}.
   */
  PrivaggClient client(JobSpec jobSpec, boolean sends) {
    KafkaConnection kafka = connection();
    JobSpec.Topics t = jobSpec.topics();
    Map<String, Set<AclOperation>> needs = new LinkedHashMap<>();
    needs.put(t.rounds(), Set.of(AclOperation.READ));
    needs.put(t.models(), Set.of(AclOperation.READ));
    if (sends) {
      needs.put(t.updates(), Set.of(AclOperation.WRITE));
    }
    KafkaAccess.require(kafka, KafkaAccess.Needs.topics(needs));
    return new PrivaggClient(jobSpec, kafka);
  }

  JobSpec read() {
    return JobSpecReader.read(specFile);
  }
}
