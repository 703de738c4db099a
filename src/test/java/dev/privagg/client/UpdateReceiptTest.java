package dev.privagg.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.privagg.avro.RoundAnnouncement;
import java.util.OptionalLong;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;

/**
 * What {@link PrivaggClient#send} makes of the broker's acknowledgement (issue 37: a late update
 * went to the operator-only rejects topic while the client reported nothing).
 */
class UpdateReceiptTest {
  private static final long DEADLINE = 1_700_000_030_000L;
  private static final RoundAnnouncement ROUND_3 =
      new RoundAnnouncement("job", 3L, 2L, DEADLINE, false);

  private static RecordMetadata appendedAt(long millis) {
    return new RecordMetadata(new TopicPartition("privagg.updates", 1), 41, 1, millis, 5, 900);
  }

  @Test
  void anUpdateAppendedBeforeTheDeadline_getsAReceiptSayingWhereAndHowEarly() {
    UpdateReceipt receipt =
        UpdateReceipt.of(3, appendedAt(DEADLINE - 2_500), ROUND_3).requireInTime("alice");

    assertThat(receipt)
        .isEqualTo(
            new UpdateReceipt(
                3, 1, 42, OptionalLong.of(DEADLINE - 2_500), OptionalLong.of(DEADLINE)));
    assertThat(receipt.millisBeforeDeadline()).hasValue(2_500);
  }

  @Test
  void anUpdateAppendedAfterTheDeadline_throwsSayingByHowMuch_withTheReceipt() {
    UpdateReceipt late = UpdateReceipt.of(3, appendedAt(DEADLINE + 2_000), ROUND_3);

    assertThatThrownBy(() -> late.requireInTime("alice"))
        .isInstanceOf(LateUpdateException.class)
        .hasMessage(
            "the update of alice for round 3 reached the broker 2.000 s after the round's deadline"
                + " (by the broker's clock, which the job decides by): the job rejects it as stale."
                + " Train faster, or join only rounds with enough time left")
        .extracting(e -> ((LateUpdateException) e).receipt())
        .isEqualTo(late);
  }

  @Test
  void anUpdateAppendedAtTheDeadline_isLate_asARoundTakesUpdatesBeforeIt() {
    UpdateReceipt atDeadline = UpdateReceipt.of(3, appendedAt(DEADLINE), ROUND_3);

    assertThatThrownBy(() -> atDeadline.requireInTime("alice"))
        .isInstanceOf(LateUpdateException.class)
        .hasMessageContaining("0.000 s after the round's deadline");
  }

  @Test
  void withoutTheRoundsAnnouncement_nothingIsChecked() {
    UpdateReceipt receipt =
        UpdateReceipt.of(3, appendedAt(DEADLINE + 60_000), null).requireInTime("alice");

    assertThat(receipt.deadlineMillis()).isEmpty();
    assertThat(receipt.millisBeforeDeadline()).isEmpty();
  }

  @Test
  void withoutABrokerTimestamp_nothingIsChecked() {
    UpdateReceipt receipt =
        UpdateReceipt.of(3, appendedAt(RecordBatch.NO_TIMESTAMP), ROUND_3).requireInTime("alice");

    assertThat(receipt.appendedMillis()).isEmpty();
  }
}
