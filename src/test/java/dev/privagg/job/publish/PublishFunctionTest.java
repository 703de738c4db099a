package dev.privagg.job.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.job.InternalRelease;
import dev.privagg.job.OutboundRecord;
import dev.privagg.job.PublicRounds;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

class PublishFunctionTest {
  private static final PublicRounds.Run RUN = new PublicRounds.Run(1_000, "self");
  private static final PublicRounds.Run LATER = new PublicRounds.Run(9_000, "later");
  private static final PublicRounds.Run EARLIER = new PublicRounds.Run(500, "earlier");

  private static KeyedOneInputStreamOperatorTestHarness<String, InternalRelease, OutboundRecord>
      harness(Map<String, PublicRounds.Position> published, OperatorSubtaskState restore)
          throws Exception {
    var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(
                new PublishFunction(
                    Set.of("privagg.models", "privagg.rounds"), Set.of("j"), published, RUN)),
            InternalRelease::positionKey,
            Types.STRING);
    if (restore != null) {
      h.initializeState(restore);
    }
    h.open();
    return h;
  }

  private static StreamRecord<InternalRelease> release(
      String topic, String job, long round, byte[] value, PublicRounds.Run by) {
    InternalRelease r = new InternalRelease();
    r.publicTopic = topic;
    r.jobId = job;
    r.round = round;
    r.value = value;
    r.run = by.encode();
    return new StreamRecord<>(r);
  }

  private static List<String> published(
      KeyedOneInputStreamOperatorTestHarness<String, InternalRelease, OutboundRecord> h) {
    return h.extractOutputValues().stream()
        .map(r -> r.topic + ":" + new String(r.key) + ":" + r.value[0])
        .toList();
  }

  @Test
  void copiesEachRoundOnce_byteForByte_andWithholdsASecondPayloadForARound() throws Exception {
    try (var h = harness(Map.of(), null)) {
      h.processElement(release("privagg.models", "j", 1, new byte[] {11}, RUN));
      h.processElement(release("privagg.rounds", "j", 2, new byte[] {21}, RUN));
      h.processElement(release("privagg.models", "j", 1, new byte[] {11}, RUN)); // replayed
      h.processElement(release("privagg.models", "j", 1, new byte[] {12}, EARLIER)); // another
      h.processElement(release("privagg.models", "other", 1, new byte[] {13}, RUN)); // not ours
      h.processElement(release("privagg.old-models", "j", 7, new byte[] {14}, RUN)); // renamed
      assertThat(published(h)).containsExactly("privagg.models:j:11", "privagg.rounds:j:21");
    }
  }

  @Test
  void aFreshPublisher_startsAboveWhatThePublicTopicsHold_andARestoredOneFromItsState()
      throws Exception {
    Map<String, PublicRounds.Position> onTopic =
        Map.of(
            "privagg.models/j",
            new PublicRounds.Position(3, PublishFunction.digest(new byte[] {33})));
    OperatorSubtaskState snapshot;
    try (var h = harness(onTopic, null)) {
      h.processElement(release("privagg.models", "j", 2, new byte[] {22}, RUN));
      h.processElement(release("privagg.models", "j", 3, new byte[] {33}, RUN));
      h.processElement(release("privagg.models", "j", 4, new byte[] {44}, RUN));
      assertThat(published(h)).containsExactly("privagg.models:j:44");
      snapshot = h.snapshot(1, 1);
    }
    try (var h = harness(Map.of(), snapshot)) {
      h.processElement(release("privagg.models", "j", 4, new byte[] {44}, RUN)); // replayed
      h.processElement(release("privagg.models", "j", 5, new byte[] {55}, RUN));
      assertThat(published(h)).containsExactly("privagg.models:j:55");
    }
  }

  @Test
  void aNewerRunsRelease_stopsThisJobForGood_withAMessageNamingBothRuns() throws Exception {
    try (var h = harness(Map.of(), null)) {
      h.processElement(release("privagg.models", "j", 1, new byte[] {11}, RUN));
      assertThatThrownBy(
              () -> h.processElement(release("privagg.models", "j", 2, new byte[] {22}, LATER)))
          .isInstanceOf(SuppressRestartsException.class)
          .hasStackTraceContaining("job id j is now served by another Flink job")
          .hasStackTraceContaining(LATER.encode())
          .hasStackTraceContaining(RUN.encode());
      assertThat(published(h)).containsExactly("privagg.models:j:11");
    }
  }

  @Test
  void aBudgetSpentRecordForAPublicRound_isLeftOut_withoutStoppingTheJob() throws Exception {
    byte[] open =
        dev.privagg.io.AvroCodec.encode(
            new dev.privagg.avro.RoundAnnouncement("j", 3L, 2L, 3_000L, false));
    byte[] spent =
        dev.privagg.io.AvroCodec.encode(
            new dev.privagg.avro.RoundAnnouncement("j", 3L, 2L, 0L, true));
    try (var h = harness(Map.of(), null)) {
      h.processElement(release("privagg.rounds", "j", 3, open, RUN));
      h.processElement(release("privagg.rounds", "j", 3, spent, RUN));
      h.processElement(release("privagg.rounds", "j", 2, spent, RUN));
      assertThat(h.extractOutputValues()).hasSize(1);
      h.processElement(release("privagg.rounds", "j", 4, spent, RUN));
      assertThat(h.extractOutputValues()).hasSize(2);
      h.processElement(release("privagg.rounds", "j", 4, spent, RUN)); // replayed: same bytes
      assertThat(h.extractOutputValues()).hasSize(2);
    }
  }

  @Test
  void thisRunRecomputingAPublicRoundWithOtherBytes_stopsThisJobForGood() throws Exception {
    Map<String, PublicRounds.Position> onTopic =
        Map.of(
            "privagg.models/j",
            new PublicRounds.Position(3, PublishFunction.digest(new byte[] {33})));
    try (var h = harness(onTopic, null)) {
      assertThatThrownBy(
              () -> h.processElement(release("privagg.models", "j", 3, new byte[] {34}, RUN)))
          .isInstanceOf(SuppressRestartsException.class)
          .hasStackTraceContaining("computed round 3 again with other bytes");
      assertThat(published(h)).isEmpty();
    }
  }

  @Test
  void aPublisherRestoredFromAnOlderSavepoint_startsAboveWhatThePublicTopicNowHolds()
      throws Exception {
    OperatorSubtaskState old;
    try (var h = harness(Map.of(), null)) {
      h.processElement(release("privagg.models", "j", 1, new byte[] {11}, RUN));
      old = h.snapshot(1, 1);
    }
    Map<String, PublicRounds.Position> now =
        Map.of(
            "privagg.models/j",
            new PublicRounds.Position(5, PublishFunction.digest(new byte[] {55})));
    try (var h = harness(now, old)) {
      h.processElement(release("privagg.models", "j", 4, new byte[] {44}, RUN));
      h.processElement(release("privagg.models", "j", 6, new byte[] {66}, RUN));
      assertThat(published(h)).containsExactly("privagg.models:j:66");
    }
  }
}
