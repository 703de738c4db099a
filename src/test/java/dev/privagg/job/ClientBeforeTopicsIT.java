package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.client.PrivaggClient;
import dev.privagg.io.KafkaConnection;
import dev.privagg.job.kafka.KafkaPreflight;
import dev.privagg.sim.EmbeddedKafka;
import dev.privagg.spec.JobSpec;
import dev.privagg.spec.JobSpecReader;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/**
 * A client (the library, {@code privagg consume}) may start before the job has created its topics:
 * it waits for them, creates none, and the job then starts on topics of its own making.
 */
class ClientBeforeTopicsIT {
  private static final String SPEC = SecuredBroker.exactSpec("early.");

  private static void pollBeforeTheJob(JobSpec spec, KafkaConnection client, KafkaConnection job)
      throws Exception {
    try (PrivaggClient c = new PrivaggClient(spec, client)) {
      c.poll(Duration.ofMillis(200));
      c.poll(Duration.ofMillis(200));
    }
    try (Admin admin = Admin.create(job.clientProperties())) {
      assertThat(admin.listTopics().names().get()).noneMatch(n -> n.startsWith("early."));
    }
    assertThat(KafkaPreflight.prepareKafka(job, List.of(spec), 2)).contains(spec.topics().rounds());
  }

  @Test
  void onAPlaintextBroker_theClientCreatesNoTopic() throws Exception {
    JobSpec spec = JobSpecReader.parse("early", SPEC);
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      pollBeforeTheJob(spec, kafka.connection(), kafka.connection());
    }
  }

  @Test
  void onASecuredBroker_theClientWaitsWithItsReadAclsOnly() throws Exception {
    JobSpec spec = JobSpecReader.parse("early", SPEC);
    try (SecuredBroker broker = SecuredBroker.start()) {
      broker.allowJob("job", "early.", true);
      for (String topic : List.of(spec.topics().rounds(), spec.topics().models())) {
        broker.allow("client", ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ);
      }
      pollBeforeTheJob(spec, broker.as("client"), broker.as("job"));
    }
  }
}
